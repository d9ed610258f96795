// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

extension Job {
    /// Suspends the task (never blocking its thread) until the job finished, failed or was cancelled.
    ///
    /// Returns at once when the job has ended already. Otherwise the thread that ends the job resumes the task, as
    /// the last thing it does for the job's end (after the completion handlers, ``addCompletionHandler(_:)``).
    ///
    /// - Throws: `CancellationError` when the *task* is cancelled first; the job is unaffected (cancel it with
    ///   ``cancel()``). A job's own failure is not thrown: read ``error``.
    /// - Complexity: One load when the job has ended; else a lock round trip, one allocation (the task's node in
    ///   the job's list of waiters) and one suspension.
    public func waitUntilFinished() async throws {
        if done.isFlagSet { return }
        try await AsyncResumeOnce.wait(guardedBy: JobGraph.lock) { node in
            if stateValue.isEnded { return false }
            asyncWaiters.append(node)
            return true
        } unregister: { node in
            asyncWaiters.remove(node)
        }
    }
}

extension ResultJob {
    /// Suspends the task until the job ended and returns its output.
    ///
    /// - Returns: The output the job finished with.
    /// - Throws: The error the job failed with, `CancellationError` for a cancelled job (as ``result`` carries
    ///   them), and `CancellationError` when the task is cancelled before the job ended (the job is unaffected).
    public var value: Output {
        get async throws {
            try await waitUntilFinished()
            guard let result else { throw CancellationError() }
            return try result.get()
        }
    }
}
