// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import BenchKit

// The benchmark lives in BenchKit (so the tests can reach it); this is only the entry point.
BenchCommand.main()
