// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import CThreading
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The core of a worker pool: the implementation behind ``WorkerPool``.
///
/// How it schedules (units, local run queues and their next slot, shards, picking and fairness turns, stealing,
/// parking and waking, the pool lock, blocking and the monitor, thread caps, life) is described once, in
/// ARCHITECTURE.md, "The scheduler"; the names used there are the ones used here.
///
/// Files: this one holds the state, the submission path and the hints; `PoolCore+Workers.swift` the threads,
/// `PoolCore+Blocking.swift` the blocking hooks, `PoolCore+Monitor.swift` the monitor and saturation,
/// `PoolCore+Shutdown.swift` the life and shutdown, `PoolCore+Fork.swift` the fork handlers,
/// `PoolCore+Statistics.swift` the counters, `PoolSlots.swift` the tables of run queues (slots and shards).
final class PoolCore: @unchecked Sendable, ForkParticipant {
    /// The process-wide default CPU pool, for queues that name none.
    static let shared = PoolCore(label: "threading.pool", threads: nil, blocking: false, processWide: true)

    /// The process-wide blocking pool (``WorkerPool/blocking``).
    static let sharedBlocking = PoolCore(
        label: "threading.blocking",
        threads: WorkerPool.defaultBlockingThreadCount,
        blocking: true,
        processWide: true
    )

    let label: String
    /// Whether this is a blocking pool (no compensation above `cores`, no idle threads kept).
    let isBlocking: Bool
    /// Whether this is one of the process-wide pools (never shut down).
    let isProcessWide: Bool
    let cores: Int
    let maxThreads: Int
    /// The most threads any pool has (``maxThreads`` is capped here) and the largest `threads` a pool accepts.
    ///
    /// A slot's local run queue (``PoolRunQueue``, a few hundred bytes) is made when a thread first takes the
    /// slot (``PoolSlots``), so a pool commits only a pointer per slot it may have (32 KB at the cap) until its
    /// threads exist. Linux's limits (`threads-max`, `RLIMIT_NPROC`) are usually tens of thousands or more, but a container
    /// may set them lower, so the system may still refuse threads below it: the pool then serves with the
    /// threads it has (see `reportThreadRefusal(of:code:threads:)`).
    static let threadLimit = 4096
    /// Idle threads kept alive (the others exit after the idle timeout).
    let keptThreads: Int
    static let idleTimeoutNanoseconds: UInt64 = 2_000_000_000
    static let monitorTickNanoseconds: UInt64 = 10_000_000
    /// The most units a worker's local queue holds; more go to a shared shard.
    static let localCapacity = 256
    /// The most next-slot units a worker runs in a row while other work waits (then it picks as usual).
    static let nextRunLimit = 16

    /// The shared shards (`shardCount` of them, a power of two).
    let shards: PoolSlots
    let shardCount: Int
    let shardMask: Int
    /// One local run queue per worker slot (`maxThreads` slots), made when a thread first takes the slot; slots
    /// `0..<slotBound` have been made (slots are taken lowest first, so the made ones are always a prefix).
    let slots: PoolSlots
    let slotBound = Atomic<Int>(0)

    /// The pool's lock, the state it guards (threads, idle workers, life, monitor, saturation) and the hints
    /// derived from that state for the lock-free paths.
    let lock: PoolLock
    /// `lock`'s hints, held here too: the submission path reads them on every unit, and a read through `lock`
    /// touches the cache line of its acquisition counter, which every lock section writes (a miss that shows in a
    /// concurrent queue's `bench pool-async`).
    let hints: PoolHints
    /// The futex word the monitor sleeps on while no work is pending (``MonitorState/sleeping``).
    let monitorWord = FutexWord.allocate()
    /// Rounds an idle worker spins (yielding) before it parks.
    static let idleSpinRounds = 64
    /// A yield taking longer than this ran another thread: the cores are oversubscribed.
    static let busyYieldNanoseconds: UInt64 = 20_000
    /// A blocking pool's unit that ran longer than this was a real blocking call (a sleep, a disk or network wait):
    /// its caller is not back with its next call within a spin, so the worker parks at once instead of searching
    /// (see `workerMain`). Go's scheduler draws the same line at about this length: a system call that outlasts
    /// 20 µs gives its processor away.
    static let shortCallNanoseconds: UInt64 = 50_000
    /// Workers that look for work without being woken (a CPU pool's spinners, a blocking pool's searchers): see
    /// `PoolIdle.swift`.
    let searching = PoolSearchers()

    /// Wake-ups of parked workers (statistics).
    let wakeUps = Atomic<UInt64>(0)

