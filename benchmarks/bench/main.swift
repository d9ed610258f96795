// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import BenchKit

// The benchmark lives in BenchKit (so the tests can reach it); this is only the entry point.
benchApplyHistograms()  // BENCH_RECORD_RUN_TIMES=1: the shared pool records run times (to measure the cost)
BenchCommand.main()
