// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import CThreading

// Kept apart so it can be dropped in favour of `PosixThread.isMainThread` once the primitives land.
extension MainQueue {
    /// Whether the calling thread is the process's main thread (on Linux: its thread id equals the process id).
    ///
    /// This answers "which thread", not "which queue": see ``WorkQueue/isCurrent`` for the latter.
    ///
    /// The corresponding C function is `cthr_thread_is_main` (`pthread_main_np` on Apple platforms).
    public static var isMainThread: Bool { EngineThread.isMainThread }
}
