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
    /// ```swift
    /// let rows = try await database.run { connection.query("SELECT 1") }
    /// ```
    ///
    /// - Parameter body: The work.
    /// - Returns: What `body` returned.
    /// - Throws: What `body` threw; `CancellationError` when the task is cancelled before `body` started (then
    ///   `body` never runs, and the task resumes at once). Once `body` started, cancellation has no effect on it.
    /// - Complexity: One submission (as `async(execute:)`) and one suspension.
    public func run<Result>(
        _ body: sending @escaping () throws -> sending Result
    ) async throws -> sending Result {
        let state = AsyncRunState()
        let core = engineCore
        defer { state.observe() }
        return try await withTaskCancellationHandler {
            try await withUnsafeThrowingContinuation { (continuation: UnsafeContinuation<Result, any Error>) in
                guard state.install(continuation) else { return }
                let item: QueueItem = .task {
                    guard state.start() else { return }
                    do {
                        let result = try body()
                        state.publish()
                        continuation.resume(returning: result)
                    } catch {
                        state.publish()
                        continuation.resume(throwing: error)
                    }
                }
                if self is MainQueue {
                    core.enqueue(item)
                } else {
                    core.submit(item, "run(_:)")
                }
            }
        } onCancel: {
            state.cancel()
        }
    }
}

/// Whether a ``WorkQueue/run(_:)`` body started or its task was cancelled first: exactly one wins, and exactly one
/// party resumes the continuation.
final class AsyncRunState: @unchecked Sendable {
    private enum Phase: UInt8, AtomicRepresentable {
        case pending, started, cancelled
    }

    private let phase = Atomic<Phase>(.pending)
    private let lock = EngineLock()
    /// Guarded by `lock`: resumes the task with an error (type-erased: the cancellation handler does not know the
    /// result type); taken by whoever resumes.
    private var fail: ((any Error) -> Void)?

    /// Installs the continuation; false when the task was cancelled already (the caller resumed it then).
    func install<Value>(_ continuation: UnsafeContinuation<Value, any Error>) -> Bool {
        lock.lock()
        if phase.load(ordering: .acquiring) == .cancelled {
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

    /// The body is about to run: false when the task was cancelled first (the body must not run).
    func start() -> Bool {
        phase.compareExchange(expected: .pending, desired: .started, ordering: .acquiringAndReleasing).exchanged
    }

    /// The task was cancelled: resumes it with `CancellationError` unless the body started already.
    func cancel() {
        guard phase.compareExchange(expected: .pending, desired: .cancelled, ordering: .acquiringAndReleasing).exchanged
        else { return }
        lock.lock()
        let fail = self.fail
        self.fail = nil
        lock.unlock()
        fail?(CancellationError())
    }
}
