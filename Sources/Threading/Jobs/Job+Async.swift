// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

extension Job {
    /// Suspends the task (never blocking its thread) until the job finished, failed or was cancelled.
    ///
    /// The task resumes from the job's completion handlers (``addCompletionHandler(_:)``), at once when the job
    /// has ended already.
    ///
    /// - Throws: `CancellationError` when the *task* is cancelled first; the job is unaffected (cancel it with
    ///   ``cancel()``). A job's own failure is not thrown: read ``error``.
    public func waitUntilFinished() async throws {
        try await AsyncResumeOnce<Void>.wait { once in
            addCompletionHandler { _ in once.resume(.success(())) }
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
