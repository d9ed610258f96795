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
    /// - Complexity: One load when the job has ended; else a lock round trip and one suspension, and one allocation
    ///   when other tasks wait for the job already (the task's node in the job's list of waiters).
    public func waitUntilFinished() async throws {
        if done.isFlagSet { return }
        try await AsyncResumeOnce.wait(on: self, guardedBy: JobGraph.lock) { !$0.stateValue.isEnded }
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

extension Job: AsyncWaitOwner {}
