// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import Synchronization

/// A unit of work for the shared pool.
enum PoolUnit {
    /// Drain a serial queue (it owns its drain lock while scheduled).
    case drain(SerialCore)
    /// Run one started item of a concurrent queue (its reader slot or barrier is already taken). A unit the pool
    /// drops gives the slot back (``ConcurrentCore/startedItemDropped(_:barrier:)``).
    case concurrent(ConcurrentCore, QueueItem, barrier: Bool)
    /// Run a started barrier of a concurrent queue unless a `sync` caller claimed it first. A unit the pool drops
    /// claims it, and gives the queue back unrun (``settledForDrop()``).
    case claimedBarrier(ConcurrentCore, ItemClaim)
    /// Run a plain closure (timers, `concurrentPerform` helpers, group notifications without a queue, `run` bodies,
    /// preferred tasks' jobs), made where `origin` says.
    case job(() -> Void, origin: UnitOrigin = .none)
    /// Run a job a ``JobQueue`` started (its slot is taken and the job is executing), with the state observers read
    /// when it started. A unit the pool drops (a timed shutdown gave up on it) ends the job cancelled, never run
    /// (``Job/endUnrun(started:)``): its waiters, dependents and completion handlers are not left waiting for ever.
    case queuedJob(Job, observers: [@Sendable (Job, Job.State) -> Void])
    /// Run a job of Swift Concurrency's global executor once this pool took it over
    /// (``WorkerPool/installAsGlobalConcurrentExecutor()``): the job itself, no closure around it.
    case globalTask(UnownedJob, origin: UnitOrigin)

    /// The unit as a drop (the stopped pool's refusal, a timed shutdown's leftover) counts and releases it: a started
    /// barrier is claimed here, so that nobody runs it any more, and becomes the item it carried; nil when a `sync`
    /// caller claimed it first (it ran there: nothing is left to count or release).
    func settledForDrop() -> PoolUnit? {
        guard case .claimedBarrier(let core, let claim) = self else { return self }
        guard let item = claim.claim() else { return nil }
        return .concurrent(core, item, barrier: true)
    }

    /// Whether the unit carries a task (what a shutdown counts as not run when it drops the unit): not a serial
    /// queue's drain, whether the pool's or a target queue's (the drained tasks are the queue's own).
    var isTask: Bool {
        switch self {
        case .drain: false
        case .concurrent(_, let item, _): item.isTask
        default: true
        }
    }
}

/// A pool thread. `slot`, `local`, `picks`, `rotation`, `nextRuns`, `finishedEarly` and `blocked` are only touched by
/// the thread itself (`blocked` also under the pool lock); `parker` is stored to by wakers under the pool lock;
/// `parkedAt` is written by the thread and read by the monitor, both under the pool lock.
final class PoolWorker: BlockingObserver, @unchecked Sendable {
    /// The pool this thread belongs to (a worker keeps its pool alive while its thread runs).
    let poolCore: PoolCore
    /// Why the worker was woken, or that it is parked (see ``WorkerWake``).
    let parker = WorkerParker()
    /// The worker's slot in the pool, and the slot's local run queue (set when the thread starts).
    var slot = -1
    var local: PoolRunQueue?
    /// Units taken, for the fairness turns of ``PoolCore`` (every ``QoS/agingLimit`` + 1 picks).
    var picks: UInt = 0
    /// The next source a fairness turn looks at first.
    var rotation = 0
    /// Whether the thread is inside a blocking hook.
    var blocked = false
    /// Next-slot units run in a row (see ``PoolCore/nextRunLimit``).
    var nextRuns = 0
    /// Whether the running unit counted itself completed, and its worker searching, before its last act
    /// (``PoolCore/unitIsFinishing()``).
    var finishedEarly = false
    /// What the worker runs now, for the stall watchdog and the runtime snapshot (see ``WorkerActivity``).
    let activity = WorkerActivity()
    /// When the worker last went on the idle list (`CLOCK_MONOTONIC` ns): the monitor retires it
    /// ``PoolCore/idleTimeoutNanoseconds`` later if it is still there (see ``PoolCore/retireIdleWorkers(_:now:)``).
    var parkedAt: UInt64 = 0

    init(poolCore: PoolCore) { self.poolCore = poolCore }

    /// Gives the worker's running slot up while it blocks (see ``BlockingHook``).
    override func willBlock() { poolCore.workerWillBlock(self) }

    /// Takes a running slot again.
    override func didUnblock() { poolCore.workerDidUnblock(self) }
}
