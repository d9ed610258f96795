// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import CThreading
import Glibc
import Synchronization
import Testing

@testable import Threading

/// Blocking regions and the library's own waits: a pool worker that waits gives its slot up (the pool counts it
/// blocked and may run other work meanwhile).
@Suite struct BlockingTests {
    /// The waits of the library, each run by a task of a one-thread CPU pool.
    enum Wait: String, CaseIterable, Sendable {
        case blockingRegion, conditionVariable, monitor, semaphore, job, jobQueue, group, join
    }

    /// While the task waits, the pool counts it blocked and runs another queue's task on a second thread.
    @Test(arguments: Wait.allCases)
    func waitGivesThePoolSlotUp(_ wait: Wait) throws {
        let pool = WorkerPool(label: "blk.\(wait.rawValue)", threads: 1)
        let released = Atomic<Bool>(false)
        let waiting = QueueGate()
        let done = WorkGroup()
        let lock = MutexLock()
        let condition = ConditionVariable()
        let monitor = Monitor(false)
        let semaphore = Semaphore(value: 0)
        let job = Job { _ in }
        let jobs = JobQueue(name: "blk.jobs")
        jobs.suspend()
        let pending = Job { _ in }
        jobs.addJob(pending)
        let group = WorkGroup()
        group.enter()
        let thread = try PosixThread {
            while !released.load(ordering: .acquiring) { usleep(1_000) }
        }
        SerialQueue(label: "blk.waiter", pool: pool).async(group: done) {
            waiting.open()
            switch wait {
            case .blockingRegion:
                WorkerPool.withBlockingRegion {
                    while !released.load(ordering: .acquiring) { usleep(1_000) }
                }
            case .conditionVariable:
                lock.withLock {
                    while !released.load(ordering: .acquiring) { _ = condition.wait(lock, timeout: .seconds(20)) }
                }
            case .monitor:
                _ = monitor.withLock(when: { $0 }, timeout: .seconds(20)) { _ in }
            case .semaphore:
                _ = semaphore.wait(timeout: .seconds(20))
            case .job:
                _ = job.waitUntilFinished(timeout: .seconds(20))
            case .jobQueue:
                _ = jobs.waitUntilAllFinished(timeout: .seconds(20))
            case .group:
                _ = group.wait(timeout: .seconds(20))
            case .join:
                thread.join()
            }
        }
        #expect(waiting.wait())
        #expect(waitUntil { pool.statistics.blocked == 1 }, "\(wait) did not declare its wait")
        // The one running slot is free: another task runs now.
        let other = QueueGate()
        SerialQueue(label: "blk.other", pool: pool).async { other.open() }
        #expect(other.wait())
        released.store(true, ordering: .releasing)
        lock.withLock { condition.broadcast() }
        monitor.withLock { $0 = true }
        semaphore.signal()
        job.start()
        jobs.resume()
        group.leave()
        #expect(done.wait(timeout: .seconds(20)))
        if wait != .join { thread.join() }
        #expect(poolTestShutDown(pool))
    }

