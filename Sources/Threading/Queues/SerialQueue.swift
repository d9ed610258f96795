// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

/// A queue that runs one task at a time, in submission order, on a worker pool
/// (``WorkerPool/shared`` unless given another).
///
/// A serial queue is not a thread: its tasks run on whichever pool worker drains it (never a thread per queue), and
/// ``sync(execute:)`` runs its closure on the calling thread once the queue is free. On an idle queue `sync` is a
/// single compare-and-swap to take the queue, the closure, and a compare-and-swap to give it back — no pool hop and
/// no allocation; contended `sync` callers sleep on a futex like mutex waiters.
///
/// Deadlocks that the pool can see stop the program with a diagnostic naming the queues and the thread instead of
/// hanging: `sync` onto a queue the calling thread is already executing (directly, through a chain such as
/// `a.sync { b.sync { a.sync { } } }`, or through target queues).
///
/// Async tasks run on pool workers — or on a thread blocked in `sync` right behind them: a `sync` caller that finds
/// earlier async tasks not yet started runs them itself (it would wait for exactly them), which saves a worker
/// wake-up per round trip. Like libdispatch, the pool promises no particular thread for async work.
///
/// A queue released with pending tasks stays alive until they ran. Releasing the last handle of a *suspended* queue
/// resumes it, because nobody could call ``resume()`` any more and its work would otherwise never run (libdispatch
/// crashes in that case instead).
///
/// As an actor's executor (``asUnownedSerialExecutor()``), the queue must be kept by the actor
/// (`nonisolated let queue = SerialQueue(...)`); an actor job sent to a queue that was released traps with a
/// message instead of touching freed memory (see <doc:Concurrency>).
///
/// Reference semantics; `Sendable` because all state lives in the pool core, which synchronises itself.
public final class SerialQueue: WorkQueue {
    let core: SerialCore

    /// The queue's label, used in diagnostics.
    public var label: String { core.label }

    /// The pool's handle on this queue (see ``WorkQueue/queueHandle``).
    public var queueHandle: QueueHandle { QueueHandle(core) }

    /// The queue's quality of service: the pool lane its work runs in.
    public var qos: QoS { core.qos }

    /// Creates a serial queue.
    ///
    /// - Parameters:
    ///   - label: A name for diagnostics.
    ///   - qos: The pool lane (default ``QoS/default``).
    ///   - target: A queue this queue's work runs on behalf of: with a serial target, this queue's tasks never
    ///     overlap the target's; with the ``MainQueue``, they run on the main thread.
    ///   - pool: The worker pool that runs the queue's work (default: ``WorkerPool/shared``). A queue with a target
    ///     runs on its target's pool: naming another pool as well traps. Submitting after the pool was shut down
    ///     traps (see <doc:Pools>).
    public init(label: String, qos: QoS = .default, target: (any WorkQueue)? = nil, pool: WorkerPool? = nil) {
        core = SerialCore(
            label: label,
            qos: qos,
            target: resolveTargetCore(target),
            poolCore: resolvePoolCore(pool, target: target, "SerialQueue(label: \"\(label)\")")
        )
    }

    deinit {
        core.releaseSuspension()
        core.queueReleased()
    }

    /// Submits `work` to run after the queue's earlier work, and returns at once.
    ///
    /// Traps when the queue's pool was shut down (see ``WorkerPool``), except on a thread of that pool while it
    /// drains; where the call may race a shutdown, use ``WorkQueue/tryAsync(flags:_:)``, which answers instead.
    ///
    /// - Parameter work: The closure; it is released after it ran.
    /// - Complexity: O(1): a queue lock round trip, plus a pool wake-up when the queue was idle.
    public func async(execute work: @escaping @Sendable () -> Void) {
        core.enqueue(.task(work), refusing: "async")
    }

    /// Submits `work` (the flags change nothing on a serial queue, where every task is exclusive).
    ///
    /// - Parameters:
    ///   - flags: Submission flags.
    ///   - work: The closure.
    public func async(flags: QueueTaskFlags, execute work: @escaping @Sendable () -> Void) {
        core.enqueue(.task(work), refusing: "async")
    }

    /// Runs `work` on the calling thread once the queue is free (after the queue's earlier async work), and returns
    /// its result.
    ///
    /// Traps with a deadlock diagnostic when the calling thread is already executing this queue (or a queue this one
    /// targets). For a queue that targets the ``MainQueue``, a call from another thread hands the closure to the
    /// main thread and waits.
    ///
    /// - Parameter work: The closure.
    /// - Returns: What `work` returned.
    /// - Throws: What `work` threw.
    @available(*, noasync, message: "sync blocks the thread; use `try await queue.run { }`")
    @inlinable
    public func sync<Result, Failure: Error>(execute work: () throws(Failure) -> Result) throws(Failure) -> Result {
        // The pool side is neither generic nor throwing (`_syncVoid`), so callers in other modules get the
        // optimised fast path instead of an unspecialised generic one; the result and the typed error travel
        // through specialised locals.
        var result: Result?
        var failure: Failure?
        _syncVoid {
            do throws(Failure) { result = try work() } catch { failure = error }
        }
        if let failure { throw failure }
        return result!
    }

    @usableFromInline
    func _syncVoid(_ work: () -> Void) {
        core.syncFast(SchedulerThread.current, eligible: core.target == nil, work)
    }

    /// As ``sync(execute:)`` (the flags change nothing on a serial queue).
    ///
    /// - Parameters:
    ///   - flags: Submission flags.
    ///   - work: The closure.
    /// - Returns: What `work` returned.
    /// - Throws: What `work` threw.
    @available(*, noasync, message: "sync blocks the thread; use `try await queue.run { }`")
    @inlinable
    public func sync<Result, Failure: Error>(
        flags: QueueTaskFlags,
        execute work: () throws(Failure) -> Result
    ) throws(Failure) -> Result {
        try sync(execute: work)
    }
}
