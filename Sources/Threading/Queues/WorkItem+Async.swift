// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

extension WorkItem {
    /// Suspends the task (never blocking its thread) until the item finished: it ran, or it was cancelled before
    /// it started. Whoever finishes the item resumes the task itself, on its own thread (no notification is
    /// queued, no pool thread is woken for it).
    ///
    /// - Throws: `CancellationError` when the task is cancelled first; the item is unaffected (cancel the item
    ///   with ``cancel()`` to keep it from running).
    public func wait() async throws {
        try await AsyncResumeOnce<Void>.wait { once in
            notifyInline { once.resume(.success(())) }
        }
    }
}
