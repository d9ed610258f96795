// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

extension WorkItem {
    /// Suspends the task (never blocking its thread) until the item finished: it ran, or it was cancelled before
    /// it started. Whoever finishes the item resumes the task itself, on its own thread (no notification is
    /// queued, no pool thread is woken for it).
    ///
    /// - Throws: `CancellationError` when the task is cancelled first; the item is unaffected (cancel the item
    ///   with ``cancel()`` to keep it from running).
    /// - Complexity: One load when the item finished; else a lock round trip and one suspension, and one allocation
    ///   when other tasks wait for the item already (the task's node in the item's list of waiters).
    public func wait() async throws {
        if done.isFlagSet { return }
        try await AsyncResumeOnce.wait(on: self, guardedBy: lock) { !$0.isFinishedLocked }
    }
}

extension WorkItem: AsyncWaitOwner {}