    /// Units submitted internally after the pool stopped (a timed shutdown left their work behind).
    let droppedAfterStop = Atomic<Int>(0)
    /// How long a pool stays saturated before it counts and says so.
    static let saturationGraceNanoseconds: UInt64 = 500_000_000
    /// The least time between two saturation warnings of one pool.
    static let saturationWarningIntervalNanoseconds: UInt64 = 10_000_000_000

    /// Pool threads the system refused to create (each was retried later).
    let spawnRefusals = Atomic<Int>(0)
    /// Timer and `asyncAfter` firings not queued because the pool was shut down.
    let cancelledFirings = Atomic<Int>(0)

    /// The pool's stall watchdog state, workers' activity and histograms (see ``PoolObservation``).
    let observation: PoolObservation

    /// Counts a firing not queued because the pool was shut down.
    func countCancelledFiring() { cancelledFirings.add(1, ordering: .relaxed) }

    /// Creates a pool: `threads` running threads (nil: the effective CPU count), a CPU or a blocking pool.
    ///
    /// - Parameter capped: A CPU pool that never has more threads than `threads` (its monitor adds none for a
    ///   worker it finds stuck): for tests whose outcome must be one worker's, on a loaded machine too.
    init(label: String, threads: Int?, blocking: Bool, processWide: Bool = false, capped: Bool = false) {
        self.label = label
        isBlocking = blocking
        isProcessWide = processWide
        // Clamped to `threadLimit` before any arithmetic: `4 * cores + 32` cannot overflow, and the slot table
        // below is one pointer per slot (each slot's run queue is made when a thread first takes it).
        cores = Swift.min(PoolCore.threadLimit, Swift.max(1, threads ?? Int(cthr_cpu_effective_count())))
        maxThreads = blocking || capped ? cores : Swift.min(PoolCore.threadLimit, Swift.max(40, 4 * cores + 32))
        keptThreads = blocking ? 0 : cores
        // Shards spread the submitting threads, whose number the CPUs bound, not the pool's threads: a blocking
        // pool's `cores` is its cap (512 for the process-wide one), which would give every scan for work (each
        // submission's and each worker's, several per call) 16 shards to read where the CPUs keep few in use.
        let spread = blocking ? Swift.min(cores, Int(cthr_cpu_effective_count())) : cores
        var shardCount = 1
        while shardCount < Swift.min(spread, 16) { shardCount *= 2 }
        let observation = PoolObservation(blocking: blocking)
        self.observation = observation
        shards = PoolSlots(filledWith: shardCount, observation: observation)
        self.shardCount = shardCount
        shardMask = shardCount - 1
        slots = PoolSlots(capacity: maxThreads)
        lock = PoolLock(cores: cores, reserving: Swift.min(maxThreads, 64))
        hints = lock.hints
        // fork(): the child gets empty pools and none of the parent's units (see `ForkRegistry`).
        ForkRegistry.register(self, as: .pool)
        RuntimeRegistry.register(self)
    }

    /// Units queued in the pool's run queues now (from the hints; sequentially consistent loads); with
    /// `includingNext`, the units in workers' next slots too (the monitor: a worker may be stuck before it runs one).
    /// A blocking pool's are all in its shards (see `PoolCore+Blocking.swift`).
    func pendingTotal(includingNext: Bool = false) -> Int {
        var total = 0
        for index in 0..<shardCount {
            total &+= shards.borrow(index) { $0.countHint.load(ordering: .sequentiallyConsistent) }
        }
        if isBlocking { return total }
        let bound = slotBound.load(ordering: .sequentiallyConsistent)
        for index in 0..<bound {
            slots.borrow(index) { slot in
                total &+= slot.countHint.load(ordering: .sequentiallyConsistent)
                if includingNext && slot.nextHint.load(ordering: .sequentiallyConsistent) { total &+= 1 }
            }
        }
        return total
    }

    /// Units submitted to the pool so far, and units run to completion (monotonic sums).
    func submittedTotal() -> UInt64 {
        var total: UInt64 = 0
        for index in 0..<shardCount { total &+= shards[index].submitted.load(ordering: .sequentiallyConsistent) }
        for index in 0..<slotBound.load(ordering: .sequentiallyConsistent) {
            total &+= slots[index].submitted.load(ordering: .sequentiallyConsistent)
        }
        return total
    }

    func completedTotal() -> UInt64 {
        var total: UInt64 = 0
        for index in 0..<slotBound.load(ordering: .sequentiallyConsistent) {
            total &+= slots[index].completed.load(ordering: .sequentiallyConsistent)
        }
        return total
    }

    /// Pool threads alive now.
    var liveThreads: Int { lock.withLock { $0.threads } }

    /// Workers parked now (read without the lock; a hint).
    var parkedWorkers: Int { hints.idle.load(ordering: .relaxed) }

