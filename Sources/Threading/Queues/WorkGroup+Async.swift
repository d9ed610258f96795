// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

extension WorkGroup {
    /// Suspends the task (never blocking its thread) until the count is zero.
    ///
    /// Returns at once when the count is zero now. The task resumes after the last ``leave()``, through a
    /// notification (``notify(queue:execute:)``) on the shared pool.
    ///
    /// - Throws: `CancellationError` when the task is cancelled first; the group is unaffected (its notification
    ///   stays registered until the count reaches zero, then does nothing).
    public func wait() async throws {
        if isEmpty { return }
        try await AsyncResumeOnce<Void>.wait { once in
            notify(queue: asyncWaitQueue) { once.resume(.success(())) }
        }
    }
}

/// The queue that async-wait notifications run on: a concurrent queue of the shared pool (each notification only
/// resumes a continuation).
let asyncWaitQueue = ConcurrentQueue(label: "threading.async-wait")