    /// The key-value server shape, at CI size: 64 connections, each with a handler on the blocking pool that blocks
    /// reading its socket (a pipe here) until a request arrives, a 100 ms statistics timer and a write-behind serial
    /// queue on the CPU pool. While all 64 handlers block, the timer keeps firing; then every connection is served
    /// and every write lands. (With the handlers on the CPU pool instead, 24 of 64 were never served and the
    /// timer stalled for the whole run.)
    @Test func keyValueServerShapeServesEveryConnectionAndKeepsItsTimer() {
        let cpu = WorkerPool(label: "kv.cpu", threads: 2)
        let io = WorkerPool(label: "kv.io", threads: 64, kind: .blocking)
        let handlers = ConcurrentQueue(label: "kv.handlers", pool: io)
        let writeBehind = SerialQueue(label: "kv.write-behind", pool: cpu)
        let statsQueue = SerialQueue(label: "kv.stats", pool: cpu)
        let connections = 64
        var pipes: [(read: Int32, write: Int32)] = []
        for _ in 0..<connections {
            var ends: [Int32] = [-1, -1]
            #expect(pipe(&ends) == 0)
            pipes.append((ends[0], ends[1]))
        }
        let blockedHandlers = Atomic<Int>(0)
        let served = Atomic<Int>(0)
        let written = Atomic<Int>(0)
        let firings = QueueTestLocked<[UInt64]>([])
        let timer = QueueTimer(queue: statsQueue, delay: .milliseconds(100), repeating: .milliseconds(100)) {
            firings.withLock { $0.append(cthr_clock_now_ns()) }
        }
        let done = WorkGroup()
        for connection in pipes {
            handlers.async(group: done) {
                blockedHandlers.add(1, ordering: .relaxed)
                var request: UInt8 = 0
                let got = WorkerPool.withBlockingRegion { read(connection.read, &request, 1) }
                guard got == 1 else { return }
                served.add(1, ordering: .relaxed)
                writeBehind.async { written.add(1, ordering: .relaxed) }
            }
        }
        #expect(waitUntil(seconds: 20) { blockedHandlers.load(ordering: .relaxed) == connections })
        // With every handler blocked, the timer keeps firing (three more times), and no request was served yet.
        let blockedSince = cthr_clock_now_ns()
        #expect(waitUntil(seconds: 20) { firings.withLock { $0.filter { $0 >= blockedSince }.count } >= 3 })
        #expect(served.load(ordering: .relaxed) == 0)
        for connection in pipes {
            var request: UInt8 = 1
            #expect(write(connection.write, &request, 1) == 1)
        }
        #expect(done.wait(timeout: .seconds(30)))
        #expect(served.load(ordering: .relaxed) == connections)
        #expect(waitUntil(seconds: 20) { written.load(ordering: .relaxed) == connections })
        timer.cancel()
        for connection in pipes {
            close(connection.read)
            close(connection.write)
        }
        #expect(io.statistics.saturations == 0)
        #expect(poolTestShutDown(io))
        #expect(poolTestShutDown(cpu))
    }

    /// A steady load on a blocking pool: 16 client threads each keep one blocking call (1 ms) in flight, in a
    /// closed loop. After a 1 s warm-up, for longer than the idle timeout (2 s), the pool creates no thread (its
    /// threads, found by name in `/proc/self/task` every millisecond, keep their ids), and it never had more threads
    /// than the calls in flight and a few for the moments a worker is between two calls.
    ///
    /// Only with `-DTHREADING_LONG_TESTS` (`make torture`), on a machine the test has to itself: when other tests
    /// starve its threads of CPU, a unit can wait a monitor tick (10 ms) with no call finishing, and the monitor then
    /// rightly adds a thread for it (the compensation for blocking it cannot see). Under a steady load on a quiet
    /// machine that never happens; `bench http` measures the threads created under load in a real server.
    @Test(.enabled(if: longTestsEnabled)) func steadyLoadCreatesNoThreadAfterTheWarmUp() throws {
        let clients = 16
        let pool = WorkerPool(label: "blk.steady", threads: 64, kind: .blocking)
        let queue = ConcurrentQueue(label: "blk.steady.calls", pool: pool)
        let stop = Atomic<Bool>(false)
        let calls = Atomic<Int>(0)
        let arrived = Atomic<Int>(0)
        let clientThreads = try (0..<clients).map { _ in
            try PosixThread { () -> Int in
                let done = Semaphore(value: 0)
                arrived.add(1, ordering: .relaxed)
                while arrived.load(ordering: .relaxed) < clients { usleep(100) }
                while !stop.load(ordering: .acquiring) {
                    queue.async {
                        usleep(1_000)
                        calls.add(1, ordering: .relaxed)
                        done.signal()
                    }
                    guard done.wait(timeout: .seconds(10)) else { return 1 }
                }
                return 0
            }
        }
        usleep(1_000_000)
        let warm = poolThreadIDs(named: "blk.steady")
        let callsBefore = calls.load(ordering: .relaxed)
        var created = Set<Int>()
        let steadyEnd = cthr_clock_now_ns() + 2_500_000_000
        while cthr_clock_now_ns() < steadyEnd {
            created.formUnion(poolThreadIDs(named: "blk.steady").subtracting(warm))
            usleep(1_000)
        }
        stop.store(true, ordering: .releasing)
        let unanswered = clientThreads.map { $0.join() }.reduce(0, +)
        #expect(unanswered == 0, "a call did not return within 10 s")
        #expect(!warm.isEmpty)
        #expect(calls.load(ordering: .relaxed) > callsBefore)
        #expect(created.isEmpty, "\(created.count) thread(s) created under a steady load")
        let statistics = pool.statistics
        #expect(statistics.peakThreads <= clients + 4, "peak \(statistics.peakThreads) for \(clients) calls in flight")
        #expect(poolTestShutDown(pool))
    }