    /// Whether units wait for a worker, next-slot units included (read without the lock; a hint): a drain that
    /// lingers for more items stops when its own worker's next unit waits.
    var hasPendingWork: Bool {
        for index in 0..<shardCount where shards.borrow(index, { $0.countHint.load(ordering: .relaxed) > 0 }) {
            return true
        }
        if isBlocking { return false }  // no units in local queues or next slots (see `PoolCore+Blocking.swift`)
        let bound = slotBound.load(ordering: .acquiring)  // acquiring: the slots below it are made
        for index in 0..<bound
        where slots.borrow(index, { $0.countHint.load(ordering: .relaxed) > 0 || $0.nextHint.load(ordering: .relaxed) })
        {
            return true
        }
        return false
    }

    // MARK: Submission

    /// Queues `unit` on `lane` and wakes or creates a worker if one is needed and a slot is free.
    ///
    /// A worker of a CPU pool puts it in its next slot (see ``PoolCore``), any other thread in its shared shard, and
    /// so does every thread for a blocking pool (see `PoolCore+Blocking.swift`); none takes the pool lock unless a
    /// worker must be woken or created (or the monitor started). No allocation beyond the run queues' rings growing
    /// past their high-water marks.
    ///
    /// Internal continuations that a timed shutdown left behind are refused once the pool stopped: they never run
    /// and are counted (public submissions trap earlier, in ``requireAccepting(_:)``).
    ///
    /// - Parameter yielding: The unit is work that yields the worker to others (a serial queue's drain that ran a
    ///   batch while other work waits): it goes to the tail of the local queue, never to the next slot (which would
    ///   run it again first), as Tokio does for a yielded task.
    /// - Returns: Whether the pool took the unit (false: the pool stopped).
    @discardableResult
    func schedule(_ unit: PoolUnit, lane: Int, yielding: Bool = false) -> Bool {
        if trySchedule(unit, lane: lane, yielding: yielding) { return true }
        countDropped(unit)
        return false
    }

    /// Queues `unit` as ``schedule(_:lane:yielding:)`` does, but leaves a refusal to the caller (uncounted): it returns false
    /// when the pool stopped, so the caller can run the work elsewhere (a task job falls back to the global
    /// executor). A pool that stopped refuses every unit; one that is draining still takes them.
    ///
    /// - Returns: Whether the pool took the unit.
    func trySchedule(_ unit: PoolUnit, lane: Int, yielding: Bool = false) -> Bool {
        let context = SchedulerThread.current
        if !isBlocking, let worker = context.pointee.worker?.takeUnretainedValue(), worker.poolCore === self,
            !worker.blocked, let local = worker.local
        {
            if yielding {
                switch local.push(unit, lane: lane) {
                case .pushed:
                    notify()
                    return true
                case .full:
                    return scheduleShared(unit, lane: lane, counted: true, context)
                case .closed:
                    return false
                }
            }
            switch local.pushNext(unit, lane: lane) {
            case .placed:
                // The worker runs it right after its current unit: nobody else needs waking for it. The monitor
                // must watch it, though (should the worker get stuck in a wait the pool cannot see).
                if hints.monitor.load(ordering: .sequentiallyConsistent) != MonitorState.running.hint {
                    notifySlow()
                }
                return true
            case .displaced:
                notify()
                return true
            case .full:
                return scheduleShared(unit, lane: lane, counted: true, context)
            case .closed:
                return false
            }
        }
        return scheduleShared(unit, lane: lane, counted: true, context)
    }

    /// Pushes `unit` to the calling thread's shared shard and notifies. False when the pool stopped (an
    /// uncounted unit, moved from a next slot with its submission time, is then counted as dropped here).
    @discardableResult
    func scheduleShared(
        _ unit: PoolUnit,
        lane: Int,
        counted: Bool,
        submittedAt: UInt64? = nil,
        _ context: ThreadContext
    ) -> Bool {
        let pushed = shards.borrow(context.pointee.shard & shardMask) { shard in
            shard.push(unit, lane: lane, counted: counted, submittedAt: submittedAt)
        }
        if case .closed = pushed {
            if !counted { countDropped(unit) }
            return false
        }
        notify()
        return true
    }

    /// Counts a unit the stopped pool refused, unless it is a serial queue's drain (``PoolUnit/isTask``: a drain is
    /// no task, and the tasks it would have run are counted by the queue, ``PoolMember/abandonAtStop()``) or a
    /// started barrier that a `sync` caller ran (``PoolUnit/settledForDrop()``), and releases it.
    func countDropped(_ refused: PoolUnit) {
        guard let unit = refused.settledForDrop() else { return }
        if unit.isTask { droppedAfterStop.add(1, ordering: .relaxed) }
        PoolCore.unitDropped(unit)
    }

