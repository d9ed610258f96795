// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

/// A queue of the Threading pool: ``SerialQueue``, ``ConcurrentQueue`` or ``MainQueue``.
///
/// The protocol lets APIs take any of them (a target queue, ``WorkGroup/notify(queue:execute:)``,
/// ``WorkItem/notify(queue:execute:)``, ``QueueTimer``). A type outside the library cannot make a ``QueueHandle``,
/// so it conforms only by forwarding ``queueHandle`` to one of these queues (a wrapper that adds logging, say): the
/// pool then runs the work on that queue, and no conformer can reach the pool with a queue it does not know.
///
/// Queues are reference types and `Sendable`: every operation is thread-safe.
public protocol WorkQueue: AnyObject, Sendable {
    /// The queue's label, used in diagnostics.
    var label: String { get }

    /// The queue's quality of service.
    var qos: QoS { get }

    /// Submits `work` to run on the queue later and returns at once.
    ///
    /// - Parameter work: The closure; it is released after it ran.
    func async(execute work: @escaping @Sendable () -> Void)

    /// The pool's handle on the queue: what targets, timers, notifications, suspension and queue-specific values
    /// act on. Only the library's queues make one; a wrapper returns its wrapped queue's.
    var queueHandle: QueueHandle { get }
}

/// The runtime's handle on a ``WorkQueue``: opaque, made only by the library's own queues, so that the protocol
/// can be conformed to by forwarding and never by a type the pool cannot run.
public struct QueueHandle: Sendable {
    let core: QueueCore

    init(_ core: QueueCore) { self.core = core }
}

extension WorkQueue {
    /// The pool core behind a queue.
    var queueCore: QueueCore { queueHandle.core }

    /// Whether the calling thread is running work of this queue: the current queue is this queue or targets it
    /// (directly or through a chain of targets).
    ///
    /// Inside `sync` the current queue is the queue synced onto, whatever the thread: on the main thread inside
    /// `serial.sync { }`, ``PosixThread/isMainThread`` is true while `MainQueue.shared.isCurrent` is false.
    public var isCurrent: Bool { queueCore.isCurrent }

    /// Submits `work` to run on the queue later, unless the queue's pool no longer takes work: the recoverable form
    /// of ``async(execute:)`` for code that may run while the pool shuts down (a request handler that submits
    /// follow-up work during a graceful shutdown answers "503" instead of stopping the process).
    ///
    /// The pool takes work while it runs, and from its own threads while ``WorkerPool/shutdown()-8p8u6`` drains it
    /// (follow-up work of accepted tasks). Accepted work runs, or, when a ``WorkerPool/shutdown(timeout:)`` gives
    /// up first, is counted in its ``WorkerPool/ShutdownResult/tasksNotRun``: it is never lost without a count.
    /// The check and the queuing are one step with respect to the shutdown, so no answer is stale.
    ///
    /// <!-- sample-context
    /// struct Request: Sendable {}
    /// enum Status { case ok, serviceUnavailable }
    /// struct AuditLog: Sendable { func record(_ request: Request) {} }
    /// let queue = SerialQueue(label: "audit")
    /// let audit = AuditLog()
    /// -->
    /// ```swift
    /// func handle(_ request: Request) -> Status {
    ///     guard queue.tryAsync({ audit.record(request) }) else { return .serviceUnavailable }
    ///     return .ok
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - flags: Submission flags (``QueueTaskFlags/barrier`` on a concurrent queue); none by default.
    ///   - work: The closure; released unrun when the pool refused it.
    /// - Returns: True when the queue took `work`; false when its pool was shut down.
    /// - Complexity: As ``async(execute:)``.
    public func tryAsync(flags: QueueTaskFlags = [], _ work: @escaping @Sendable () -> Void) -> Bool {
        queueCore.tryEnqueue(flags.contains(.barrier) ? .barrier(work) : .task(work))
    }

