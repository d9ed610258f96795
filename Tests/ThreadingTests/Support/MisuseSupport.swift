// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import Glibc
import Testing

@testable import Threading

/// The largest `Duration` (about 292 billion years): must saturate, never overflow or trap.
let hugeDuration = Duration.seconds(Int64.max)

/// An exit test's standard error as text.
func exitTestText(_ result: ExitTest.Result?) -> String {
    String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
}

/// In a child process: exits with status 3 after 20 s, so a wait that never ends fails the test instead of
/// hanging it.
func startExitTestWatchdog() {
    let watchdog = try! PosixThread {
        PosixThread.sleep(for: .seconds(20))
        exit(3)
    }
    watchdog.detach()
}
