// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

/// A queue that runs up to `width` tasks at once on a worker pool (``WorkerPool/shared`` unless
/// given another), with barriers.
///
/// Tasks start in submission order. A barrier (`async(flags: .barrier)`, `sync(flags: .barrier)`) waits for all
/// earlier tasks, runs alone, and only then lets later tasks start: the reader-writer pattern (readers `sync`,
/// writers barrier). For a read-mostly cache an ``RCUMap`` or a ``ReadWriteLock`` is usually faster: see the
/// decision table in <doc:Locks>. On an idle queue a non-barrier `sync` is one compare-and-swap adding a
/// reader; a barrier `sync` on an idle queue is one compare-and-swap taking it exclusively.
///
/// A `sync` caller that would wait for a started async barrier may run that barrier itself instead of waiting for a
/// pool worker to wake, and a thread that finishes an async barrier runs the async barriers queued right behind it
/// too (each still alone, in order); async work has no promised thread.
///
/// A non-barrier `sync` from inside the same queue runs at once (it cannot wait behind a pending barrier that waits
/// for the caller). A barrier `sync` from inside the same queue, or any `sync` from inside one of its barriers,
/// stops the program with a deadlock diagnostic naming the queue and the thread.
///
/// Reference semantics; `Sendable` because all state lives in the pool core, which synchronises itself.
public final class ConcurrentQueue: WorkQueue {
    let core: ConcurrentCore

    /// The queue's label, used in diagnostics.
    public var label: String { core.label }

    /// The pool's handle on this queue (see ``WorkQueue/queueHandle``).
    public var queueHandle: QueueHandle { QueueHandle(core) }

    /// The queue's quality of service: the pool lane its work runs in.
    public var qos: QoS { core.qos }

    /// How many non-barrier tasks may run at once (`Int.max`-like when unlimited: 2²³).
    public var width: Int { Int(core.width) }

    /// Creates a concurrent queue.
    ///
    /// - Parameters:
    ///   - label: A name for diagnostics.
    ///   - qos: The pool lane (default ``QoS/default``).
    ///   - width: The most non-barrier tasks running at once; nil for no limit other than the pool's. Must be ≥ 1.
    ///   - target: A queue this queue's work runs on behalf of.
    ///   - pool: The worker pool that runs the queue's work (default: ``WorkerPool/shared``). A queue with a target
    ///     runs on its target's pool: naming another pool as well traps. Submitting after the pool was shut down
    ///     traps (see <doc:Pools>).
    public init(
        label: String,
        qos: QoS = .default,
        width: Int? = nil,
        target: (any WorkQueue)? = nil,
        pool: WorkerPool? = nil
    ) {
        require((width ?? 1) >= 1, "ConcurrentQueue(label: \"\(label)\", width: \(width ?? 0)): width must be ≥ 1")
        core = ConcurrentCore(
            label: label,
            qos: qos,
            target: resolveTargetCore(target),
            width: width ?? (1 << 23),
            poolCore: resolvePoolCore(pool, target: target, "ConcurrentQueue(label: \"\(label)\")")
        )
    }

    deinit { core.releaseSuspension() }

    /// The shared concurrent queue of a QoS lane (no width limit).
    ///
    /// The queue is shared by every user in the process, so it cannot be suspended: ``WorkQueue/suspend()`` on it
    /// stops the program with a message naming the queue (one user would stall all the others; libdispatch ignores
    /// the call instead, which hides the bug). To pause your own work, give it a queue of your own that targets
    /// the global queue and suspend that one.
    ///
    /// - Parameter qos: The lane.
    /// - Returns: The lane's global queue.
    public static func global(qos: QoS = .default) -> ConcurrentQueue {
        globals[qos.rawValue]
    }

    private static let globals: [ConcurrentQueue] = QoS.allCases.map { qos in
        let queue = ConcurrentQueue(label: "threading.global.\(qos)", qos: qos)
        queue.core.markProcessWide("ConcurrentQueue.global(qos: .\(qos))")
        return queue
    }

    /// Submits `work` and returns at once.
    ///
    /// Traps when the queue's pool was shut down (see ``WorkerPool``), except on a thread of that pool while it
    /// drains; where the call may race a shutdown, use ``WorkQueue/tryAsync(flags:_:)``, which answers instead.
    ///
    /// - Parameter work: The closure; it is released after it ran.
    public func async(execute work: @escaping @Sendable () -> Void) {
        core.enqueue(.task(work), refusing: "async")
    }

    /// Submits `work` with flags: with `.barrier` it runs alone, after earlier tasks and before later ones.
    ///
    /// - Parameters:
    ///   - flags: Submission flags.
    ///   - work: The closure.
    public func async(flags: QueueTaskFlags, execute work: @escaping @Sendable () -> Void) {
        core.enqueue(flags.contains(.barrier) ? .barrier(work) : .task(work), refusing: "async")
    }

    /// Runs `work` on the calling thread once it may start (after earlier barriers), and returns its result.
    ///
    /// - Parameter work: The closure.
    /// - Returns: What `work` returned.
    /// - Throws: What `work` threw.
    @available(*, noasync, message: "sync blocks the thread; use `try await queue.run { }`")
    @inlinable
    public func sync<Result, Failure: Error>(execute work: () throws(Failure) -> Result) throws(Failure) -> Result {
        try sync(flags: [], execute: work)
    }

    /// Runs `work` on the calling thread; with `.barrier`, alone (after every earlier task, before later ones).
    ///
    /// Traps with a deadlock diagnostic for a barrier `sync` from inside this queue, or any `sync` from inside one
    /// of its barriers.
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
        // Non-generic, non-throwing pool side (see `SerialQueue.sync`).
        var result: Result?
        var failure: Failure?
        _syncVoid(barrier: flags.contains(.barrier)) {
            do throws(Failure) { result = try work() } catch { failure = error }
        }
        if let failure { throw failure }
        return result!
    }

    @usableFromInline
    func _syncVoid(barrier: Bool, _ work: () -> Void) {
        let context = SchedulerThread.current
        if !barrier, let stripe = core.enterStriped() {
            context.push(core, exclusive: false, entry: true)
            defer {
                context.pop()
                core.leaveStriped(stripe)
            }
            work()
            return
        }
        if core.target == nil && (barrier ? core.tryBarrierFast() : core.tryReadFast()) {
            context.push(core, exclusive: barrier, entry: true)
            defer {
                context.pop()
                if barrier { core.releaseBarrier() } else { core.releaseRead() }
            }
            work()
            return
        }
        core.syncSlow(context, barrier: barrier, work)
    }
}