    /// Submits `work` and counts it in `group` until it finished.
    ///
    /// Traps, as ``async(execute:)`` does, when the queue's pool was shut down. A task that a timed
    /// ``WorkerPool/shutdown(timeout:)`` gave up on (counted in its `tasksNotRun`) leaves the group without running,
    /// so a wait for the group ends.
    ///
    /// - Parameters:
    ///   - group: Entered now, left after `work` returned.
    ///   - work: The closure.
    public func async(group: WorkGroup, execute work: @escaping @Sendable () -> Void) {
        enqueue(GroupTask(group, queueCore, work), barrier: false, refusing: "async(group:)")
    }

    /// Submits `work` with flags (``QueueTaskFlags/barrier`` on a concurrent queue) and counts it in `group` until it
    /// finished (see ``async(group:execute:)``).
    ///
    /// - Parameters:
    ///   - group: Entered now, left after `work` returned.
    ///   - flags: Submission flags.
    ///   - work: The closure.
    public func async(group: WorkGroup, flags: QueueTaskFlags, execute work: @escaping @Sendable () -> Void) {
        enqueue(GroupTask(group, queueCore, work), barrier: flags.contains(.barrier), refusing: "async(group:flags:)")
    }

    private func enqueue(_ task: GroupTask, barrier: Bool, refusing operation: String) {
        let core = task.core
        let body: () -> Void = { task.run() }
        core.enqueue(barrier ? .barrier(body) : .task(body), refusing: operation)
    }

    /// Submits a ``WorkItem``; it runs unless cancelled before it starts.
    ///
    /// - Parameter item: The item.
    public func async(execute item: WorkItem) {
        item.markSubmitted(to: queueCore)
        if item.flags.contains(.barrier) {
            queueCore.enqueue(.barrier { item.perform() }, refusing: "async(execute: WorkItem)")
        } else {
            async { item.perform() }
        }
    }

    /// Submits `work` to run on this queue after `delay`, from the pool's timer thread.
    ///
    /// Traps when the queue's pool was shut down (see ``WorkerPool``), except on a thread of that pool while it
    /// drains; ``tryAsyncAfter(delay:_:)`` answers instead. A deadline that passes after the shutdown began is not
    /// queued (counted in ``WorkerPoolStatistics/cancelledFirings``).
    ///
    /// - Parameters:
    ///   - delay: How long from now (a negative duration means now).
    ///   - work: The closure.
    public func asyncAfter(delay: Duration, execute work: @escaping @Sendable () -> Void) {
        scheduleAfter(monotonicDeadline(after: delay), work)
    }

    /// Submits `work` to run on this queue once `deadline` passed.
    ///
    /// Traps when the queue's pool was shut down (see ``WorkerPool``), except on a thread of that pool while it
    /// drains; ``tryAsyncAfter(delay:_:)`` answers instead. A deadline that passes after the shutdown began is not
    /// queued (counted in ``WorkerPoolStatistics/cancelledFirings``).
    ///
    /// - Parameters:
    ///   - deadline: When, on the continuous clock.
    ///   - work: The closure.
    public func asyncAfter(deadline: ContinuousClock.Instant, execute work: @escaping @Sendable () -> Void) {
        scheduleAfter(monotonicDeadline(deadline), work)
    }

    /// Submits `work` to run on this queue after `delay`, as ``asyncAfter(delay:execute:)`` does, unless the
    /// queue's pool no longer takes work (see ``tryAsync(flags:_:)``).
    ///
    /// Delayed work whose deadline has not passed when the pool shuts down never runs (it is counted in the pool's
    /// ``WorkerPoolStatistics/cancelledFirings``): a true result means the pool took the work, not that it ran.
    ///
    /// - Parameters:
    ///   - delay: How long from now (a negative duration means now).
    ///   - work: The closure.
    /// - Returns: True when the work was scheduled; false when the queue's pool was shut down.
    public func tryAsyncAfter(delay: Duration, _ work: @escaping @Sendable () -> Void) -> Bool {
        let core = queueCore
        guard core.poolCore.isAccepting(SchedulerThread.current) else { return false }
        schedule(core, monotonicDeadline(after: delay), work)
        return true
    }

