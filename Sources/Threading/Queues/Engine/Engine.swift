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

/// A pool thread. Fields other than `parker` are guarded by the engine lock or only touched by the thread itself.
final class EngineWorker: @unchecked Sendable {
    /// The pool this thread belongs to (a worker keeps its pool alive while its thread runs).
    let engine: Engine
    /// 0 = idle, 1 = a unit was assigned (set under the engine lock).
    let parker = EngineWord.allocate()
    var assigned: (unit: EngineUnit, lane: Int)?
    /// Whether the thread is inside a blocking hook (guarded by the engine lock).
    var blocked = false

    init(engine: Engine) { self.engine = engine }

    deinit { parker.deallocate() }
}

/// A worker pool of the queue engine: the implementation behind ``WorkerPool``.
///
/// - One FIFO lane per ``QoS``; a worker takes the highest non-empty lane, except that a lane passed over
///   ``QoS/agingLimit`` times is served next (aging, so no lane starves).
/// - At most `cores + extraSlots` workers run at once (`cores` is the pool's thread count: for the shared pool
///   `cthr_cpu_effective_count()`, the affinity mask lowered to the cgroup CPU quota). A worker that blocks in one of
///   the engine's own waits (`sync` on a busy queue, `WorkGroup.wait`, `WorkItem.wait`, a blocking region) leaves
///   the running count (``willBlock(_:)``), so another worker is woken or created while work is pending. Blocking
///   the engine cannot see (a foreign lock, `sleep`) is caught by the pool's monitor thread: every 10 ms, if work is
///   pending, every slot is busy and no unit finished since the last tick, it grants one extra slot.
/// - Threads are capped at ``maxThreads``: for a CPU pool `max(40, 4 × cores + 32)` (enough for 32 tasks that all
///   wait for each other plus the cores' worth of runnable work, yet bounded: libdispatch makes one thread per
///   blocked serial queue); for a blocking pool exactly `cores`. Idle workers above ``keptThreads`` exit after
///   ``idleTimeoutNanoseconds``.
/// - Life: running, then draining (``shutdown(deadline:)``: only threads of the pool may still submit), then
///   stopped (every thread exits; the shutting-down thread joins them).
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
    /// Idle threads kept alive (the others exit after the idle timeout).
    let keptThreads: Int
    static let idleTimeoutNanoseconds: UInt64 = 2_000_000_000
    static let monitorTickNanoseconds: UInt64 = 10_000_000

    private let lock = EngineLock()
    private var lanes = [EngineRing<EngineUnit>](repeating: EngineRing(), count: QoS.allCases.count)
    private var skips = [Int](repeating: 0, count: QoS.allCases.count)
    private var pending = 0 {
        didSet { pendingHint.store(pending, ordering: .relaxed) }
    }
    /// `pending`, readable without the lock by spinning idle workers.
    private let pendingHint = Atomic<Int>(0)
    /// Workers spinning for work before they park (they take pending work themselves, so nobody wakes them).
    private var spinning = 0
    /// Rounds an idle worker spins (yielding) before it parks.
    static let idleSpinRounds = 64
    /// A yield taking longer than this ran another thread: the cores are oversubscribed.
    static let busyYieldNanoseconds: UInt64 = 20_000
    private var idle: [EngineWorker] = []
    private var threads = 0
    private var running = 0
    private var blockedCount = 0
    private var extraSlots = 0
    private var submitted: UInt64 = 0
    private var completed: UInt64 = 0
    private var peakThreads = 0
    private var monitorStarted = false
    private var monitorSleeping = false
    private let monitorWord = EngineWord.allocate()
    /// The pool's life (guarded by the lock; mirrored in `lifeHint` for lock-free submission checks).
    private var life = Life.running {
        didSet { lifeHint.store(life.rawValue, ordering: .releasing) }
    }
    private let lifeHint = Atomic<Int>(Life.running.rawValue)
    /// Threads that exited because the pool stopped, to be joined by the shutting-down thread.
    private var exited: [pthread_t] = []
    /// Set when the shutting-down thread no longer joins: late exits detach themselves.
    private var joinerGone = false
    /// Units submitted internally after the pool stopped (a timed shutdown left their work behind).
    private var droppedAfterStop = 0
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
        cores = Swift.max(1, threads ?? Int(cthr_cpu_effective_count()))
        maxThreads = blocking ? cores : Swift.max(40, 4 * cores + 32)
        keptThreads = blocking ? 0 : cores
        // fork(): the child gets empty pools and none of the parent's units (see `EngineFork`).
        EngineFork.register(self, as: .pool)
    }

    deinit {
        monitorWord.deallocate()
        for lane in lanes.indices { lanes[lane].release() }
    }

    /// `fork()` prepare handler (see ``EngineFork``): holds the engine lock across the fork.
    func forkPrepare() { lock.lock() }

    /// `fork()` handler in the parent.
    func forkParent() { lock.unlock() }

    /// `fork()` handler in the child (one thread, the engine lock held by `forkPrepare`): none of the parent's pool
    /// or monitor threads exist here, and none of the units the parent accepted may run here, so the pool restarts
    /// empty with no pending work and grows again on the child's first submission. The dropped units are abandoned,
    /// never released (see ``EngineFork``). If the forking thread is itself a worker of this pool, it stays one: it
    /// counts as the pool's one running thread. A pool that was shutting down or stopped stays so.
    func forkChild(_ forking: EngineContext) {
        for lane in lanes.indices { lanes[lane].abandon() }
        skips = [Int](repeating: 0, count: QoS.allCases.count)
        pending = 0
        for worker in idle { _ = Unmanaged.passRetained(worker) }  // their threads are gone; nothing is freed here
        idle.removeAll(keepingCapacity: true)
        let isWorker = forking.pointee.worker.map { $0.takeUnretainedValue().engine === self } ?? false
        threads = isWorker ? 1 : 0
        running = isWorker ? 1 : 0
        spinning = 0
        blockedCount = 0
        extraSlots = 0
        peakThreads = threads
        monitorStarted = false
        monitorSleeping = false
        monitorWord.store(0)
        exited.removeAll(keepingCapacity: true)  // the parent's threads: nothing to join here
        lock.unlock()
    }

    private var limit: Int { cores + extraSlots }

    /// Whether units wait for a worker (read without the lock; a hint).
    var hasPendingWork: Bool { pendingHint.load(ordering: .relaxed) > 0 }

    // MARK: Submission

    /// Queues `unit` on `lane` and wakes or creates a worker if a slot is free.
    func submit(_ unit: EngineUnit, lane: Int) {
        lock.lock()
        if life == .stopped {
            // Only internal continuations get here (public submissions trap in `requireAccepting`): work that a
            // timed shutdown left behind. It never runs; counted.
            droppedAfterStop += 1
            lock.unlock()
            _ = unit
            return
        }
        lanes[lane].append(unit)
        pending += 1
        submitted &+= 1
        var actions = Actions()
        dispatchLocked(&actions)
        if !monitorStarted {
            monitorStarted = true
            actions.startMonitor = true
        } else if monitorSleeping {
            monitorSleeping = false
            monitorWord.store(1)
            actions.wakeMonitor = true
        }
        lock.unlock()
        actions.perform(self)
    }

    private struct Actions {
        var wake: [EngineWorker] = []
        var spawn: [EngineWorker] = []
        var startMonitor = false
        var wakeMonitor = false

        func perform(_ engine: Engine) {
            for worker in wake { worker.parker.wake() }
            for worker in spawn { engine.spawn(worker) }
            if startMonitor { engine.startMonitor() }
            if wakeMonitor { engine.monitorWord.wake() }
        }
    }

    /// Hands pending units to idle or new workers while slots are free. Engine lock held.
    private func dispatchLocked(_ actions: inout Actions) {
        while running < limit && pending > spinning {
            if let worker = idle.popLast() {
                worker.assigned = takeNextLocked()
                worker.parker.store(1)
                running += 1
                actions.wake.append(worker)
            } else if threads < maxThreads {
                let worker = EngineWorker(engine: self)
                worker.assigned = takeNextLocked()
                threads += 1
                peakThreads = Swift.max(peakThreads, threads)
                running += 1
                actions.spawn.append(worker)
            } else {
                return
            }
        }
    }

    /// Removes the next unit by lane priority with aging. Engine lock held, `pending > 0`.
    private func takeNextLocked() -> (unit: EngineUnit, lane: Int)? {
        var highest = -1
        var aged = -1
        for lane in 0..<lanes.count where !lanes[lane].isEmpty {
            if highest < 0 {
                highest = lane
            } else {
                skips[lane] += 1
                if aged < 0 && skips[lane] > QoS.agingLimit { aged = lane }
            }
        }
        let lane = aged >= 0 ? aged : highest
        guard lane >= 0, let unit = lanes[lane].popFirst() else { return nil }
        skips[lane] = 0
        pending -= 1
        return (unit, lane)
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
            // No thread (RLIMIT_NPROC, memory): put its unit back and give the slot up. A worker that went idle
            // meanwhile is woken for it; otherwise a running worker or the monitor's next tick (which retries the
            // spawn) picks it up. Never spawn again from here: a refusing system would make that loop.
            Unmanaged<EngineWorker>.fromOpaque(context).release()
            spawnRefusals.add(1, ordering: .relaxed)
            lock.lock()
            threads -= 1
            running -= 1
            if let assigned = worker.assigned {
                lanes[assigned.lane].append(assigned.unit)
                pending += 1
            }
            var wake: EngineWorker?
            if running < limit && pending > spinning, let idleWorker = idle.popLast() {
                idleWorker.assigned = takeNextLocked()
                idleWorker.parker.store(1)
                running += 1
                wake = idleWorker
            }
            let remaining = threads
            lock.unlock()
            wake?.parker.wake()
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

    private func workerMain(_ worker: EngineWorker) {
        let context = EngineThread.current
        context.pointee.worker = Unmanaged.passUnretained(worker)
        lock.lock()
        var next = worker.assigned
        worker.assigned = nil
        lock.unlock()
        while true {
            if let (unit, lane) = next {
                run(unit, lane: lane, worker: worker, context: context)
            }
            lock.lock()
            if next != nil {
                running -= 1
                completed &+= 1
            }
            next = nil
            if running < limit, pending > 0 {
                next = takeNextLocked()
                running += 1
                lock.unlock()
                continue
            }
            if life == .stopped {
                exitLocked(context)
                return
            }
            // Spin a little (yielding the CPU) before parking: work submitted meanwhile is taken without a wake-up.
            spinning += 1
            lock.unlock()
            var before = cthr_clock_now_ns()
            for _ in 0..<Engine.idleSpinRounds {
                if pendingHint.load(ordering: .relaxed) > 0 { break }
                _ = cthr_thread_yield()
                // A yield that gave the CPU away (it took long) means other threads want the cores: spinning on
                // would only take turns from them, so park and be woken when work comes.
                let after = cthr_clock_now_ns()
                if after &- before > Engine.busyYieldNanoseconds { break }
                before = after
            }
            lock.lock()
            spinning -= 1
            if running < limit, pending > 0 {
                next = takeNextLocked()
                running += 1
                lock.unlock()
                continue
            }
            if life == .stopped {
                exitLocked(context)
                return
            }
            // Go idle.
            worker.parker.store(0)
            idle.append(worker)
            lock.unlock()
            let deadline = cthr_clock_deadline_after(Engine.idleTimeoutNanoseconds)
            while worker.parker.load() == 0 {
                if !worker.parker.wait(expected: 0, deadline: deadline) { break }
            }
            lock.lock()
            if let assigned = worker.assigned {
                worker.assigned = nil
                next = assigned
                lock.unlock()
                continue
            }
            if let index = idle.firstIndex(where: { $0 === worker }) {
                idle.remove(at: index)
            }
            if threads > keptThreads || life == .stopped {
                exitLocked(context)
                return
            }
            lock.unlock()
        }
    }

    /// The worker's thread leaves the pool (engine lock held; released here).
    private func exitLocked(_ context: EngineContext) {
        threads -= 1
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
    private func run(_ unit: EngineUnit, lane: Int, worker: EngineWorker, context: EngineContext) {
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
        lock.lock()
        worker.blocked = true
        running -= 1
        blockedCount += 1
        var actions = Actions()
        dispatchLocked(&actions)
        lock.unlock()
        actions.perform(self)
    }

    private func workerDidUnblock(_ worker: EngineWorker) {
        lock.lock()
        worker.blocked = false
        running += 1
        blockedCount -= 1
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
            let remaining = lock.withLock {
                monitorStarted = false
                return threads
            }
            Engine.reportRefusal(of: "monitor", code: code, threads: remaining)
        }
    }

    private func monitorMain() {
        var lastCompleted: UInt64 = 0
        while true {
            lock.lock()
            if life == .stopped {
                monitorStarted = false
                leaveLocked()
                lock.unlock()
                return
            }
            if pending == 0 {
                extraSlots = 0
                monitorSleeping = true
                monitorWord.store(0)
                lock.unlock()
                while monitorWord.load() == 0 { monitorWord.wait(expected: 0) }
                lock.lock()
                lastCompleted = completed
                let stopped = life == .stopped
                lock.unlock()
                if stopped { continue }
            } else {
                lock.unlock()
            }
            _ = cthr_sleep_ns(Engine.monitorTickNanoseconds)
            lock.lock()
            var actions = Actions()
            // Units stranded by a refused spawn while slots are free: try again (a no-op otherwise).
            if pending > 0 && running < limit { dispatchLocked(&actions) }
            if pending > 0 && running >= limit && completed == lastCompleted && threads < maxThreads {
                extraSlots += 1
                dispatchLocked(&actions)
            } else if pending == 0 && extraSlots > 0 {
                extraSlots -= 1
            }
            lastCompleted = completed
            let warning = checkSaturationLocked()
            lock.unlock()
            actions.perform(self)
            if let warning { writeStandardError(warning) }
        }
    }

    // MARK: Life

    /// Whether the pool still takes submissions from the calling thread: it runs, or it is draining and the caller
    /// is one of its own threads (work an accepted task submits runs before the pool stops).
    @inline(__always)
    func isAccepting(_ context: @autoclosure () -> EngineContext) -> Bool {
        let life = lifeHint.load(ordering: .acquiring)
        if life == Life.running.rawValue { return true }
        return life == Life.draining.rawValue && context().pointee.worker?.takeUnretainedValue().engine === self
    }

    /// Traps unless the pool takes submissions (see ``isAccepting(_:)``): a submission after `shutdown()` is a
    /// programming error, never a silent drop.
    @inline(__always)
    func requireAccepting(_ what: @autoclosure () -> String) {
        if lifeHint.load(ordering: .relaxed) == Life.running.rawValue { return }
        if isAccepting(EngineThread.current) { return }
        threadingFatal(
            "Threading: \(what()): worker pool '\(label)' is shut down (shutdown() was called); it takes no new "
                + "work. Submit to a pool that is running, or shut the pool down after its last submission."
        )
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
    func shutdown(deadline: UInt64, members: () -> [any EnginePoolMember]) -> Leftover {
        lock.lock()
        if life == .running { life = .draining }
        lock.unlock()
        var quiet = false
        var pause = Engine.shutdownFirstPollNanoseconds
        while true {
            if isQuiescent(members) {
                quiet = true
                break
            }
            if cthr_clock_now_ns() >= deadline { break }
            Engine.backOff(&pause)
        }
        var leftover = Leftover(tasksNotRun: 0, busyThreads: 0)
        if !quiet {
            for member in members() where member.engine === self {
                leftover.tasksNotRun += member.pendingTaskCount
            }
        }
        lock.lock()
        life = .stopped
        var dropped: [EngineUnit] = []
        for lane in lanes.indices {
            while let unit = lanes[lane].popFirst() {
                if case .drain = unit {} else { leftover.tasksNotRun += 1 }
                dropped.append(unit)
            }
        }
        pending = 0
        leftover.busyThreads = running + blockedCount
        let wake = idle
        idle.removeAll()
        for worker in wake { worker.parker.store(1) }
        let monitorAsleep = monitorSleeping
        monitorSleeping = false
        monitorWord.store(1)
        lock.unlock()
        dropped.removeAll()  // released outside the lock: their closures' deinitializers may take locks
        for worker in wake { worker.parker.wake() }
        if monitorAsleep { monitorWord.wake() }
        // Join: every thread that is not busy exits promptly and is joined; after the deadline, threads still
        // running a task are left to exit (detached) when it returns.
        pause = Engine.shutdownFirstPollNanoseconds
        while true {
            lock.lock()
            let joinable = exited
            exited.removeAll()
            let remaining = threads + (monitorStarted ? 1 : 0)
            let done = remaining == 0 || (remaining <= running + blockedCount && cthr_clock_now_ns() >= deadline)
            if done { joinerGone = true }
            lock.unlock()
            for thread in joinable { _ = cthr_thread_join(thread, nil) }
            if done { return leftover }
            Engine.backOff(&pause)
        }
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
        let before = lock.withLock { (pending + running + blockedCount, submitted, completed) }
        guard before.0 == 0 else { return false }
        for member in members() where member.engine === self && member.pendingTaskCount > 0 {
            return false
        }
        let after = lock.withLock { (pending + running + blockedCount, submitted, completed) }
        return after == before
    }

    // MARK: Saturation

    /// Tracks saturation (monitor tick, lock held): work waits while every thread the pool may have is busy. After
    /// the grace period it counts the episode and returns the warning to print, at most one per episode and one per
    /// ``saturationWarningIntervalNanoseconds``.
    private func checkSaturationLocked() -> String? {
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

    struct Snapshot {
        var threads: Int
        var peakThreads: Int
        var running: Int
        var blocked: Int
        var pending: Int
        var idle: Int
        var droppedAfterStop: Int
        var saturations: Int
        var saturationWarnings: Int
    }

    func snapshot() -> Snapshot {
        lock.withLock {
            Snapshot(
                threads: threads,
                peakThreads: peakThreads,
                running: running,
                blocked: blockedCount,
                pending: pending,
                idle: idle.count,
                droppedAfterStop: droppedAfterStop,
                saturations: saturations,
                saturationWarnings: saturationWarnings
            )
        }
    }

    func resetPeak() {
        lock.withLock { peakThreads = threads }
    }
}

/// An engine object that holds work for a pool outside the pool's lanes: a queue core or a job queue core.
protocol EnginePoolMember: AnyObject {
    /// The pool that runs the member's work.
    var engine: Engine { get }
    /// Tasks accepted and not yet started (queued items, jobs not ended).
    var pendingTaskCount: Int { get }
}