    /// What a unit the pool releases unrun (refused, or dropped by a timed shutdown) owes the work it carried: a job
    /// queue's started job ends cancelled; a concurrent queue's started item gives its reader slot or barrier back
    /// (and a target queue's item its child's, ``QueueCore/releaseUnrun(_:)-(QueueItem)``), so that a later barrier
    /// or `sync` on the queue is not held for ever by work that never runs. (The other units' work answers from its
    /// own release: a group's task leaves its group, a `run` resumes its caller with an error.) Called outside the
    /// pool's lock and every queue's.
    static func unitDropped(_ unit: PoolUnit) {
        switch unit {
        case .queuedJob(let job, _):
            job.endUnrun(started: true)
        case .concurrent(let core, let item, let barrier):
            core.startedItemDropped(item, barrier: barrier)
        case .claimedBarrier:
            if let settled = unit.settledForDrop() { unitDropped(settled) }
        case .drain, .job, .globalTask:
            break
        }
    }

    /// Moves `worker`'s next-slot unit into its local queue (or a shard when that is full), where any worker may
    /// take it, and notifies.
    func spillNext(_ worker: PoolWorker, _ local: PoolRunQueue) {
        switch local.spillNext() {
        case .empty:
            break
        case .moved:
            notify()
        case .overflow(let unit, let lane, let submittedAt):
            scheduleShared(unit, lane: lane, counted: false, submittedAt: submittedAt, SchedulerThread.current)
        }
    }

    /// After a push: wakes or creates one worker if none is spinning, one could take the work, and a slot is free;
    /// starts or wakes the monitor. Lock-free unless one of those is needed.
    @inline(__always)
    func notify() {
        if isBlocking { return notifyBlocking() }
        if hints.monitor.load(ordering: .sequentiallyConsistent) != MonitorState.running.hint
            || (searching.current == 0
                && (hints.idle.load(ordering: .sequentiallyConsistent) > 0
                    || hints.running.load(ordering: .sequentiallyConsistent)
                        < hints.limit.load(ordering: .sequentiallyConsistent)))
        {
            notifySlow()
        }
    }

    @inline(never)
    func notifySlow() {
        var wake: PoolWorker?
        var spawnOne = false
        var startMonitor = false
        var wakeMonitor = false
        var spawnCount = 0
        lock.withLock { synced in
            if isBlocking {
                // A worker for each unit that no searching worker will take (see `PoolCore+Blocking.swift`).
                if !synced.life.isStopped { (wake, spawnCount) = dispatchBlocking(&synced) }
            } else if !synced.life.isStopped && searching.current == 0
                && synced.running < synced.limit && pendingTotal() > synced.wokenForWork
            {
                if let worker = synced.wakeIdleWorker(.forWork) {
                    wake = worker
                } else if synced.threads < maxThreads {
                    synced.addThread()
                    spawnOne = true
                }
            }
            switch synced.monitor {
            case .notStarted:
                synced.monitor = .running
                startMonitor = true
            case .sleeping:
                synced.monitor = .running
                monitorWord.store(1)
                wakeMonitor = true
            case .running:
                break
            }
        }
        if let wake {
            wakeUps.wrappingAdd(1, ordering: .relaxed)
            wake.parker.wake()
        }
        if spawnOne { spawn(PoolWorker(poolCore: self)) }
        for _ in 0..<spawnCount { spawn(PoolWorker(poolCore: self)) }
        if startMonitor { self.startMonitor() }
        if wakeMonitor { monitorWord.wake() }
    }

    /// Wakes idle workers or makes room for new ones while slots are free and units wait that no spinning worker
    /// will take (`pending`: the units to count, by default those queued); a blocking pool makes a thread only while
    /// more units are in flight than it has threads (see `PoolCore+Blocking.swift`). Returns how many threads to
    /// create once the lock is released. Inside a ``PoolLock/withLock(_:)`` section.
    func dispatch(_ synced: inout PoolState, allowSpawn: Bool, pending: Int? = nil) -> Int {
        var budget =
            (pending ?? pendingTotal()) - searching.current
            - synced.wokenForWork
        var spawnCount = 0
        while synced.running < synced.limit && budget > 0 {
            if let worker = synced.wakeIdleWorker(isBlocking ? .searching : .forWork) {
                // A blocking pool's woken worker counts as searching until it takes a unit (`PoolCore+Blocking.swift`).
                if isBlocking { searching.start() }
                wakeUps.wrappingAdd(1, ordering: .relaxed)
                worker.parker.wake()
            } else if allowSpawn && synced.threads < maxThreads
                && (!isBlocking || unitsInFlight(outnumber: synced.threads))
            {
                synced.addThread()
                spawnCount += 1
                if isBlocking { searching.start() }  // so does a new one
            } else {
                break
            }
            budget -= 1
        }
        return spawnCount
    }
}
