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
    /// - Complexity: One load when the count is zero; else a lock round trip and one suspension, and one allocation
    ///   when other tasks wait for the group already (the task's node in the group's list of waiters).
    public func wait() async throws {
        if isEmpty { return }
        try await AsyncResumeOnce.wait(on: self, guardedBy: lock) { !$0.isEmpty }
    }
}

extension WorkGroup: AsyncWaitOwner {}
