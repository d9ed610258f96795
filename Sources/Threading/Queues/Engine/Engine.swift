// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import CThreading
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A unit of work for the shared pool.
enum EngineUnit {
    /// Drain a serial queue (it owns its drain lock while scheduled).
    case drain(SerialCore)
    /// Run one started item of a concurrent queue (its reader slot or barrier is already taken).
    case concurrent(ConcurrentCore, QueueItem, barrier: Bool)
    /// Run a started barrier of a concurrent queue unless a `sync` caller claimed it first.
    case claimedBarrier(ConcurrentCore, EngineClaim)
    /// Run a plain closure (timers, `concurrentPerform` helpers, group notifications without a queue).
    case job(() -> Void)
}

/// A started item that either a pool worker or a thread waiting for it runs: whoever claims it first.
/// Only the winner of `claim()` touches `item`, so the closure is released as soon as it ran.
final class EngineClaim: @unchecked Sendable {
    private var item: QueueItem?
    private let claimed = Atomic<Bool>(false)

    init(_ item: QueueItem) { self.item = item }

    /// The item, for the one caller that claims it first; nil for everybody else.
    func claim() -> QueueItem? {
        guard claimed.compareExchange(expected: false, desired: true, ordering: .acquiringAndReleasing).exchanged
        else { return nil }
        defer { item = nil }
        return item
    }
}

/// A pool thread. `slot`, `local`, `picks`, `rotation`, `nextRuns` and `blocked` are only touched by the thread itself
/// (`blocked` also under the engine lock); `parker` is stored to by wakers under the engine lock.
final class EngineWorker: @unchecked Sendable {
    /// The pool this thread belongs to (a worker keeps its pool alive while its thread runs).
    let engine: Engine
    /// 0 = parked or about to park, 1 = woken (a waker took it off the idle list and gave it a running slot).
    let parker = EngineWord.allocate()
    /// The worker's slot in the pool, and the slot's local run queue (set when the thread starts).
    var slot = -1
    var local: EngineRunQueue?
    /// Units taken, for the fairness turns of ``Engine`` (every ``QoS/agingLimit`` + 1 picks).
    var picks: UInt = 0
    /// The next source a fairness turn looks at first.
    var rotation = 0
    /// Whether the thread is inside a blocking hook.
    var blocked = false
    /// Next-slot units run in a row (see ``Engine/nextRunLimit``).
    var nextRuns = 0

    init(engine: Engine) { self.engine = engine }

}

/// A worker pool of the queue engine: the implementation behind ``WorkerPool``.
///
/// The scheduler (see the Queues article): no lock is shared by all producers and workers on the task path.
/// - **Local queues.** Each worker slot has an ``EngineRunQueue`` of ``localCapacity`` units. A worker that submits
///   to its own pool pushes there (only its owner pushes; it takes its own lock, which only an occasional thief
///   shares); when it is full, the unit goes to an injection shard.
/// - **Next slot.** A unit a worker submits to its own pool goes first into its local queue's next slot (Tokio's
///   LIFO slot, Go's `runnext`), displacing the previous occupant into the local queue proper: the worker runs it
///   right after its current unit, so no other worker is woken for it (a message to an actor on a serial queue, a
///   continuation, runs on the same warm thread). It is bounded: after ``nextRunLimit`` next-slot units in a row,
///   while other work waits, the slot's unit moves to the local queue and the worker picks as usual. A worker that
///   blocks in one of the engine's waits first moves it to the local queue; a thief that found nothing else takes it;
///   the monitor counts it as pending work (a worker stuck in a wait the engine cannot see does not strand it).
/// - **Injection shards.** Other threads push to one of ``shardCount`` run queues (a power of two, the cores rounded
///   up, at most 16), chosen by the thread's number (`EngineThreadState.shard`): producers are spread round-robin
///   and two producers share a shard's lock only when there are more producers than shards.
/// - **Picking.** A worker takes the unit of the highest lane it sees on its local queue and on the shards (the
///   hints, read without locks). Every ``QoS/agingLimit`` + 1 picks it takes a fairness turn instead: the next
///   source in rotation (its local queue, then each shard) that has work, whatever the lanes. Inside one run queue
///   lanes age (a lane passed over ``QoS/agingLimit`` times is served next). So higher lanes go first, and a unit
///   in any queue is reached within a bounded number of picks: lower lanes are never starved.
/// - **Stealing.** A worker with nothing local and nothing injected takes one unit from another worker's local
///   queue (under that queue's lock).
/// - **Parking.** A worker that finds nothing spins briefly (yielding, see ``idleSpinRounds``), then parks on its
///   own futex word. A submission wakes at most one worker, and only when no worker is spinning (a spinner takes
///   the work itself) and a slot is free; a spinner that finds work while more is pending passes the wake-up on.
///   The engine lock is taken only to park, to wake, to create threads, by blocking hooks, the monitor, shutdown
///   and statistics: never per task while workers are busy.
/// - At most `cores + extraSlots` workers are active (running or searching) at once (`cores` is the pool's thread
///   count: for the shared pool `cthr_cpu_effective_count()`, the affinity mask lowered to the cgroup CPU quota). A
///   worker that blocks in one of the engine's own waits (`sync` on a busy queue, `WorkGroup.wait`,
///   `WorkItem.wait`, a blocking region) leaves the active count (``willBlock(_:)``), so another worker is woken or
///   created while work is pending (it steals the blocked worker's local units). Blocking the engine cannot see (a
///   foreign lock, `sleep`) is caught by the pool's monitor thread: every 10 ms, if work is pending, every slot is
///   busy and no unit finished since the last tick, it grants one extra slot.
/// - Threads are capped at ``maxThreads``: for a CPU pool `max(40, 4 × cores + 32)` (enough for 32 tasks that all
///   wait for each other plus the cores' worth of runnable work, yet bounded: libdispatch makes one thread per
///   blocked serial queue); for a blocking pool exactly `cores`; never above ``threadLimit``. Idle workers above
///   ``keptThreads`` exit after ``idleTimeoutNanoseconds``.
/// - Life: running, then draining (``shutdown(deadline:members:)``: only threads of the pool may still submit),
///   then stopped (every run queue is closed, every thread exits; the shutting-down thread joins them).
final class Engine: @unchecked Sendable, EngineForkParticipant {
    /// The process-wide default CPU pool, for queues that name none.
    static let shared = Engine(label: "threading.pool", threads: nil, blocking: false, processWide: true)