    /// Submits a ``WorkItem`` to run on this queue once `deadline` passed; cancelling the item before then
    /// removes it (it never runs).
    ///
    /// - Parameters:
    ///   - deadline: When, on the continuous clock.
    ///   - item: The item.
    public func asyncAfter(deadline: ContinuousClock.Instant, execute item: WorkItem) {
        let core = queueCore
        guard core.poolCore.requireAccepting("asyncAfter on queue '\(core.label)'") else { return }
        item.markSubmitted(to: core)
        let entry = TimerEntry(deadline: monotonicDeadline(deadline), interval: 0) {
            core.enqueueFiring(item.flags.contains(.barrier) ? .barrier { item.perform() } : .task { item.perform() })
        }
        item.attachTimer(entry)
        TimerThread.shared.schedule(entry)
    }

    private func scheduleAfter(_ deadline: UInt64, _ work: @escaping @Sendable () -> Void) {
        let core = queueCore
        guard core.poolCore.requireAccepting("asyncAfter on queue '\(core.label)'") else { return }
        schedule(core, deadline, work)
    }

    private func schedule(_ core: QueueCore, _ deadline: UInt64, _ work: @escaping @Sendable () -> Void) {
        TimerThread.shared.schedule(
            TimerEntry(deadline: deadline, interval: 0) { core.enqueueFiring(.task(work)) }
        )
    }

    /// Suspends the queue: work already running finishes, no further work (async or sync) starts until a matching
    /// ``resume()``. Suspensions are counted. When the queue's last handle is released while it is suspended, the
    /// pool resumes it: nobody could call ``resume()`` any more, and accepted work is never dropped.
    ///
    /// Traps for a process-wide queue (``ConcurrentQueue/global(qos:)``, a ``QueuePool/shared(for:)`` queue):
    /// suspending it would stall every other user in the process; suspend a queue of your own that targets it.
    public func suspend() { queueCore.suspend() }

    /// Undoes one ``suspend()``; at zero, pending work starts again.
    ///
    /// Traps ("resume() of queue … that is not suspended") when called more often than ``suspend()``: that is a
    /// logic error nobody can recover from, and libdispatch's equivalent is an unexplained crash.
    public func resume() { queueCore.resume() }

    /// Associates `value` with `key` on this queue, replacing (and releasing) any previous value; `nil` clears it.
    /// Values are released when replaced, cleared, or when the queue is deallocated.
    ///
    /// - Parameters:
    ///   - key: The key.
    ///   - value: The value, or nil.
    public func setSpecific<Value: Sendable>(_ key: QueueKey<Value>, _ value: Value?) {
        queueCore.setSpecific(ObjectIdentifier(key), value.map { QueueSpecificBox($0) })
    }

    /// The value associated with `key` on this queue itself (targets are not consulted), or nil.
    ///
    /// - Parameter key: The key.
    /// - Returns: The value, or nil.
    public func getSpecific<Value: Sendable>(_ key: QueueKey<Value>) -> Value? {
        (queueCore.getSpecific(ObjectIdentifier(key)) as? QueueSpecificBox<Value>)?.value
    }
}

/// Holds a specific value (released when the box is).
final class QueueSpecificBox<Value: Sendable>: Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}

/// Resolves an optional public target to its core.
func resolveTargetCore(_ target: (any WorkQueue)?) -> QueueCore? {
    target?.queueCore
}

/// The pool a new queue runs on: its target's, else `pool`, else the shared pool. Traps when a target and a
/// different pool are both named (`what` names the initializer).
func resolvePoolCore(_ pool: WorkerPool?, target: (any WorkQueue)?, _ what: @autoclosure () -> String) -> PoolCore {
    guard let target else { return pool?.poolCore ?? .shared }
    let poolCore = target.queueCore.poolCore
    if let pool, pool.poolCore !== poolCore {
        threadingFatal(
            "\(what()): the target queue '\(target.label)' runs on worker pool '\(poolCore.label)', not on the pool "
                + "'\(pool.poolCore.label)' given: a queue runs on its target's pool (name one of them)"
        )
    }
    return poolCore
}
