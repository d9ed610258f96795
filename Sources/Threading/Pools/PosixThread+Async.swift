// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import CThreading

extension PosixThread {
    /// Suspends the task until the thread finished and returns what its body returned.
    ///
    /// `pthread_join` has no completion callback, so the join itself runs on a thread of ``WorkerPool/blocking``
    /// while the task is suspended: no cooperative thread blocks.
    ///
    /// Not cancellable: a thread must be joined exactly once and cannot be stopped from outside, so the task waits
    /// for the thread even when cancelled (check `Task.isCancelled` afterwards, or tell the thread's body to stop
    /// yourself).
    ///
    /// - Returns: The body's result.
    /// - Precondition: As for the synchronous `join()`: the handle was neither joined nor detached before (traps
    ///   at once, on the calling thread).
    public func join() async -> sending Result {
        claim("join()", as: 1)
        return await awaitOnBlockingPool { self.joinClaimed() }
    }

    /// Joins a thread whose state this caller already claimed (on a blocking-pool thread).
    private func joinClaimed() -> sending Result {
        let code = cthr_thread_join(handle, nil)
        requireJoined(code, "join()", "pthread_join")
        nonisolated(unsafe) let result = box.result.take()!
        return result
    }
}
