// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import CThreading
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The worker threads: spawning, picking work (fairness turns, lanes, stealing), parking and exiting.
extension PoolCore {
    // MARK: Workers

    func spawn(_ worker: PoolWorker) {
        let context = Unmanaged.passRetained(worker).toOpaque()
        let code = spawnRuntimeThread(named: threadName, context: context) { raw in
            let worker = Unmanaged<PoolWorker>.fromOpaque(raw!).takeRetainedValue()
            worker.poolCore.workerMain(worker)
            return nil
        }
        if code != 0 {
            // No thread (RLIMIT_NPROC, memory): give the slot up (the units stay queued). A worker that went idle
            // meanwhile is woken for them; otherwise a running worker or the monitor's next tick (which retries the
            // spawn) picks them up. Never spawn again from here: a refusing system would make that loop.
            Unmanaged<PoolWorker>.fromOpaque(context).release()
            spawnRefusals.add(1, ordering: .relaxed)
            let remaining = lock.withLock { synced in
                synced.threads -= 1
                synced.running -= 1
                if isBlocking { searching.stop() }  // it was counted searching
                _ = dispatch(&synced, allowSpawn: false)
                return synced.threads
            }
            reportThreadRefusal(of: "pool", code: code, threads: remaining)
        }
    }

    /// The name of the pool's threads: its label, truncated by the system to 15 bytes.
    var threadName: String { label }

    /// Takes the next unit for `worker`: its fairness turn, else the highest lane of its local queue and the
    /// shards, else one stolen from another worker's local queue. Nil when it found none.
    @inline(__always)
    func findWork(_ worker: PoolWorker, _ local: PoolRunQueue) -> PoolUnit? {
        worker.picks &+= 1
        if worker.picks % UInt(QoS.agingLimit + 1) == 0, let unit = takeFairnessTurn(worker, local) { return unit }
        let home = worker.slot
        for _ in 0..<4 {
            // The run queue with the highest lane: a shard's index, or `shardCount` for the local queue. Indices,
            // not references: the shards are read borrowed (see `PoolSlots`).
            var best = -1
            var bestLane = UInt32.bitWidth
            let localMask = local.laneMaskHint.load(ordering: .relaxed)
            if localMask != 0 {
                best = shardCount
                bestLane = localMask.trailingZeroBitCount
            }
            for offset in 0..<shardCount {
                let index = (home &+ offset) & shardMask
                let mask = shards.borrow(index) { $0.laneMaskHint.load(ordering: .relaxed) }
                if mask != 0 && mask.trailingZeroBitCount < bestLane {
                    best = index
                    bestLane = mask.trailingZeroBitCount
                }
            }
            if best < 0 { break }
            if let unit = best == shardCount ? local.take() : shards.borrow(best, { $0.take() }) { return unit }
        }
        // A blocking pool's units are all in the shards (see `PoolCore+Blocking.swift`): nothing to steal.
        return isBlocking ? nil : steal(worker, local)
    }

    /// A fairness turn: the first source with work in rotation (the local queue, then each shard), whatever the
    /// lanes, so that no queue waits behind higher lanes elsewhere for ever.
    @inline(never)
    func takeFairnessTurn(_ worker: PoolWorker, _ local: PoolRunQueue) -> PoolUnit? {
        func take(_ queue: PoolRunQueue) -> PoolUnit? {
            queue.countHint.load(ordering: .relaxed) > 0 ? queue.take() : nil
        }
        let sources = shardCount + 1
        for step in 0..<sources {
            let index = (worker.rotation &+ step) % sources
            if let unit = index == shardCount ? take(local) : shards.borrow(index, take) {
                worker.rotation = index &+ 1
                return unit
            }
        }
        return nil
    }

    /// Takes one unit from another worker's local queue.
    @inline(never)
    func steal(_ worker: PoolWorker, _ local: PoolRunQueue) -> PoolUnit? {
        let bound = slotBound.load(ordering: .acquiring)
        guard bound > 1 else { return nil }
        for offset in 1..<bound {
            let stolen = slots.borrow((worker.slot &+ offset) % bound) { victim in
                victim.countHint.load(ordering: .relaxed) > 0 ? victim.take() : nil
            }
            if let stolen {
                local.steals.wrappingAdd(1, ordering: .relaxed)
                return stolen
            }
        }
        // Last resort: a unit in another worker's next slot (its owner may be stuck in a wait the pool cannot see).
        for offset in 1..<bound {
            let stolen = slots.borrow((worker.slot &+ offset) % bound) { victim in
                victim.nextHint.load(ordering: .relaxed) ? victim.takeNext() : nil
            }
            if let stolen {
                local.steals.wrappingAdd(1, ordering: .relaxed)
                return stolen
            }
        }
        return nil
    }