    /// The process-wide blocking pool (``WorkerPool/blocking``).
    static let sharedBlocking = Engine(
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
    /// A slot's local run queue (``EngineRunQueue``, a few hundred bytes) is made when a thread first takes the
    /// slot (``EngineSlots``), so a pool commits only a pointer per slot it may have (32 KB at the cap) until its
    /// threads exist. Linux's limits (`threads-max`, `RLIMIT_NPROC`) are usually tens of thousands or more, but a container
    /// may set them lower, so the system may still refuse threads below it: the engine then serves with the
    /// threads it has (see ``reportRefusal(of:code:threads:)``).
    static let threadLimit = 4096
    /// Idle threads kept alive (the others exit after the idle timeout).
    let keptThreads: Int
    static let idleTimeoutNanoseconds: UInt64 = 2_000_000_000
    static let monitorTickNanoseconds: UInt64 = 10_000_000
    /// The most units a worker's local queue holds; more go to an injection shard.
    static let localCapacity = 256
    /// The most next-slot units a worker runs in a row while other work waits (then it picks as usual).
    static let nextRunLimit = 16

    /// The injection shards (`shardCount` of them, a power of two).
    private let shards: [EngineRunQueue]
    private let shardMask: Int
    var shardCount: Int { shards.count }
    /// One local run queue per worker slot (`maxThreads` slots), made when a thread first takes the slot; slots
    /// `0..<slotBound` have been made (slots are taken lowest first, so the made ones are always a prefix).
    private let slots: EngineSlots
    private let slotBound = Atomic<Int>(0)

    private let lock = EngineLock()
    /// Rounds an idle worker spins (yielding) before it parks.
    static let idleSpinRounds = 64
    /// A yield taking longer than this ran another thread: the cores are oversubscribed.
    static let busyYieldNanoseconds: UInt64 = 20_000
    /// Slots a thread held and gave back (guarded by the lock); a thread takes one of these first, else the next
    /// slot never made (`slotBound`), so the made slots stay the prefix `0..<slotBound`.
    private var freeSlots: [Int] = []
    /// Guarded by `lock`, between the fork handlers only: the forking thread's slot if it is a worker of this pool
    /// (else -1), and the free slots the child starts with, made by the prepare handler (see ``forkChild(_:)``).
    private var forkSlot = -1
    private var forkFreeSlots: [Int] = []
    private var idle: [EngineWorker] = []
    private var threads = 0
    /// Active workers: running a unit or searching for one (guarded by the lock, mirrored in `runningHint`).
    private var running = 0
    private var blockedCount = 0
    private var extraSlots = 0
    private var peakThreads = 0
    private var monitorStarted = false
    private var monitorSleeping = false
    private let monitorWord = EngineWord.allocate()

    // Hints for the lock-free submission path (written under the lock, sequentially consistent).
    private let runningHint = Atomic<Int>(0)
    private let limitHint = Atomic<Int>(0)
    private let idleHint = Atomic<Int>(0)
    /// 0: the monitor is not started; 1: it runs; 2: it sleeps until work comes.
    private let monitorHint = Atomic<Int>(0)
    /// Workers spinning for work before they park (they take pending work themselves, so nobody wakes them).
    private let spinning = Atomic<Int>(0)

    // Statistics counters.
    private let wakeUps = Atomic<UInt64>(0)
    private let lockAcquisitions = Atomic<UInt64>(0)

    /// The pool's life (guarded by the lock; mirrored in `lifeHint` for lock-free submission checks).
    private var life = Life.running {
        didSet { lifeHint.store(life.rawValue, ordering: .sequentiallyConsistent) }
    }
    private let lifeHint = Atomic<Int>(Life.running.rawValue)
    /// Threads that exited because the pool stopped, to be joined by the shutting-down thread.
    private var exited: [pthread_t] = []
    /// Set when the shutting-down thread no longer joins: late exits detach themselves.
    private var joinerGone = false
    /// Units submitted internally after the pool stopped (a timed shutdown left their work behind).
    private let droppedAfterStop = Atomic<Int>(0)
    /// When the current saturation began (0: not saturated), whether it was counted, and when the last warning was
    /// printed (guarded by the lock; only the monitor touches them).
    private var saturatedSince: UInt64 = 0
    private var saturationCounted = false
    private var lastSaturationWarning: UInt64 = 0
    /// Saturation episodes that outlasted the grace period, and warnings printed for them (guarded by the lock).
    private var saturations = 0
    private var saturationWarnings = 0
    /// How long a pool stays saturated before it counts and says so.
    static let saturationGraceNanoseconds: UInt64 = 500_000_000
    /// The least time between two saturation warnings of one pool.
    static let saturationWarningIntervalNanoseconds: UInt64 = 10_000_000_000

    /// Timer and `asyncAfter` firings not queued because the pool was shut down.
    let cancelledFirings = Atomic<Int>(0)

    /// Counts a firing not queued because the pool was shut down.
    func countCancelledFiring() { cancelledFirings.add(1, ordering: .relaxed) }

    /// The pool's life: running, draining (shutdown began), stopped (threads exit).
    enum Life: Int {
        case running = 0
        case draining = 1
        case stopped = 2
    }

    /// Creates a pool: `threads` running threads (nil: the effective CPU count), a CPU or a blocking pool.
    init(label: String, threads: Int?, blocking: Bool, processWide: Bool = false) {
        self.label = label
        isBlocking = blocking
        isProcessWide = processWide
        // Clamped to `threadLimit` before any arithmetic: `4 * cores + 32` cannot overflow, and the slot table
        // below is one pointer per slot (each slot's run queue is made when a thread first takes it).
        cores = Swift.min(Engine.threadLimit, Swift.max(1, threads ?? Int(cthr_cpu_effective_count())))
        maxThreads = blocking ? cores : Swift.min(Engine.threadLimit, Swift.max(40, 4 * cores + 32))
        keptThreads = blocking ? 0 : cores
        var shardCount = 1
        while shardCount < Swift.min(cores, 16) { shardCount *= 2 }
        shards = (0..<shardCount).map { _ in EngineRunQueue(capacity: .max) }
        shardMask = shardCount - 1
        slots = EngineSlots(capacity: maxThreads)
        idle.reserveCapacity(Swift.min(maxThreads, 64))
        exited.reserveCapacity(Swift.min(maxThreads, 64))
        limitHint.store(cores, ordering: .relaxed)
        // fork(): the child gets empty pools and none of the parent's units (see `EngineFork`).
        EngineFork.register(self, as: .pool)
    }

    /// Takes the engine lock, counting the acquisition (statistics: the task path takes it only to wake or park).
    @inline(__always)
    private func lockEngine() {
        lock.lock()
        lockAcquisitions.wrappingAdd(1, ordering: .relaxed)
    }

    /// Publishes the lock-guarded counts the submission path reads without the lock. Engine lock held.
    @inline(__always)
    private func publishLocked() {
        runningHint.store(running, ordering: .sequentiallyConsistent)
        idleHint.store(idle.count, ordering: .sequentiallyConsistent)
        limitHint.store(limit, ordering: .sequentiallyConsistent)
    }

    /// `fork()` prepare handler (see ``EngineFork``): holds the engine lock and every run queue's lock across the
    /// fork (in that order; no path takes the engine lock while holding a run queue's).
    /// It also makes what the child handler needs: which slot the forking thread (the calling one) holds, and the
    /// child's free slots (see ``EngineFork`` on the runtime's types in a child).
    func forkPrepare() {
        lock.lock()
        for index in 0..<shards.count { shards[index].forkPrepare() }
        let made = slotBound.load(ordering: .relaxed)  // no slot is made while the engine lock is held
        for index in 0..<made { slots[index].forkPrepare() }
        forkSlot = -1
        if let worker = EngineThread.current.pointee.worker?.takeUnretainedValue(), worker.engine === self {
            forkSlot = worker.slot
        }
        forkFreeSlots = (0..<made).reversed().filter { $0 != forkSlot }
    }

    /// `fork()` handler in the parent.
    func forkParent() {
        forkFreeSlots = []
        for index in (0..<slotBound.load(ordering: .relaxed)).reversed() { slots[index].forkParent() }
        for index in (0..<shards.count).reversed() { shards[index].forkParent() }
        lock.unlock()
    }

    /// `fork()` handler in the child (one thread, the locks held by `forkPrepare`): none of the parent's pool
    /// or monitor threads exist here, and none of the units the parent accepted may run here, so the pool restarts
    /// empty with no pending work and grows again on the child's first submission. The dropped units are abandoned,
    /// never released (see ``EngineFork``). If the forking thread is itself a worker of this pool, it stays one: it
    /// counts as the pool's one running thread and keeps its slot. A pool that was shutting down or stopped stays so.
    ///
    /// Index loops and stored values only (no closures, iterators, ranges or growing arrays), with what needs more
    /// made by ``forkPrepare()``: see ``EngineFork`` on the runtime's types in a child.
    func forkChild(_ forking: EngineContext) {
        let forkingSlot = forkSlot
        let isWorker = forkingSlot >= 0
        var index = 0
        while index < shards.count {
            shards[index].forkChild(running: false)
            index += 1
        }
        index = 0
        let made = slotBound.load(ordering: .relaxed)
        while index < made {
            slots[index].forkChild(running: index == forkingSlot)
            index += 1
        }
        index = 0
        while index < idle.count {
            _ = Unmanaged.passRetained(idle[index])  // their threads are gone; nothing is freed here
            index += 1
        }
        idle = []
        freeSlots = forkFreeSlots
        threads = isWorker ? 1 : 0
        running = isWorker ? 1 : 0
        spinning.store(0, ordering: .relaxed)
        blockedCount = 0
        extraSlots = 0
        peakThreads = threads
        monitorStarted = false
        monitorSleeping = false
        monitorHint.store(0, ordering: .relaxed)
        monitorWord.store(0)
        exited = []  // the parent's threads: nothing to join here
        publishLocked()
        lock.unlock()
    }

    private var limit: Int { cores + extraSlots }

    /// Units queued in the pool's run queues now (from the hints; sequentially consistent loads); with
    /// `includingNext`, the units in workers' next slots too (the monitor: a worker may be stuck before it runs one).
    private func pendingTotal(includingNext: Bool = false) -> Int {
        var total = 0
        for index in 0..<shards.count { total &+= shards[index].countHint.load(ordering: .sequentiallyConsistent) }
        let bound = slotBound.load(ordering: .sequentiallyConsistent)
        for index in 0..<bound {
            total &+= slots[index].countHint.load(ordering: .sequentiallyConsistent)
            if includingNext && slots[index].nextHint.load(ordering: .sequentiallyConsistent) { total &+= 1 }
        }
        return total
    }

    /// Units submitted to the pool so far, and units run to completion (monotonic sums).
    private func submittedTotal() -> UInt64 {
        var total: UInt64 = 0
        for index in 0..<shards.count { total &+= shards[index].submitted.load(ordering: .sequentiallyConsistent) }
        for index in 0..<slotBound.load(ordering: .sequentiallyConsistent) {
            total &+= slots[index].submitted.load(ordering: .sequentiallyConsistent)
        }
        return total
    }

    private func completedTotal() -> UInt64 {
        var total: UInt64 = 0
        for index in 0..<slotBound.load(ordering: .sequentiallyConsistent) {
            total &+= slots[index].completed.load(ordering: .sequentiallyConsistent)
        }
        return total
    }

    /// Pool threads alive now.
    var liveThreads: Int {
        lockEngine()
        defer { lock.unlock() }
        return threads
    }

    /// Workers parked now (read without the lock; a hint).
    var parkedWorkers: Int { idleHint.load(ordering: .relaxed) }

    /// Whether units wait for a worker, next-slot units included (read without the lock; a hint): a drain that
    /// lingers for more items stops when its own worker's next unit waits.
    var hasPendingWork: Bool {
        for index in 0..<shards.count where shards[index].countHint.load(ordering: .relaxed) > 0 { return true }
        let bound = slotBound.load(ordering: .acquiring)  // acquiring: the slots below it are made
        for index in 0..<bound
        where slots[index].countHint.load(ordering: .relaxed) > 0 || slots[index].nextHint.load(ordering: .relaxed) {
            return true
        }
        return false
    }

    // MARK: Submission

    /// Queues `unit` on `lane` and wakes or creates a worker if one is needed and a slot is free.
    ///
    /// A worker of this pool puts it in its next slot (see ``Engine``), any other thread in its injection shard;
    /// neither takes the engine lock unless a worker must be woken or created (or the monitor started). No
    /// allocation beyond the run queues' rings growing past their high-water marks.
    ///
    /// Internal continuations that a timed shutdown left behind are refused once the pool stopped: they never run
    /// and are counted (public submissions trap earlier, in ``requireAccepting(_:)``).
    ///
    /// - Parameter yielding: The unit is work that yields the worker to others (a serial queue's drain that ran a
    ///   batch while other work waits): it goes to the tail of the local queue, never to the next slot (which would
    ///   run it again first), as Tokio does for a yielded task.
    /// - Returns: Whether the pool took the unit (false: the pool stopped).
    @discardableResult
    func submit(_ unit: EngineUnit, lane: Int, yielding: Bool = false) -> Bool {
        if trySubmit(unit, lane: lane, yielding: yielding) { return true }
        countDropped(unit)
        return false
    }

    /// Queues `unit` as ``submit(_:lane:)`` does, but leaves a refusal to the caller (uncounted): it returns false
    /// when the pool stopped, so the caller can run the work elsewhere (a task job falls back to the global
    /// executor). A pool that stopped refuses every unit; one that is draining still takes them.
    ///
    /// - Returns: Whether the pool took the unit.
    func trySubmit(_ unit: EngineUnit, lane: Int, yielding: Bool = false) -> Bool {
        let context = EngineThread.current
        if let worker = context.pointee.worker?.takeUnretainedValue(), worker.engine === self, !worker.blocked,
            let local = worker.local
        {
            if yielding {
                switch local.push(unit, lane: lane) {
                case .pushed:
                    notify()
                    return true
                case .full:
                    return inject(unit, lane: lane, counted: true, context)
                case .closed:
                    return false
                }
            }
            switch local.pushNext(unit, lane: lane) {
            case .placed:
                // The worker runs it right after its current unit: nobody else needs waking for it. The monitor
                // must watch it, though (should the worker get stuck in a wait the engine cannot see).
                if monitorHint.load(ordering: .sequentiallyConsistent) != 1 { notifySlow() }
                return true
            case .displaced:
                notify()
                return true
            case .overflow(let previous, let previousLane):
                inject(previous, lane: previousLane, counted: false, context)
                return true
            case .closed:
                return false
            }
        }
        return inject(unit, lane: lane, counted: true, context)
    }

    /// Pushes `unit` to the calling thread's injection shard and notifies. False when the pool stopped (an
    /// uncounted unit, moved from a next slot, is then counted as dropped here).
    @discardableResult
    private func inject(_ unit: EngineUnit, lane: Int, counted: Bool, _ context: EngineContext) -> Bool {
        if case .closed = shards[context.pointee.shard & shardMask].push(unit, lane: lane, counted: counted) {
            if !counted { countDropped(unit) }
            return false
        }
        notify()
        return true
    }

    /// Counts a unit the stopped pool refused, unless it is a serial queue's drain: a drain is no task, and the
    /// tasks it would have run are counted by the queue (``EnginePoolMember/abandonAtStop()``).
    private func countDropped(_ unit: EngineUnit) {
        if case .drain = unit { return }
        droppedAfterStop.add(1, ordering: .relaxed)
    }

    /// Moves `worker`'s next-slot unit into its local queue (or a shard when that is full), where any worker may
    /// take it, and notifies.
    private func spillNext(_ worker: EngineWorker, _ local: EngineRunQueue) {
        switch local.spillNext() {
        case .placed, .closed:
            break
        case .displaced:
            notify()
        case .overflow(let unit, let lane):
            inject(unit, lane: lane, counted: false, EngineThread.current)
        }
    }

    /// After a push: wakes or creates one worker if none is spinning, one could take the work, and a slot is free;
    /// starts or wakes the monitor. Lock-free unless one of those is needed.
    @inline(__always)
    private func notify() {
        if monitorHint.load(ordering: .sequentiallyConsistent) != 1
            || (spinning.load(ordering: .sequentiallyConsistent) == 0
                && (idleHint.load(ordering: .sequentiallyConsistent) > 0
                    || runningHint.load(ordering: .sequentiallyConsistent)
                        < limitHint.load(ordering: .sequentiallyConsistent)))
        {
            notifySlow()
        }
    }

    @inline(never)
    private func notifySlow() {
        lockEngine()
        var wake: EngineWorker?
        var spawnOne = false
        var startMonitor = false
        var wakeMonitor = false
        if life != .stopped && spinning.load(ordering: .sequentiallyConsistent) == 0 && running < limit
            && pendingTotal() > 0
        {
            if let worker = idle.popLast() {
                worker.parker.store(1)
                running += 1
                wake = worker
            } else if threads < maxThreads {
                threads += 1
                peakThreads = Swift.max(peakThreads, threads)
                running += 1
                spawnOne = true
            }
            publishLocked()
        }
        if !monitorStarted {
            monitorStarted = true
            monitorHint.store(1, ordering: .sequentiallyConsistent)
            startMonitor = true
        } else if monitorSleeping {
            monitorSleeping = false
            monitorHint.store(1, ordering: .sequentiallyConsistent)
            monitorWord.store(1)
            wakeMonitor = true
        }
        lock.unlock()
        if let wake {
            wakeUps.wrappingAdd(1, ordering: .relaxed)
            wake.parker.wake()
        }
        if spawnOne { spawn(EngineWorker(engine: self)) }
        if startMonitor { self.startMonitor() }
        if wakeMonitor { monitorWord.wake() }
    }

    /// Wakes idle workers or makes room for new ones while slots are free and units wait that no spinning worker
    /// will take (`pending`: the units to count, by default those queued). Returns how many threads to create once the
    /// lock is released. Engine lock held.
    private func dispatchLocked(allowSpawn: Bool, pending: Int? = nil) -> Int {
        var budget = (pending ?? pendingTotal()) - spinning.load(ordering: .sequentiallyConsistent)
        var spawnCount = 0
        while running < limit && budget > 0 {
            if let worker = idle.popLast() {
                worker.parker.store(1)
                running += 1
                wakeUps.wrappingAdd(1, ordering: .relaxed)
                worker.parker.wake()
            } else if allowSpawn && threads < maxThreads {
                threads += 1
                peakThreads = Swift.max(peakThreads, threads)
                running += 1
                spawnCount += 1
            } else {
                break
            }
            budget -= 1
        }
        publishLocked()
        return spawnCount
    }

    // MARK: Workers

    private func spawn(_ worker: EngineWorker) {
        let context = Unmanaged.passRetained(worker).toOpaque()
        let code = spawnEngineThread(named: threadName, context: context) { raw in
            let worker = Unmanaged<EngineWorker>.fromOpaque(raw!).takeRetainedValue()
            worker.engine.workerMain(worker)
            return nil
        }
        if code != 0 {
            // No thread (RLIMIT_NPROC, memory): give the slot up (the units stay queued). A worker that went idle
            // meanwhile is woken for them; otherwise a running worker or the monitor's next tick (which retries the
            // spawn) picks them up. Never spawn again from here: a refusing system would make that loop.
            Unmanaged<EngineWorker>.fromOpaque(context).release()
            spawnRefusals.add(1, ordering: .relaxed)
            lockEngine()
            threads -= 1
            running -= 1
            _ = dispatchLocked(allowSpawn: false)
            let remaining = threads
            lock.unlock()
            Engine.reportRefusal(of: "pool", code: code, threads: remaining)
        }
    }

    /// The name of the pool's threads: its label, truncated by the system to 15 bytes.
    private var threadName: String { label }

    /// Pool threads the system refused to create (each was retried later).
    let spawnRefusals = Atomic<Int>(0)

    /// Whether a refused thread was reported on stderr (once per process).
    private static let refusalReported = Atomic<Bool>(false)

    /// Reports the first thread the system refuses the engine, once per process, on stderr (a server's log): the
    /// engine keeps serving with the threads it has and retries later, so this is a warning, not an error.
    static func reportRefusal(of what: String, code: CInt, threads: Int) {
        if refusalReported.exchange(true, ordering: .relaxed) { return }
        let message =
            "Threading: the system refused a new \(what) thread (pthread_create: \(errnoName(code))); the queue "
            + "engine keeps serving with its \(threads) pool thread(s) and retries later (reported once)\n"
        writeStandardError(message)
    }

    /// Takes the next unit for `worker`: its fairness turn, else the highest lane of its local queue and the
    /// shards, else one stolen from another worker's local queue. Nil when it found none.
    @inline(__always)
    private func findWork(_ worker: EngineWorker, _ local: EngineRunQueue) -> EngineUnit? {
        worker.picks &+= 1
        if worker.picks % UInt(QoS.agingLimit + 1) == 0, let unit = takeFairnessTurn(worker, local) { return unit }
        let home = worker.slot
        for _ in 0..<4 {
            var best: EngineRunQueue?
            var bestLane = UInt32.bitWidth
            let localMask = local.laneMaskHint.load(ordering: .relaxed)
            if localMask != 0 {
                best = local
                bestLane = localMask.trailingZeroBitCount
            }
            for offset in 0..<shards.count {
                let shard = shards[(home &+ offset) & shardMask]
                let mask = shard.laneMaskHint.load(ordering: .relaxed)
                if mask != 0 && mask.trailingZeroBitCount < bestLane {
                    best = shard
                    bestLane = mask.trailingZeroBitCount
                }
            }
            guard let best else { break }
            if let unit = best.take() { return unit }
        }
        return steal(worker, local)
    }

    /// A fairness turn: the first source with work in rotation (the local queue, then each shard), whatever the
    /// lanes, so that no queue waits behind higher lanes elsewhere for ever.
    @inline(never)
    private func takeFairnessTurn(_ worker: EngineWorker, _ local: EngineRunQueue) -> EngineUnit? {
        let sources = shards.count + 1
        for step in 0..<sources {
            let index = (worker.rotation &+ step) % sources
            let queue = index == shards.count ? local : shards[index]
            if queue.countHint.load(ordering: .relaxed) > 0, let unit = queue.take() {
                worker.rotation = index &+ 1
                return unit
            }
        }
        return nil
    }

    /// Takes one unit from another worker's local queue.
    @inline(never)
    private func steal(_ worker: EngineWorker, _ local: EngineRunQueue) -> EngineUnit? {
        let bound = slotBound.load(ordering: .acquiring)
        guard bound > 1 else { return nil }
        for offset in 1..<bound {
            let victim = slots[(worker.slot &+ offset) % bound]
            if victim.countHint.load(ordering: .relaxed) > 0, let unit = victim.take() {
                local.steals.wrappingAdd(1, ordering: .relaxed)
                return unit
            }
        }
        // Last resort: a unit in another worker's next slot (its owner may be stuck in a wait the engine cannot see).
        for offset in 1..<bound {
            let victim = slots[(worker.slot &+ offset) % bound]
            if victim.nextHint.load(ordering: .relaxed), let unit = victim.takeNext() {
                local.steals.wrappingAdd(1, ordering: .relaxed)
                return unit
            }
        }
        return nil
    }

    /// Whether any run queue of the pool holds units (sequentially consistent: see `parkLocked`).
    private func hasWork() -> Bool {
        for index in 0..<shards.count where shards[index].countHint.load(ordering: .sequentiallyConsistent) > 0 {
            return true
        }
        let bound = slotBound.load(ordering: .sequentiallyConsistent)
        for index in 0..<bound where slots[index].countHint.load(ordering: .sequentiallyConsistent) > 0 {
            return true
        }
        return false
    }

    private func workerMain(_ worker: EngineWorker) {
        let context = EngineThread.current
        context.pointee.worker = Unmanaged.passUnretained(worker)
        lockEngine()
        let slot: Int
        if let given = freeSlots.popLast() {
            slot = given
        } else {
            // The next slot never made (threads <= maxThreads = slots): made here, then published by `slotBound`.
            slot = slotBound.load(ordering: .relaxed)
            let made = slots.make(slot)
            if life == .stopped {
                var none: [EngineUnit] = []
                _ = made.close(into: &none)  // a pool that stopped refuses units in it as in every other
            }
            slotBound.store(slot + 1, ordering: .sequentiallyConsistent)
        }
        lock.unlock()
        let local = slots[slot]
        worker.slot = slot
        worker.local = local
        // Whether the worker just came out of spinning with work found: submitters skipped the wake-up because it
        // spun, so once it took its unit, it passes the wake-up on if more work waits.
        var searching = false
        while true {
            if let unit = nextUnit(worker, local) ?? findWork(worker, local) {
                if searching {
                    // Sequentially consistent: a submitter that saw this worker spinning pushed before it stopped,
                    // so its unit is seen here.
                    searching = false
                    if hasWork() { notify() }
                }
                local.executing.store(true, ordering: .relaxed)
                run(unit, worker: worker, context: context)
                local.executing.store(false, ordering: .relaxed)
                local.completed.wrappingAdd(1, ordering: .sequentiallyConsistent)
                continue
            }
            // Spin a little (yielding the CPU) before parking: work submitted meanwhile is taken without a wake-up.
            spinning.add(1, ordering: .sequentiallyConsistent)
            var found = false
            var before = cthr_clock_now_ns()
            for _ in 0..<Engine.idleSpinRounds {
                if hasWork() {
                    found = true
                    break
                }
                _ = cthr_thread_yield()
                // A yield that gave the CPU away (it took long) means other threads want the cores: spinning on
                // would only take turns from them, so park and be woken when work comes.
                let after = cthr_clock_now_ns()
                if after &- before > Engine.busyYieldNanoseconds { break }
                before = after
            }
            spinning.subtract(1, ordering: .sequentiallyConsistent)
            if found {
                searching = true
                continue
            }
            searching = false
            if !park(worker, context) { return }
        }
    }

    /// The unit in `worker`'s next slot, unless it ran ``nextRunLimit`` of them in a row and other work waits: then
    /// the slot's unit moves to the local queue and the worker takes a fairness turn (nil if that found nothing:
    /// the worker picks as usual).
    @inline(__always)
    private func nextUnit(_ worker: EngineWorker, _ local: EngineRunQueue) -> EngineUnit? {
        guard local.nextHint.load(ordering: .relaxed) else {
            worker.nextRuns = 0
            return nil
        }
        if worker.nextRuns >= Engine.nextRunLimit {
            worker.nextRuns = 0
            if hasWork() {
                // A fairness turn next (not the lanes, which could pick the spilled unit again): every other source
                // is reached within `shardCount + 1` such turns.
                spillNext(worker, local)
                return takeFairnessTurn(worker, local)
            }
        }
        guard let unit = local.takeNext() else { return nil }
        worker.nextRuns += 1
        return unit
    }

    /// Parks an idle worker until it is woken (true) or it exits (false: the pool stopped, or it was idle too long
    /// and the pool keeps enough threads).
    private func park(_ worker: EngineWorker, _ context: EngineContext) -> Bool {
        lockEngine()
        running -= 1
        if life == .stopped {
            exitLocked(worker, context)
            return false
        }
        worker.parker.store(0)
        idle.append(worker)
        publishLocked()
        // Against a submitter that pushed and then read the hints before they changed (both sides sequentially
        // consistent: either it sees this worker idle and wakes it, or this sees its unit).
        if running < limit && hasWork() {
            idle.removeLast()
            running += 1
            publishLocked()
            lock.unlock()
            return true
        }
        lock.unlock()
        let deadline = cthr_clock_deadline_after(Engine.idleTimeoutNanoseconds)
        while worker.parker.load() == 0 {
            if !worker.parker.wait(expected: 0, deadline: deadline) { break }
        }
        lockEngine()
        if worker.parker.load() == 1 {
            // Woken: the waker took it off the idle list and gave it a running slot.
            lock.unlock()
            return true
        }
        if let index = idle.firstIndex(where: { $0 === worker }) {
            idle.remove(at: index)
        }
        if threads > keptThreads || life == .stopped {
            exitLocked(worker, context)
            return false
        }
        running += 1
        publishLocked()
        lock.unlock()
        return true
    }

    /// The worker's thread leaves the pool (engine lock held; released here). Its local queue is empty: only it
    /// pushes there, and it leaves only when it found no work.
    private func exitLocked(_ worker: EngineWorker, _ context: EngineContext) {
        threads -= 1
        freeSlots.append(worker.slot)
        publishLocked()
        leaveLocked()
        lock.unlock()
        context.pointee.worker = nil
    }

    /// A pool thread exits (engine lock held): a stopped pool's shutting-down thread joins it; otherwise nobody
    /// does, so it detaches itself.
    private func leaveLocked() {
        if life == .stopped && !joinerGone {
            exited.append(cthr_thread_self())
        } else {
            _ = cthr_thread_detach(cthr_thread_self())
        }
    }

    @inline(__always)
    private func run(_ unit: EngineUnit, worker: EngineWorker, context: EngineContext) {
        // QoS is the lane's priority inside the pool only: a worker never changes its nice value (see ``QoS``).
        switch unit {
        case .drain(let core):
            core.runScheduledDrain(context)
        case .concurrent(let core, let item, let barrier):
            core.runStarted(item, barrier: barrier, context)
        case .claimedBarrier(let core, let claim):
            if let item = claim.claim() { core.runStarted(item, barrier: true, context) }
        case .job(let body):
            body()
        }
    }

    // MARK: Blocking hooks

    /// Called by the engine's own blocking waits before a pool worker sleeps: frees its slot so pending work runs.
    static func willBlock(_ context: EngineContext) {
        guard let worker = context.pointee.worker?.takeUnretainedValue() else { return }
        worker.engine.workerWillBlock(worker)
    }

    /// Runs a blocking wait (`body`) so that a pool worker running it gives its slot up meanwhile: the hook for
    /// blocking primitives outside the queue engine (`Semaphore.wait`). Free on threads that are not pool workers
    /// (one TSD lookup).
    @inline(__always)
    static func blocking<R, E: Error>(_ body: () throws(E) -> R) throws(E) -> R {
        let context = EngineThread.current
        guard context.pointee.worker != nil else { return try body() }
        willBlock(context)
        defer { didUnblock(context) }
        return try body()
    }

    /// Called after such a wait returns.
    static func didUnblock(_ context: EngineContext) {
        guard let worker = context.pointee.worker?.takeUnretainedValue() else { return }
        worker.engine.workerDidUnblock(worker)
    }

    private func workerWillBlock(_ worker: EngineWorker) {
        // Its next-slot unit would wait for the wait: hand it to the others first (before the engine lock: no path
        // takes a run queue's lock after it).
        if let local = worker.local, local.nextHint.load(ordering: .relaxed) { spillNext(worker, local) }
        lockEngine()
        worker.blocked = true
        running -= 1
        blockedCount += 1
        let spawnCount = dispatchLocked(allowSpawn: true)
        lock.unlock()
        for _ in 0..<spawnCount { spawn(EngineWorker(engine: self)) }
    }

    private func workerDidUnblock(_ worker: EngineWorker) {
        lockEngine()
        worker.blocked = false
        running += 1
        blockedCount -= 1
        publishLocked()
        lock.unlock()
    }

    // MARK: Monitor

    private func startMonitor() {
        let context = Unmanaged.passRetained(self).toOpaque()
        let code = spawnEngineThread(named: "threading.monitor", context: context) { raw in
            let engine = Unmanaged<Engine>.fromOpaque(raw!).takeRetainedValue()
            engine.monitorMain()
            return nil
        }
        if code != 0 {
            Unmanaged<Engine>.fromOpaque(context).release()
            // Refused: the next submission tries again.
            lockEngine()
            monitorStarted = false
            monitorHint.store(0, ordering: .sequentiallyConsistent)
            let remaining = threads
            lock.unlock()
            Engine.reportRefusal(of: "monitor", code: code, threads: remaining)
        }
    }

    private func monitorMain() {
        var lastCompleted: UInt64 = 0
        while true {
            lockEngine()
            if life == .stopped {
                monitorStarted = false
                monitorHint.store(0, ordering: .sequentiallyConsistent)
                leaveLocked()
                lock.unlock()
                return
            }
            if pendingTotal(includingNext: true) == 0 {
                extraSlots = 0
                publishLocked()
                monitorSleeping = true
                monitorHint.store(2, ordering: .sequentiallyConsistent)
                monitorWord.store(0)
                // Against a submitter that pushed and read the hint before it changed (see `park`).
                if pendingTotal(includingNext: true) > 0 {
                    monitorSleeping = false
                    monitorHint.store(1, ordering: .sequentiallyConsistent)
                    lock.unlock()
                } else {
                    lock.unlock()
                    while monitorWord.load() == 0 { monitorWord.wait(expected: 0) }
                    lockEngine()
                    lastCompleted = completedTotal()
                    let stopped = life == .stopped
                    lock.unlock()
                    if stopped { continue }
                }
            } else {
                lock.unlock()
            }
            _ = cthr_sleep_ns(Engine.monitorTickNanoseconds)
            lockEngine()
            var spawnCount = 0
            let completed = completedTotal()
            // Next-slot units count when no unit completed for a tick: their owner is stuck in a wait the engine
            // cannot see (a woken or new worker steals them).
            let pending = completed == lastCompleted ? pendingTotal(includingNext: true) : pendingTotal()
            // Units stranded by a refused spawn while slots are free: try again (a no-op otherwise).
            if pending > 0 && running < limit { spawnCount += dispatchLocked(allowSpawn: true, pending: pending) }
            if pending > 0 && running >= limit && completed == lastCompleted && threads < maxThreads {
                extraSlots += 1
                spawnCount += dispatchLocked(allowSpawn: true, pending: pending)
            } else if pending == 0 && extraSlots > 0 {
                extraSlots -= 1
                publishLocked()
            }
            lastCompleted = completed
            let warning = checkSaturationLocked(pending: pending)
            lock.unlock()
            for _ in 0..<spawnCount { spawn(EngineWorker(engine: self)) }
            if let warning { writeStandardError(warning) }
        }
    }

    // MARK: Life

    /// Whether the pool still takes submissions from the calling thread: it runs, or it is draining and the caller
    /// is one of its own threads (work an accepted task submits runs before the pool stops).
    ///
    /// Sequentially consistent: a submitter that makes its work visible (a queue's reader count, an item under the
    /// queue's lock) before it asks pairs with the shutdown, which moves to `draining` before it looks for work
    /// (see ``shutdown(deadline:members:)``): either the submitter sees the shutdown, or the shutdown sees the work.
    @inline(__always)
    func isAccepting(_ context: @autoclosure () -> EngineContext) -> Bool {
        let life = lifeHint.load(ordering: .sequentiallyConsistent)
        if life == Life.running.rawValue { return true }
        return life == Life.draining.rawValue && context().pointee.worker?.takeUnretainedValue().engine === self
    }

    /// What a trapping submission (`async`, `asyncAfter`, a ``QueueTimer``, `addJob`) does when the pool refused
    /// it (see ``isAccepting(_:)``). From another thread it traps: a fire-and-forget submission after `shutdown()`
    /// is a programming error, never a silent drop, and code that may race with a shutdown uses the recoverable
    /// forms (`tryAsync`, `run`, `tryAddJob`). From a thread of this pool (a task still running after a timed
    /// shutdown gave up on it) the work is dropped and counted in ``QueueEngineStatistics/cancelledFirings``: the
    /// shutdown already abandoned the work that had not started, and this is more of it.
    func refuse(_ what: @autoclosure () -> String) {
        if EngineThread.current.pointee.worker?.takeUnretainedValue().engine === self {
            droppedAfterStop.add(1, ordering: .relaxed)
            return
        }
        threadingFatal(
            "Threading: \(what()): worker pool '\(label)' is shut down (shutdown() was called); it takes no new "
                + "work. Use the form that reports a refusal (tryAsync, tryAsyncAfter, QueueTimer.start, tryAddJob, "
                + "try await run) where a submission may race with the shutdown, or shut the pool down after its "
                + "last submission."
        )
    }

    /// Whether the pool takes a trapping submission: true when it accepts it (see ``isAccepting(_:)``); otherwise
    /// ``refuse(_:)`` traps or, on a thread of the pool, counts the drop and this returns false.
    @inline(__always)
    func requireAccepting(_ what: @autoclosure () -> String) -> Bool {
        if lifeHint.load(ordering: .relaxed) == Life.running.rawValue { return true }
        if isAccepting(EngineThread.current) { return true }
        refuse(what())
        return false
    }

    /// Whether the pool stopped (its threads exit; nothing more runs).
    var isStopped: Bool { lifeHint.load(ordering: .relaxed) == Life.stopped.rawValue }

    /// Whether the pool was shut down (draining or stopped).
    var isShutDown: Bool { lifeHint.load(ordering: .acquiring) != Life.running.rawValue }

    /// What a shutdown left undone.
    struct Leftover {
        var tasksNotRun: Int
        var busyThreads: Int
    }

    /// Shuts the pool down: stops taking submissions from other threads, waits until every accepted unit ran (and
    /// every queue and job queue of the pool is empty) or `deadline` passed, then stops: idle threads and the
    /// monitor exit and are joined. After the deadline, pending units are dropped (released, never run) and threads
    /// still running a task exit when it returns. Blocking; never on a thread of this pool.
    ///
    /// What was left is counted after the pool stopped, each member under its own lock (``EnginePoolMember/
    /// abandonAtStop()``): a member's submitters check the pool's life under that lock, so a task is either refused
    /// or counted, and no task of a serial queue's taken batch starts once its member was counted.
    func shutdown(deadline: UInt64, members: () -> [any EnginePoolMember]) -> Leftover {
        lockEngine()
        if life == .running { life = .draining }
        lock.unlock()
        var pause = Engine.shutdownFirstPollNanoseconds
        while !isQuiescent(members) && cthr_clock_now_ns() < deadline {
            Engine.backOff(&pause)
        }
        var leftover = Leftover(tasksNotRun: 0, busyThreads: 0)
        lockEngine()
        life = .stopped
        // Every run queue is closed: a unit pushed from now on is refused (and counted), never stranded.
        var dropped: [EngineUnit] = []
        for index in 0..<shards.count { leftover.tasksNotRun += shards[index].close(into: &dropped) }
        for index in 0..<slotBound.load(ordering: .relaxed) {
            leftover.tasksNotRun += slots[index].close(into: &dropped)
        }
        leftover.busyThreads = busyWorkers()
        let wake = idle
        idle.removeAll()
        for worker in wake {
            worker.parker.store(1)
            running += 1
        }
        publishLocked()
        let monitorAsleep = monitorSleeping
        monitorSleeping = false
        monitorWord.store(1)
        lock.unlock()
        dropped.removeAll()  // released outside the lock: their closures' deinitializers may take locks
        for member in members() where member.engine === self { leftover.tasksNotRun += member.abandonAtStop() }
        for worker in wake { worker.parker.wake() }
        if monitorAsleep { monitorWord.wake() }
        // Join: every thread that is not busy exits promptly and is joined; after the deadline, threads still
        // running a task are left to exit (detached) when it returns.
        pause = Engine.shutdownFirstPollNanoseconds
        while true {
            lockEngine()
            let joinable = exited
            exited.removeAll()
            let remaining = threads + (monitorStarted ? 1 : 0)
            let done = remaining == 0 || (remaining <= busyWorkers() && cthr_clock_now_ns() >= deadline)
            if done { joinerGone = true }
            lock.unlock()
            for thread in joinable { _ = cthr_thread_join(thread, nil) }
            if done { return leftover }
            Engine.backOff(&pause)
        }
    }

    /// Workers running a unit now (blocked ones included).
    private func busyWorkers() -> Int {
        var busy = 0
        let bound = slotBound.load(ordering: .sequentiallyConsistent)
        for index in 0..<bound where slots[index].executing.load(ordering: .relaxed) { busy += 1 }
        return busy
    }

    /// Shutdown polls for quiescence and for exiting threads, first after this long, then twice as long each time
    /// up to 1 ms: an idle pool shuts down in tens of microseconds, a busy one costs at most 1000 polls a second.
    static let shutdownFirstPollNanoseconds: UInt64 = 10_000

    private static func backOff(_ pause: inout UInt64) {
        _ = cthr_sleep_ns(pause)
        pause = Swift.min(pause * 2, 1_000_000)
    }

    /// Whether nothing the pool accepted is left: no unit pending or running, no member with pending work, and no
    /// submission or completion between the two looks at the counters (so no work moved from a queue to the pool
    /// in between).
    private func isQuiescent(_ members: () -> [any EnginePoolMember]) -> Bool {
        // Completions first, then submissions: every counter only grows and a unit is counted submitted before it
        // can complete, so equal sums mean that at one instant every submitted unit had completed.
        let before = (completedTotal(), submittedTotal())
        guard before.0 == before.1 else { return false }
        for member in members() where member.engine === self && member.pendingTaskCount > 0 {
            return false
        }
        let after = (completedTotal(), submittedTotal())
        return after == before
    }

    // MARK: Saturation

    /// Tracks saturation (monitor tick, lock held): work waits while every thread the pool may have is busy. After
    /// the grace period it counts the episode and returns the warning to print, at most one per episode and one per
    /// ``saturationWarningIntervalNanoseconds``.
    private func checkSaturationLocked(pending: Int) -> String? {
        guard pending > 0 && threads >= maxThreads && running + blockedCount >= threads else {
            saturatedSince = 0
            saturationCounted = false
            return nil
        }
        let now = cthr_clock_now_ns()
        if saturatedSince == 0 {
            saturatedSince = now
            return nil
        }
        guard !saturationCounted && now &- saturatedSince >= Engine.saturationGraceNanoseconds else { return nil }
        saturationCounted = true
        saturations += 1
        guard lastSaturationWarning == 0 || now &- lastSaturationWarning >= Engine.saturationWarningIntervalNanoseconds
        else { return nil }
        lastSaturationWarning = now
        saturationWarnings += 1
        let advice =
            isBlocking
            ? "raise its cap (WorkerPool(threads:kind: .blocking)) or make fewer blocking calls at once"
            : "raise its cap (WorkerPool(threads:)) or move blocking work to a blocking pool (WorkerPool.blocking, "
                + "WorkerPool.withBlockingRegion)"
        return "Threading: worker pool '\(label)' is saturated: all \(threads) of its \(maxThreads) threads (its cap) "
            + "are busy and \(pending) unit(s) wait; \(advice) (said at most every 10 s)\n"
    }

    // MARK: Statistics

    /// The pool's counters now (``QueueEngineStatistics``).
    func snapshot() -> QueueEngineStatistics {
        // The counters first, so that the snapshot's own acquisition is not in them.
        let acquisitions = Int(lockAcquisitions.load(ordering: .relaxed))
        var local: UInt64 = 0
        var steals: UInt64 = 0
        for index in 0..<slotBound.load(ordering: .acquiring) {
            local &+= slots[index].submitted.load(ordering: .relaxed)
            steals &+= slots[index].steals.load(ordering: .relaxed)
        }
        let submitted = Int(truncatingIfNeeded: submittedTotal())
        return lock.withLock {
            QueueEngineStatistics(
                label: label,
                threads: threads,
                peakThreads: peakThreads,
                running: running,
                blocked: blockedCount,
                pending: pendingTotal(),
                idle: idle.count,
                maxThreads: maxThreads,
                cores: cores,
                cancelledFirings: cancelledFirings.load(ordering: .relaxed) + droppedAfterStop.load(ordering: .relaxed),
                saturations: saturations,
                saturationWarnings: saturationWarnings,
                submitted: submitted,
                localSubmissions: Int(truncatingIfNeeded: local),
                steals: Int(truncatingIfNeeded: steals),
                wakeUps: Int(truncatingIfNeeded: wakeUps.load(ordering: .relaxed)),
                engineLockAcquisitions: acquisitions
            )
        }
    }

    func resetPeak() {
        lockEngine()
        peakThreads = threads
        lock.unlock()
    }
}

/// An engine object that holds work for a pool outside the pool's lanes: a queue core or a job queue core.
protocol EnginePoolMember: AnyObject {
    /// The pool that runs the member's work.
    var engine: Engine { get }
    /// Tasks accepted and not yet started (queued items, a serial queue's taken batch, jobs not started).
    var pendingTaskCount: Int { get }
    /// Called once the pool stopped: the tasks accepted and not started, counted under the member's lock; none of
    /// them starts afterwards (a serial queue's drain gives its taken batch up).
    func abandonAtStop() -> Int
}

extension EnginePoolMember {
    func abandonAtStop() -> Int { pendingTaskCount }
}

/// The local run queues of a pool's worker slots: a fixed table of `capacity` pointers, each slot's run queue made
/// when a thread first takes the slot (under the engine lock) and published by the engine's `slotBound`, which
/// readers load (acquiring) before they touch a slot below it. Made slots live as long as the pool.
/// `@unchecked Sendable`: a slot is written once, before its publication, and only read afterwards.
final class EngineSlots: @unchecked Sendable {
    private let table: UnsafeMutablePointer<EngineRunQueue?>
    private let capacity: Int

    init(capacity: Int) {
        self.capacity = capacity
        table = .allocate(capacity: capacity)
        table.initialize(repeating: nil, count: capacity)
    }

    deinit {
        table.deinitialize(count: capacity)
        table.deallocate()
    }

    /// Makes slot `index`'s run queue (engine lock held; `index` is the next slot never made).
    func make(_ index: Int) -> EngineRunQueue {
        let queue = EngineRunQueue(capacity: Engine.localCapacity)
        table[index] = queue
        return queue
    }

    /// Slot `index`'s run queue; only for a slot below the published bound.
    @inline(__always)
    subscript(_ index: Int) -> EngineRunQueue {
        table[index].unsafelyUnwrapped
    }
}
