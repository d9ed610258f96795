// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

extension WorkQueue {
    /// Submits `body` to the queue and suspends the task (never blocking its thread) until it ran; returns its
    /// result.
    ///
    /// The async counterpart of `sync`: `body` runs as one task of the queue, after the queue's earlier work (on a
    /// serial queue, alone; on a concurrent queue, together with other non-barrier work; on the ``MainQueue``, on
    /// the main thread). `body` is `sending`, not `@Sendable`: it may capture non-`Sendable` values the caller
    /// gives up, and it may return a non-`Sendable` value to the caller.
    ///
    /// <!-- sample-context
    /// final class Connection { func query(_ sql: String) -> [String] { [] } }  // not Sendable
    /// let database = SerialQueue(label: "database")
    /// -->
    /// ```swift
    /// let connection = Connection()  // not `Sendable`: the closure takes it over
    /// let rows = try await database.run { connection.query("SELECT 1") }
    /// ```
    ///
    /// To run a closure on a pool without a queue of its own, use ``WorkerPool/run(fileID:line:_:)``.
    ///
    /// - Parameter body: The work.
    /// - Returns: What `body` returned.
    /// - Throws: What `body` threw; `CancellationError` when the task is cancelled before `body` started (then
    ///   `body` never runs, and the task resumes at once); ``ThreadingError/shutDown`` when the queue's pool no
    ///   longer takes work (see ``tryAsync(flags:_:)``), or stopped before `body` started (a
    ///   ``WorkerPool/shutdown(timeout:)`` that gave up on it). Once `body` started, cancellation has no effect on
    ///   it.
    /// - Complexity: One submission (as `async(execute:)`) and one suspension.
    public func run<Result>(
        _ body: sending @escaping () throws -> sending Result
    ) async throws -> sending Result {
        let core = queueCore
        let isMain = self is MainQueue
        return try await AsyncResumeOnce.run(body) { work in
            if isMain {
                core.enqueue(.task(work))
                return true
            }
            return core.tryEnqueue(.task(work))
        }
    }
}