    /// Whether any run queue of the pool holds units (sequentially consistent: see `park`). A blocking pool's
    /// local queues stay empty (see `PoolCore+Blocking.swift`): its shards alone say.
    func hasWork() -> Bool {
        for index in 0..<shardCount
        where shards.borrow(index, { $0.countHint.load(ordering: .sequentiallyConsistent) > 0 }) {
            return true
        }
        if isBlocking { return false }
        let bound = slotBound.load(ordering: .sequentiallyConsistent)
        for index in 0..<bound where slots.borrow(index, { $0.countHint.load(ordering: .sequentiallyConsistent) > 0 }) {
            return true
        }
        return false
    }

    func workerMain(_ worker: PoolWorker) {
        let context = SchedulerThread.current
        context.pointee.worker = Unmanaged.passUnretained(worker)
        BlockingHook.install(worker)
        let slot = lock.withLock { synced in
            if let given = synced.freeSlots.popLast() { return given }
            // The next slot never made (threads <= maxThreads = slots): made here, then published by `slotBound`.
            let slot = slotBound.load(ordering: .relaxed)
            let made = slots.make(slot, observation: observation)
            if synced.life.isStopped {
                var none: [PoolUnit] = []
                _ = made.close(into: &none)  // a pool that stopped refuses units in it as in every other
            }
            slotBound.store(slot + 1, ordering: .sequentiallyConsistent)
            return slot
        }
        let local = slots[slot]
        worker.slot = slot
        worker.local = local
        observation.attach(worker)
        // Whether the worker just came out of spinning with work found: submitters skipped the wake-up because it
        // spun, so once it took its unit, it passes the wake-up on if more work waits.
        var foundBySpinning = false
        // A blocking pool's worker counts in `searching` while it searches: from its start or wake-up, and from the
        // end of each unit, until it takes a unit or is back on the idle list (see `PoolCore+Blocking.swift`).
        var counted = isBlocking
        // A blocking pool's worker: when its last unit started, and whether it was short (see `shortCallNanoseconds`;
        // true also for a new thread, which has run no unit yet). It holds across a park: see below.
        var unitStarted: UInt64 = 0
        var searchAfterUnit = true
        while true {
            if let unit = nextUnit(worker, local) ?? findWork(worker, local) {
                if counted {
                    // As for a spinner below: a submitter that saw this worker counted pushed before the decrement.
                    // Passed on only for units no other searcher covers (see `passBlockingWakeUpOn`).
                    counted = false
                    searching.stop()
                    passBlockingWakeUpOn()
                } else if foundBySpinning {
                    // Sequentially consistent: a submitter that saw this worker spinning pushed before it stopped,
                    // so its unit is seen here.
                    foundBySpinning = false
                    if hasWork() { notify() }
                }
                if isBlocking { unitStarted = cthr_clock_now_ns() }
                local.executing.store(true, ordering: .relaxed)
                worker.activity.begin(unit)
                if observation.recordsRunTimes.load(ordering: .relaxed) {
                    runTimed(unit, worker: worker, context: context)
                } else {
                    run(unit, worker: worker, context: context)
                }
                worker.activity.end()
                local.executing.store(false, ordering: .relaxed)
                if worker.finishedEarly {
                    worker.finishedEarly = false
                } else {
                    local.completed.wrappingAdd(1, ordering: .sequentiallyConsistent)
                    if isBlocking { searching.start() }
                }
                counted = isBlocking
                if isBlocking {
                    searchAfterUnit = PoolCore.searchesAfterUnit(ranFor: cthr_clock_now_ns() &- unitStarted)
                }
                continue
            }
            if isBlocking {
                // A searching worker looks a little longer (still counted searching), so a call submitted right after
                // the last one returned is taken without a wake-up; on busy cores it parks at once (see
                // `spinForWork`), so it takes no turns from the threads that feed the pool. After a long call it
                // parks at once: the caller's next call is not imminent, and any other call wakes an idle worker
                // (searches after long calls take CPU from the threads that feed the pool). The rule holds across a
                // park: a worker woken for a unit that another searcher took first searches only if its last call
                // was short. After a long one it parks again at once, as a thread of `NIOThreadPool` woken for
                // nothing waits again (a search there is a `sched_yield` and a context switch); after a short one
                // the next short call is likely imminent (`bench actors`' offload case shows it).
                if counted && searchAfterUnit && spinForWork() { continue }
                guard let woken = park(worker, context, counted: counted) else { return }
                counted = woken
                continue
            }
            // Spin a little (yielding the CPU) before parking: work submitted meanwhile is taken without a wake-up.
            searching.start()
            let found = spinForWork()
            searching.stop()
            if found {
                foundBySpinning = true
                continue
            }
            foundBySpinning = false
            if park(worker, context) == nil { return }
        }
    }