    /// A blocking pool's worker searches for the next call after a short one (its caller may be back at once) and
    /// parks at once after a real blocking call; the line is `shortCallNanoseconds`, above a `sched_yield` round
    /// and below a 1 ms sleep.
    @Test func aWorkerSearchesAfterAShortCallAndParksAfterALongOne() {
        #expect(PoolCore.searchesAfterUnit(ranFor: 0))
        #expect(PoolCore.searchesAfterUnit(ranFor: 2_000))
        #expect(PoolCore.searchesAfterUnit(ranFor: PoolCore.shortCallNanoseconds - 1))
        #expect(!PoolCore.searchesAfterUnit(ranFor: PoolCore.shortCallNanoseconds))
        #expect(!PoolCore.searchesAfterUnit(ranFor: 1_000_000))
        #expect(PoolCore.shortCallNanoseconds > PoolCore.busyYieldNanoseconds)
    }

    /// A `run` call on a blocking pool counts as completed, and its worker as searching, right before the call
    /// resumes its caller (so the caller's next call does not find one call more in flight than the pool has
    /// threads). Each call is counted once: after 200 calls the pool has completed exactly 200 units, and once its
    /// workers are idle, none counts as searching. The same holds on a CPU pool, where the early count does nothing.
    @Test(arguments: [WorkerPool.Kind.blocking, .cpu])
    func runCallsAreCountedOnceWhenTheyFinish(_ kind: WorkerPool.Kind) async throws {
        let pool = WorkerPool(label: "blk.finish", threads: 2, kind: kind)
        let core = pool.poolCore
        for call in 0..<200 {
            let value = try await pool.run { call }
            #expect(value == call)
        }
        let settled = await suspendUntil(seconds: 10) {
            core.completedTotal() == 200 && core.searching.current == 0
                && pool.statistics.running == 0
        }
        #expect(settled, "completed \(core.completedTotal()), searching \(core.searching.current)")
        #expect(core.submittedTotal() == 200)
        #expect(poolTestShutDown(pool))
    }

    /// A blocking pool makes a thread for a queued unit only while more units are in flight than it has threads:
    /// with three calls held in a wait the pool cannot see, the three threads running them are enough for three
    /// units in flight and too few for four, and a fourth call gets a fourth thread.
    @Test func aBlockingPoolMakesThreadsOnlyForUnitsBeyondItsThreads() throws {
        let pool = WorkerPool(label: "blk.inflight", threads: 8, kind: .blocking)
        let queue = ConcurrentQueue(label: "blk.inflight.calls", pool: pool)
        let released = Atomic<Bool>(false)
        let started = Atomic<Int>(0)
        let done = WorkGroup()
        defer { released.store(true, ordering: .releasing) }
        for _ in 0..<3 {
            queue.async(group: done) {
                started.add(1, ordering: .relaxed)
                while !released.load(ordering: .acquiring) { usleep(500) }
            }
        }
        #expect(waitUntil(seconds: 10) { started.load(ordering: .relaxed) == 3 })
        let core = pool.poolCore
        #expect(pool.statistics.threads == 3)
        #expect(!core.unitsInFlight(outnumber: 3))
        #expect(core.unitsInFlight(outnumber: 2))
        queue.async(group: done) { started.add(1, ordering: .relaxed) }
        #expect(waitUntil(seconds: 10) { started.load(ordering: .relaxed) == 4 }, "the fourth call got no thread")
        #expect(pool.statistics.peakThreads == 4)
        released.store(true, ordering: .releasing)
        #expect(done.wait(timeout: .seconds(10)))
        #expect(poolTestShutDown(pool))
    }

