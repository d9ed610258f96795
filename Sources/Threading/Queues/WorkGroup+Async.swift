// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

extension WorkGroup {
    /// Suspends the task (never blocking its thread) until the count is zero.
    ///
    /// Returns at once when the count is zero now. The last ``leave()`` resumes the task itself, on its own thread
    /// (no notification is queued, no pool thread is woken for it).
    ///
    /// - Throws: `CancellationError` when the task is cancelled first; the group is unaffected (its notification
    ///   stays registered until the count reaches zero, then does nothing).
    public func wait() async throws {
        if isEmpty { return }
        try await AsyncResumeOnce<Void>.wait { once in
            notifyInline { once.resume(.success(())) }
        }
    }
}
