// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

extension WorkerPool {
    /// Runs `body` on a thread of this pool and suspends the task (never blocking its thread) until it returned;
    /// returns its result. The way to offload a blocking call from async code.
    ///
    /// <!-- sample-context
    /// func readWholeFile(_ path: String) throws -> [UInt8] { [] }
    /// let path = "/etc/hostname"
    /// -->
    /// ```swift
    /// let data = try await WorkerPool.blocking.run { try readWholeFile(path) }
    /// ```
    ///
    /// `body` always runs on the pool, never on the caller's actor, whatever it captures (unlike
    /// `withTaskExecutorPreference(pool)`, which does not apply to actor-isolated code: see <doc:Concurrency>). It
    /// runs as one pool task in the lane of the task's priority. `body` is `sending`, not `@Sendable`: it may
    /// capture non-`Sendable` values the caller gives up and return a non-`Sendable` value. The error it throws
    /// reaches the caller unchanged (the same value, of its own type, for `catch let error as MyError`). The call is
    /// declared untyped `throws` rather than `throws(Failure)` because it can also end with two errors of its own
    /// that are not the closure's type, `CancellationError` and ``ThreadingError/shutDown``; a typed signature would
    /// have to wrap all three in one enum, which would change what every `catch` clause matches.
    ///
    /// The pool takes work while it runs, and from its own threads while ``shutdown()-8p8u6`` drains it; otherwise
    /// this throws ``ThreadingError/shutDown`` at once, so a request handler racing a graceful shutdown can answer
    /// "503" (NIO's `NIOThreadPool.runIfActive`). Accepted work runs (a graceful shutdown runs it) or, when a
    /// ``shutdown(timeout:)`` gives up first, resumes the caller with ``ThreadingError/shutDown``: the caller is
    /// never left suspended.
    ///
    /// The stall report, ``RuntimeSnapshot`` and ``RuntimeDump`` name the unit by where it was called
    /// (`WorkerPool.run from Handlers/Search.swift:42`), from `fileID` and `line`: leave them to their defaults.
    ///
    /// - Parameters:
    ///   - fileID: The caller's `#fileID` (the default), naming the unit in reports.
    ///   - line: The caller's `#line` (the default).
    ///   - body: The work.
    /// - Returns: What `body` returned.
    /// - Throws: What `body` threw; `CancellationError` when the task is cancelled before `body` started (then
    ///   `body` never runs); ``ThreadingError/shutDown`` when the pool was shut down before `body` started. Once
    ///   `body` started, cancellation has no effect on it.
    /// - Complexity: One pool submission (a wake-up when a thread is idle) and one suspension.
    public func run<Result, Failure: Error>(
        fileID: StaticString = #fileID,
        line: UInt = #line,
        _ body: sending @escaping () throws(Failure) -> sending Result
    ) async throws -> sending Result {
        let poolCore = self.poolCore
        let lane = QoS(taskPriority: Task.currentPriority).rawValue
        return try await AsyncResumeOnce.run(body, finishing: PoolCore.unitIsFinishing) { work in
            poolCore.isAccepting(SchedulerThread.current)
                && poolCore.trySchedule(.job(work, origin: UnitOrigin(.run, fileID: fileID, line: line)), lane: lane)
        }
    }
}
