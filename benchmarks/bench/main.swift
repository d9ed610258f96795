// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import Threading

// Placeholder entry point until the benchmark families land: prints the version.
print("Threading bench \(ThreadingVersion.string)")
