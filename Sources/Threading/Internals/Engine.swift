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
    /// 0 = idle, 1 = a unit was assigned (set under the engine lock).
    let parker = EngineWord.allocate()
    var assigned: (unit: EngineUnit, lane: Int)?
    /// The nice value this thread runs at (only touched by the thread itself).
    var nice: Int32 = 0
    /// Whether the thread is inside a blocking hook (guarded by the engine lock).
    var blocked = false

    deinit { parker.deallocate() }
}

/// The queue engine's shared worker pool.
///
/// - One FIFO lane per ``QoS``; a worker takes the highest non-empty lane, except that a lane passed over
///   ``QoS/agingLimit`` times is served next (aging, so no lane starves).
/// - At most `cores + extraSlots` workers run at once (`cores` = `cthr_cpu_effective_count()`: the affinity mask
///   lowered to the cgroup CPU quota). A worker that blocks in one of
///   the engine's own waits (`sync` on a busy queue, `WorkGroup.wait`, `WorkItem.wait`) leaves the running count
///   (``willBlock(_:)``), so another worker is woken or created while work is pending. Blocking the engine cannot
///   see (a foreign lock, `sleep`) is caught by a monitor thread: every 10 ms, if work is pending, every slot is
///   busy and no unit finished since the last tick, it grants one extra slot.
/// - Threads are capped at ``maxThreads`` = `max(40, 4 × cores + 32)`: enough for 32 tasks that all wait for each
///   other plus the cores' worth of runnable work, yet bounded (libdispatch makes one thread per blocked serial
///   queue). Idle workers above `cores` exit after ``idleTimeout``.
final class Engine: @unchecked Sendable {
    static let shared = Engine()

    let cores: Int
    let maxThreads: Int
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
    private var completed: UInt64 = 0
    private var peakThreads = 0
    private var monitorStarted = false
    private var monitorSleeping = false
    private let monitorWord = EngineWord.allocate()
    let niceRefusals = Atomic<Int>(0)
    let niceChanges = Atomic<Int>(0)

    init() {
        cores = Int(cthr_cpu_effective_count())
        maxThreads = Swift.max(40, 4 * cores + 32)
        // fork(): the child gets an empty pool and none of the parent's units (see `EngineFork`).
        EngineFork.install()
    }

    /// `fork()` prepare handler (see ``EngineFork``): holds the engine lock across the fork.
    func forkPrepare() { lock.lock() }

    /// `fork()` handler in the parent.
    func forkParent() { lock.unlock() }

    /// `fork()` handler in the child (one thread, the engine lock held by `forkPrepare`): none of the parent's pool
    /// or monitor threads exist here, and none of the units the parent accepted may run here, so the pool restarts
    /// empty with no pending work and grows again on the child's first submission. The dropped units are abandoned,
    /// never released (see ``EngineFork``). If the forking thread is itself a pool worker, it stays one: it counts as
    /// the pool's one running thread.
    func forkChild(_ forking: EngineContext) {
        for lane in lanes.indices { lanes[lane].abandon() }
        skips = [Int](repeating: 0, count: QoS.allCases.count)
        pending = 0
        for worker in idle { _ = Unmanaged.passRetained(worker) }  // their threads are gone; nothing is freed here
        idle.removeAll(keepingCapacity: true)
        let isWorker = forking.pointee.worker != nil
        threads = isWorker ? 1 : 0
        running = isWorker ? 1 : 0
        spinning = 0
        blockedCount = 0
        extraSlots = 0
        peakThreads = threads
        monitorStarted = false
        monitorSleeping = false
        monitorWord.store(0)
        lock.unlock()
    }

    private var limit: Int { cores + extraSlots }

    /// Whether units wait for a worker (read without the lock; a hint).
    var hasPendingWork: Bool { pendingHint.load(ordering: .relaxed) > 0 }

    // MARK: Submission

    /// Queues `unit` on `lane` and wakes or creates a worker if a slot is free.
    func submit(_ unit: EngineUnit, lane: Int) {
        lock.lock()
        lanes[lane].append(unit)
        pending += 1
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
                let worker = EngineWorker()
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
        let code = spawnDetachedEngineThread(named: "threading.pool", context: context) { raw in
            let worker = Unmanaged<EngineWorker>.fromOpaque(raw!).takeRetainedValue()
            Engine.shared.workerMain(worker)
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
        message.utf8CString.withUnsafeBufferPointer { bytes in
            _ = write(2, bytes.baseAddress, bytes.count - 1)
        }
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
            if threads > cores {
                threads -= 1
                lock.unlock()
                context.pointee.worker = nil
                return
            }
            lock.unlock()
        }
    }

    @inline(__always)
    private func run(_ unit: EngineUnit, lane: Int, worker: EngineWorker, context: EngineContext) {
        let nice = QoS(rawValue: lane)!.niceValue
        if worker.nice != nice { applyNice(nice, worker: worker) }
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

    private func applyNice(_ nice: Int32, worker: EngineWorker) {
        let code = cthr_thread_set_nice(nice)
        if code == 0 {
            worker.nice = nice
            niceChanges.add(1, ordering: .relaxed)
        } else {
            // EPERM/EACCES: raising priority is not allowed here. Keep running at the current value; counted.
            niceRefusals.add(1, ordering: .relaxed)
            var current: Int32 = 0
            if cthr_thread_get_nice(&current) == 0 { worker.nice = current }
            if worker.nice != nice && code != EPERM && code != EACCES {
                worker.nice = nice  // unexpected error: do not retry for every unit
            }
        }
    }

    // MARK: Blocking hooks

    /// Called by the engine's own blocking waits before a pool worker sleeps: frees its slot so pending work runs.
    static func willBlock(_ context: EngineContext) {
        guard let worker = context.pointee.worker?.takeUnretainedValue() else { return }
        shared.workerWillBlock(worker)
    }

    /// Runs a blocking wait (`body`) so that a pool worker running it gives its slot up meanwhile: the hook for
    /// blocking primitives outside the queue engine (`Semaphore.wait`). Free on threads that are not pool workers
    /// (one TSD lookup).
    @inline(__always)
    static func blocking<R>(_ body: () -> R) -> R {
        let context = EngineThread.current
        guard context.pointee.worker != nil else { return body() }
        willBlock(context)
        defer { didUnblock(context) }
        return body()
    }

    /// Called after such a wait returns.
    static func didUnblock(_ context: EngineContext) {
        guard let worker = context.pointee.worker?.takeUnretainedValue() else { return }
        shared.workerDidUnblock(worker)
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
        let code = spawnDetachedEngineThread(named: "threading.monitor") { _ in
            Engine.shared.monitorMain()
            return nil
        }
        if code != 0 {
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
            if pending == 0 {
                extraSlots = 0
                monitorSleeping = true
                monitorWord.store(0)
                lock.unlock()
                while monitorWord.load() == 0 { monitorWord.wait(expected: 0) }
                lock.lock()
                lastCompleted = completed
                lock.unlock()
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
            lock.unlock()
            actions.perform(self)
        }
    }

    // MARK: Statistics

    struct Snapshot {
        var threads: Int
        var peakThreads: Int
        var running: Int
        var blocked: Int
        var pending: Int
        var idle: Int
    }

    func snapshot() -> Snapshot {
        lock.withLock {
            Snapshot(
                threads: threads,
                peakThreads: peakThreads,
                running: running,
                blocked: blockedCount,
                pending: pending,
                idle: idle.count
            )
        }
    }

    func resetPeak() {
        lock.withLock { peakThreads = threads }
    }
}
