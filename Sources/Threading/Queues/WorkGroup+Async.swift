// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

extension WorkGroup {
    /// Suspends the task (never blocking its thread) until the count is zero.
    ///
    /// Returns at once when the count is zero now. The last ``leave()`` resumes the task itself, on its own thread
    /// (no notification is queued, no pool thread is woken for it).
    ///
    /// - Throws: `CancellationError` when the task is cancelled first; the group is unaffected (the cancelled wait
    ///   leaves it at once).
    /// - Complexity: One load when the count is zero; else a lock round trip, one allocation (the task's node in
    ///   the group's list of waiters) and one suspension.
    public func wait() async throws {
        if isEmpty { return }
        try await AsyncResumeOnce.wait(guardedBy: lock) { node in
            if isEmpty { return false }
            asyncWaiters.append(node)
            return true
        } unregister: { node in
            asyncWaiters.remove(node)
        }
    }
}