    /// Whether a blocking pool's worker searches (spins) after a unit that ran `nanoseconds`: only after a short one
    /// (``shortCallNanoseconds``); after a real blocking call it parks at once.
    @inline(__always)
    static func searchesAfterUnit(ranFor nanoseconds: UInt64) -> Bool {
        nanoseconds < shortCallNanoseconds
    }

    /// Looks for work for up to ``idleSpinRounds`` rounds, yielding the CPU between looks; true when some is queued.
    /// A yield that took long gave the CPU away: other threads want the cores, so spinning on would only take turns
    /// from them, and the worker stops at once to park and be woken when work comes.
    func spinForWork() -> Bool {
        var before = cthr_clock_now_ns()
        for _ in 0..<PoolCore.idleSpinRounds {
            if hasWork() { return true }
            _ = cthr_thread_yield()
            let after = cthr_clock_now_ns()
            if after &- before > PoolCore.busyYieldNanoseconds { return false }
            before = after
        }
        return false
    }

    /// The unit in `worker`'s next slot, unless it ran ``nextRunLimit`` of them in a row and other work waits: then
    /// the slot's unit moves to the local queue and the worker takes a fairness turn (nil if that found nothing:
    /// the worker picks as usual).
    @inline(__always)
    func nextUnit(_ worker: PoolWorker, _ local: PoolRunQueue) -> PoolUnit? {
        guard local.nextHint.load(ordering: .relaxed) else {
            worker.nextRuns = 0
            return nil
        }
        if worker.nextRuns >= PoolCore.nextRunLimit {
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

    /// Parks an idle worker until it is woken or it exits. Returns nil when it exits (the pool stopped, or the
    /// monitor retired it after ``idleTimeoutNanoseconds`` idle: ``retireIdleWorkers(_:now:)``), else whether it was
    /// woken as a searcher (a blocking pool's).
    ///
    /// The sleep has no deadline: a futex wait with one arms and cancels a kernel timer on every park (a few hundred
    /// nanoseconds of CPU each time a worker sleeps between two units, a blocking pool's at every call), where the
    /// monitor's one deadline, for the longest-idle worker, serves the whole pool.
    ///
    /// A blocking pool's worker leaves the searching count (when `counted`) once it is on the idle list, inside the
    /// lock section, so a submitter either sees it searching or finds it idle and wakes it; and its idle list is
    /// first in, first out (wakers take the last entry, so this worker, inserted first, is woken after the others):
    /// workers take turns, and none idles for the timeout while the pool is loaded (see `PoolCore+Blocking.swift`).
    func park(_ worker: PoolWorker, _ context: ThreadContext, counted: Bool = false) -> Bool? {
        enum Step { case exit, resume, sleep }
        var monitorCall = MonitorCall.none
        let now = cthr_clock_now_ns()  // read before the lock: its section stays as short as it was
        let step = lock.withLock { synced -> Step in
            synced.running -= 1
            if counted { searching.stop() }
            if synced.life.isStopped {
                retire(worker, &synced)
                return .exit
            }
            worker.parker.store(.parked)
            worker.parkedAt = now
            if isBlocking { synced.idle.insert(worker, at: 0) } else { synced.idle.append(worker) }
            // Published before the look for work, against a submitter that pushed and then read the hints before
            // they changed (both sides sequentially consistent: either it sees this worker idle and wakes it, or
            // this sees its unit).
            hints.publish(from: &synced)
            if synced.running < synced.limit && hasWork() {
                if isBlocking { synced.idle.removeFirst() } else { synced.idle.removeLast() }
                synced.running += 1
                return .resume
            }
            monitorCall = callMonitorToRetire(&synced)
            return .sleep
        }
        switch monitorCall {
        case .none: break
        case .start: startMonitor()
        case .wake: monitorWord.wake()
        }
        switch step {
        case .exit:
            leave(context)
            return nil
        case .resume:
            return false
        case .sleep:
            break
        }
        while worker.parker.load() == .parked {
            _ = worker.parker.waitWhileParked(deadline: .max)
        }
        // Woken: the waker took it off the idle list (and, but for the monitor retiring it, gave it a running slot),
        // under the pool lock, before it stored the value (a release store, read here with an acquire load).
        switch worker.parker.load() {
        case .searching:
            return true
        case .woken, .parked:
            return false
        case .forWork:
            // A CPU pool's worker woken for work leaves the `wokenForWork` count under the lock.
            lock.withLock { synced in synced.wokenForWork -= 1 }
            return false
        case .retire:
            lock.withLock { synced in
                synced.retiring -= 1
                retire(worker, &synced)
            }
            leave(context)
            return nil
        }
    }

    /// What a parking worker must do for the monitor once the pool lock is released.
    enum MonitorCall { case none, start, wake }

    /// A worker going idle while the pool has more threads than it keeps, inside the lock section that parks it: the
    /// monitor must retire it after ``idleTimeoutNanoseconds`` unless woken work takes it first. A monitor asleep
    /// with a deadline wakes for an earlier-parked worker and looks again then; one asleep without a deadline (no
    /// worker was idle) is woken, and one not started (a forked child's pool) is started, to arm one.
    func callMonitorToRetire(_ synced: inout PoolState) -> MonitorCall {
        guard synced.threads - synced.retiring > keptThreads, !synced.life.isStopped else { return .none }
        switch synced.monitor {
        case .running:
            return .none
        case .sleeping:
            guard synced.monitorDue == .max else { return .none }
            synced.monitor = .running
            monitorWord.store(1)
            return .wake
        case .notStarted:
            synced.monitor = .running
            return .start
        }
    }

    /// The monitor's reaping, inside a lock section: while the pool has more threads than it keeps
    /// (``keptThreads``, counting those already retiring), takes the workers idle for ``idleTimeoutNanoseconds`` off
    /// the idle list, longest idle first, and marks each to exit (``WorkerWake/retire``). Returns them, for the
    /// caller to wake once the lock is released, and when the next idle worker comes due (`UInt64.max`: none will
    /// while the pool keeps its threads).
    ///
    /// The longest-idle worker is the one wakers take last: a CPU pool's first entry (its idle list is last in,
    /// first out), a blocking pool's last (first in, first out).
    func retireIdleWorkers(_ synced: inout PoolState, now: UInt64) -> (retired: [PoolWorker], nextDue: UInt64) {
        var retired: [PoolWorker] = []
        while synced.threads - synced.retiring > keptThreads,
            let oldest = isBlocking ? synced.idle.last : synced.idle.first
        {
            let due = oldest.parkedAt &+ PoolCore.idleTimeoutNanoseconds
            if due > now { return (retired, due) }
            if isBlocking { synced.idle.removeLast() } else { synced.idle.removeFirst() }
            oldest.parker.store(.retire)
            synced.retiring += 1
            retired.append(oldest)
        }
        return (retired, .max)
    }

    /// The calling thread is no pool worker any more (after ``retire(_:_:)``).
    func leave(_ context: ThreadContext) {
        context.pointee.worker = nil
        BlockingHook.install(nil)
    }

    /// The worker's thread leaves the pool (inside a lock section). Its local queue is empty: only it pushes there,
    /// and it leaves only when it found no work.
    func retire(_ worker: PoolWorker, _ synced: inout PoolState) {
        synced.threads -= 1
        synced.freeSlots.append(worker.slot)
        observation.detach(worker)
        synced.leave()
    }

    @inline(__always)
    func run(_ unit: PoolUnit, worker: PoolWorker, context: ThreadContext) {
        // QoS is the lane's priority inside the pool only: a worker never changes its nice value (see ``QoS``).
        switch unit {
        case .drain(let core):
            core.runScheduledDrain(context)
        case .concurrent(let core, let item, let barrier):
            core.runStarted(item, barrier: barrier, context)
        case .claimedBarrier(let core, let claim):
            if let item = claim.claim() { core.runStarted(item, barrier: true, context) }
        case .job(let body, _):
            body()
        case .queuedJob(let job, let observers):
            job.execute(observers: observers)
        case .globalTask(let job, _):
            GlobalPoolExecutor.run(job)
        }
    }
}