    /// A blocking pool's worker that takes a unit passes a wake-up on only for units that no other searching worker
    /// covers: with two workers idle, a unit queued while another worker counts as searching wakes nobody (that
    /// searcher takes it, as a worker a submitter woke for it would), and the same unit with no searcher wakes one
    /// idle worker, which runs it.
    @Test func aWakeUpIsPassedOnOnlyForUnitsNoSearcherCovers() throws {
        let pool = WorkerPool(label: "blk.passon", threads: 4, kind: .blocking)
        let core = pool.poolCore
        let queue = ConcurrentQueue(label: "blk.passon.calls", pool: pool)
        // Two workers for certain: each warm-up call waits for the other (two calls one after the other could run
        // on one thread, and a single idle thread never makes two parked; an idle one exits after 2 s).
        let warm = WorkGroup()
        let arrivals = WorkGroup()
        for _ in 0..<2 { arrivals.enter() }
        for _ in 0..<2 {
            queue.async(group: warm) {
                arrivals.leave()
                _ = arrivals.wait(timeout: .seconds(10))
            }
        }
        #expect(warm.wait(timeout: .seconds(10)))
        #expect(waitUntil(seconds: 10) { core.parkedWorkers == 2 }, "parked: \(core.parkedWorkers)")
        // A searcher that covers the unit (counted as a woken or finishing worker is), then the unit, queued in a
        // shard as a submitter that saw that searcher leaves it: without a wake-up.
        core.searching.start()
        let ran = Atomic<Bool>(false)
        let pushed = core.shards.borrow(0) { shard in
            shard.push(.job { ran.store(true, ordering: .releasing) }, lane: QoS.default.rawValue)
        }
        guard case .pushed = pushed else {
            Issue.record("the shard refused the unit")
            return
        }
        let wakeUpsBefore = core.wakeUps.load(ordering: .relaxed)
        core.passBlockingWakeUpOn()
        let wakeUpsCovered = core.wakeUps.load(ordering: .relaxed)
        let ranCovered = ran.load(ordering: .acquiring)
        #expect(wakeUpsCovered == wakeUpsBefore, "a second worker woken for a covered unit")
        #expect(core.parkedWorkers == 2)
        #expect(!ranCovered)
        // The searcher went away without taking it: the next worker to take a unit wakes one for it.
        core.searching.stop()
        core.passBlockingWakeUpOn()
        let wakeUpsUncovered = core.wakeUps.load(ordering: .relaxed)
        #expect(wakeUpsUncovered == wakeUpsBefore + 1)
        #expect(waitUntil(seconds: 10) { ran.load(ordering: .acquiring) }, "the unit did not run")
        #expect(poolTestShutDown(pool))
    }

    /// A blocking pool has one queue for every unit: a unit its own worker submits goes to the shards, not behind
    /// that worker's call (which may block for as long as it likes, in a call the pool cannot see). Here the first
    /// unit submits a second one and then polls, with `usleep`, for it to have run: another worker runs it meanwhile.
    /// No unit goes to a worker's local queue or next slot, and none is stolen.
    @Test func aUnitABlockingWorkerSubmitsDoesNotWaitBehindItsCall() {
        let pool = WorkerPool(label: "blk.onequeue", threads: 2, kind: .blocking)
        let core = pool.poolCore
        let second = Atomic<Bool>(false)
        let sawSecond = Atomic<Bool>(false)
        let done = WorkGroup()
        done.enter()
        core.schedule(
            .job({
                core.schedule(.job({ second.store(true, ordering: .releasing) }), lane: QoS.default.rawValue)
                let deadline = cthr_clock_now_ns() &+ 10_000_000_000
                while !second.load(ordering: .acquiring) && cthr_clock_now_ns() < deadline { usleep(1_000) }
                sawSecond.store(second.load(ordering: .acquiring), ordering: .relaxed)
                done.leave()
            }),
            lane: QoS.default.rawValue
        )
        #expect(done.wait(timeout: .seconds(20)))
        let secondRanFirst = sawSecond.load(ordering: .relaxed)
        #expect(secondRanFirst, "the second unit waited for the first one's call")
        let statistics = pool.statistics
        #expect(statistics.localSubmissions == 0)
        #expect(statistics.steals == 0)
        #expect(poolTestShutDown(pool))
    }

