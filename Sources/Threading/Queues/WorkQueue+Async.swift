// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import Synchronization

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
        return try await AsyncRunState.run(body) { work in
            if isMain {
                core.enqueue(.task(work))
                return true
            }
            return core.tryEnqueue(.task(work))
        }
    }
}

/// Whether a ``WorkQueue/run(_:)`` or ``WorkerPool/run(fileID:line:_:)`` body started, or its task was cancelled or the work was
/// refused or dropped first: exactly one wins, and exactly one party resumes the continuation.
final class AsyncRunState: @unchecked Sendable {
    private enum Phase: UInt8, AtomicRepresentable {
        case pending, started, failed
    }

    private let phase = Atomic<Phase>(.pending)
    private let lock = RuntimeLock()
    /// Guarded by `lock`: resumes the task with an error (type-erased: the cancellation handler does not know the
    /// result type); taken by whoever resumes.
    private var fail: ((any Error) -> Void)?

    /// Runs `body` through `submit` (which queues the closure it is given and returns whether the pool took it)
    /// and suspends until it ran, the task was cancelled before it started, or the pool refused or dropped it.
    /// `finishing` runs on the thread that ran `body`, right before it resumes the task (the closure's last act).
    static func run<Result, Failure: Error>(
        _ body: sending @escaping () throws(Failure) -> sending Result,
        finishing: @escaping @Sendable () -> Void = {},
        submit: @Sendable (@escaping () -> Void) -> Bool
    ) async throws -> sending Result {
        let state = AsyncRunState()
        defer { state.observe() }
        return try await withTaskCancellationHandler {
            try await withUnsafeThrowingContinuation { (continuation: UnsafeContinuation<Result, any Error>) in
                guard state.install(continuation) else { return }
                let ticket = AsyncRunTicket(state)
                let work = {
                    guard ticket.state.start() else { return }
                    do throws(Failure) {
                        let result = try body()
                        ticket.state.publish()
                        finishing()
                        continuation.resume(returning: result)
                    } catch {
                        ticket.state.publish()
                        finishing()
                        continuation.resume(throwing: error)
                    }
                }
                if !submit(work) { state.fail(with: ThreadingError.shutDown) }
            }
        } onCancel: {
            state.fail(with: CancellationError())
        }
    }

    /// Installs the continuation; false when the task was cancelled already (the caller resumed it then).
    func install<Value>(_ continuation: UnsafeContinuation<Value, any Error>) -> Bool {
        lock.lock()
        if phase.load(ordering: .acquiring) == .failed {
            lock.unlock()
            continuation.resume(throwing: CancellationError())
            return false
        }
        fail = { continuation.resume(throwing: $0) }
        lock.unlock()
        return true
    }

    /// Set by the resumer right before it resumes the task (see ``ResumeOrdering``).
    private let published = Atomic<Bool>(false)

    /// The body returned or threw: what it wrote is ordered before the task's ``observe()``.
    func publish() { published.store(true, ordering: .releasing) }

    /// Called by the task after its `await` (see ``ResumeOrdering``).
    func observe() { _ = published.load(ordering: .acquiring) }

    /// The body is about to run: false when the task was cancelled, or the work refused, first (it must not run).
    func start() -> Bool {
        phase.compareExchange(expected: .pending, desired: .started, ordering: .acquiringAndReleasing).exchanged
    }

    /// The task was cancelled, or the pool refused or dropped the work: resumes the task with `error` unless the
    /// body started or the task was resumed already. (Before the continuation is installed, only marks the state:
    /// ``install(_:)`` then resumes with `CancellationError`, the only failure that can come first.)
    func fail(with error: any Error) {
        guard phase.compareExchange(expected: .pending, desired: .failed, ordering: .acquiringAndReleasing).exchanged
        else { return }
        lock.lock()
        let fail = self.fail
        self.fail = nil
        lock.unlock()
        fail?(error)
    }
}

/// Owned by the closure a ``AsyncRunState/run(_:submit:)`` queues: released with it, so a closure that a stopped
/// pool drops unrun resumes its caller with ``ThreadingError/shutDown`` instead of leaving it suspended for ever.
final class AsyncRunTicket: @unchecked Sendable {
    let state: AsyncRunState

    init(_ state: AsyncRunState) { self.state = state }

    deinit { state.fail(with: ThreadingError.shutDown) }
}