    /// Shards spread the threads that submit, which the CPUs bound: a blocking pool of 512 threads has as many as a
    /// CPU pool sized to the CPUs (a power of two, at most 16), not 16 for its 512 threads; a CPU pool of 64 threads
    /// keeps 16.
    @Test func aBlockingPoolHasShardsForItsCPUsNotForItsThreads() {
        var expected = 1
        while expected < min(Int(cthr_cpu_effective_count()), 16) { expected *= 2 }
        let blocking = WorkerPool(label: "blk.shards", threads: 512, kind: .blocking)
        let single = WorkerPool(label: "blk.shards.one", threads: 1, kind: .blocking)
        let cpu = WorkerPool(label: "blk.shards.cpu", threads: 64)
        #expect(blocking.poolCore.shardCount == expected)
        #expect(single.poolCore.shardCount == 1)
        #expect(cpu.poolCore.shardCount == 16)
        #expect(WorkerPool.blocking.poolCore.shardCount == expected)
        for pool in [blocking, single, cpu] { #expect(poolTestShutDown(pool)) }
    }

    /// The ids of this process's threads whose name is `name` (`/proc/self/task/<id>/comm`).
    func poolThreadIDs(named name: String) -> Set<Int> {
        guard let directory = opendir("/proc/self/task") else { return [] }
        defer { closedir(directory) }
        var ids = Set<Int>()
        while let entry = readdir(directory) {
            let entryName = withUnsafeBytes(of: entry.pointee.d_name) {
                String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self)
            }
            guard let id = Int(entryName), let file = fopen("/proc/self/task/\(id)/comm", "r") else { continue }
            var buffer = [UInt8](repeating: 0, count: 32)
            let count = buffer.withUnsafeMutableBytes { fread($0.baseAddress, 1, 31, file) }
            fclose(file)
            // `comm` is the name and a newline.
            if buffer[0..<count].split(separator: 10).first.map({ String(decoding: $0, as: UTF8.self) }) == name {
                ids.insert(id)
            }
        }
        return ids
    }

    /// Once its load stops, a blocking pool's threads all exit after the idle timeout (2 s), although its idle
    /// workers are woken in turn (longest idle first) while it is loaded.
    @Test func blockingPoolThreadsExitOnceTheLoadStops() {
        let pool = WorkerPool(label: "blk.trim", threads: 8, kind: .blocking)
        let queue = ConcurrentQueue(label: "blk.trim.calls", pool: pool)
        let done = WorkGroup()
        for _ in 0..<200 {
            queue.async(group: done) { usleep(500) }
        }
        #expect(done.wait(timeout: .seconds(20)))
        #expect(pool.statistics.peakThreads >= 2)
        #expect(waitUntil(seconds: 10) { pool.statistics.threads == 0 }, "idle threads did not exit")
        #expect(poolTestShutDown(pool))
    }

    /// Idle workers sleep with no deadline; the monitor retires them. A monitor that went to sleep while every thread
    /// was busy had no idle worker to time: the first worker to park wakes it, and the threads still exit after the
    /// idle timeout.
    @Test func threadsThatParkWhileTheMonitorSleepsWithoutADeadlineStillExit() {
        let pool = WorkerPool(label: "blk.late", threads: 2, kind: .blocking)
        let core = pool.poolCore
        let queue = ConcurrentQueue(label: "blk.late.calls", pool: pool)
        let gate = QueueGate()
        let done = WorkGroup()
        let started = WorkGroup()
        for _ in 0..<2 { started.enter() }
        for _ in 0..<2 {
            queue.async(group: done) {
                started.leave()
                _ = gate.wait(seconds: 20)
            }
        }
        #expect(started.wait(timeout: .seconds(10)))
        // Nothing queued, no worker idle: the monitor sleeps, with no deadline.
        let monitorAsleep = waitUntil(seconds: 10) {
            core.lock.withLock { $0.monitor == .sleeping && $0.monitorDue == .max }
        }
        #expect(monitorAsleep, "the monitor did not go to sleep without a deadline")
        gate.open()
        #expect(done.wait(timeout: .seconds(10)))
        #expect(
            waitUntil(seconds: 10) { pool.statistics.threads == 0 },
            "idle threads did not exit: \(pool.statistics.threads)"
        )
        #expect(poolTestShutDown(pool))
    }
}

/// Whether the long, timing-sensitive tests run (`-DTHREADING_LONG_TESTS`).
#if THREADING_LONG_TESTS
let longTestsEnabled = true
#else
let longTestsEnabled = false
#endif
