// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import CTestSupport
import CThreading
import Glibc
import Synchronization
import Testing

@testable import Threading

/// Expects the pool lock taken at most twice per monitor tick (10 ms) plus once per hundred of `tasks` (the odd park
/// and wake when a loaded machine preempts a worker) between the two snapshots. The old pool took it twice per task.
private func expectFewPoolLockAcquisitions(
    before: WorkerPoolStatistics,
    after: WorkerPoolStatistics,
    tasks: Int,
    ticks: Int,
    kind: String,
    sourceLocation: SourceLocation = #_sourceLocation
) {
    let acquisitions = after.lockAcquisitions - before.lockAcquisitions
    #expect(
        acquisitions <= 2 * ticks + tasks / 100,
        "\(acquisitions) pool-lock acquisitions for \(tasks) \(kind) submissions in \(ticks) monitor ticks",
        sourceLocation: sourceLocation
    )
}

/// A CPU pool of one thread that never grows (its monitor adds no thread for a worker it finds stuck): a test whose
/// outcome is one worker's order, on a loaded machine too. (A blocking pool has no local queues or next slots.)
private func oneWorkerPool(_ label: String) -> WorkerPool {
    WorkerPool(poolCore: PoolCore(label: label, threads: 1, blocking: false, capped: true))
}

/// Keeps one worker of `pool` busy (yielding in a loop) until ``release()``; meanwhile submissions from outside the
/// pool queue up behind it.
private final class BusyWorker: Sendable {
    private let released = Atomic<Bool>(false)

    init(_ pool: WorkerPool) {
        let busy = WorkGroup()
        busy.enter()
        ConcurrentQueue(label: "sched.queue", pool: pool).async { [self] in
            busy.leave()
            while !released.load(ordering: .acquiring) { _ = cthr_thread_yield() }
        }
        #expect(busy.wait(timeout: .seconds(10)))
    }

    func release() { released.store(true, ordering: .releasing) }
}

/// Makes `pool` start `threads` workers (as many tasks on `queue` that wait for each other), then waits until every
/// worker has parked again.
private func startAndParkWorkers(_ pool: WorkerPool, on queue: ConcurrentQueue, threads: Int) {
    let arrivals = WorkGroup()
    for _ in 0..<threads { arrivals.enter() }
    let started = WorkGroup()
    for _ in 0..<threads {
        queue.async(group: started) {
            arrivals.leave()
            _ = arrivals.wait(timeout: .seconds(20))
        }
    }
    #expect(started.wait(timeout: .seconds(30)))
    #expect(waitUntil(every: 20_000) { pool.poolCore.parkedWorkers == pool.poolCore.liveThreads })
}

/// The scheduler of a worker pool (see ``PoolCore``): local queues, injection, wake-ups, the pool lock's share of
/// the task path, allocations. Each test owns its pool.
@Suite(.serialized) struct SchedulerTests {
    /// 10,000 submissions, 1,000 of which find every worker parked and wake one, allocate nothing but what the
    /// rings need to grow the first time. The old pool built an array on the heap for each wake-up (at least
    /// 1,000 allocations here). Counted on the threads of the path, the submitting thread and the workers (each marks
    /// itself when it runs a unit), not on the process's other threads (the pool's monitor, the watchdog, the
    /// runtime's), whose turns grow with the machine's load; in a process of its own; not under the sanitizers, whose
    /// runtimes own malloc.
    @Test func submissionsAndWakeUpsDoNotAllocate() async {
        guard cthr_test_allocations_counted() != 0 else { return }
        let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
            let pool = WorkerPool(label: "sched.alloc", threads: 2)
            let counter = TestCounter()
            let body: @Sendable () -> Void = {
                cthr_test_count_this_thread()
                counter.add()
            }
            cthr_test_count_this_thread()
            let poolCore = pool.poolCore
            // One round: 10 submissions, then wait until every worker parked again (so the next one wakes one).
            func round(_ index: Int) -> Bool {
                for _ in 0..<10 { poolCore.schedule(.job(body), lane: QoS.default.rawValue) }
                let expected = (index + 1) * 10
                return waitUntil(every: 20_000) {
                    counter.value == expected && poolCore.parkedWorkers == poolCore.liveThreads
                }
            }
            // Warm-up: the threads, the rings, the idle list and the monitor reach their high-water marks.
            for index in 0..<100 where !round(index) {
                writeStandardError("alloc: warm-up round \(index) did not finish\n")
                exit(0)
            }
            let wakeUpsBefore = pool.statistics.wakeUps
            let before = cthr_test_marked_thread_allocations()
            let processBefore = cthr_test_allocations()
            for index in 100..<1100 where !round(index) {
                writeStandardError("alloc: round \(index) did not finish\n")
                exit(0)
            }
            let allocations = cthr_test_marked_thread_allocations() - before
            let processAllocations = cthr_test_allocations() - processBefore
            let wakeUps = pool.statistics.wakeUps - wakeUpsBefore
            guard wakeUps >= 1000 else {
                writeStandardError("alloc: only \(wakeUps) wake-ups in 1,000 rounds\n")
                exit(0)
            }
            // Slack for the test's own polling: 32 over 10,000 submissions.
            guard allocations <= 32 else {
                writeStandardError(
                    "alloc: \(allocations) allocations for 10,000 submissions, \(wakeUps) wake-ups "
                        + "(\(processAllocations) in the whole process)\n"
                )
                exit(0)
            }
            _ = poolTestShutDown(pool)
            writeStandardError(
                "counted: \(allocations) allocations for 10,000 submissions, \(wakeUps) wake-ups "
                    + "(\(processAllocations) in the whole process)\n"
            )
            exit(0)
        }
        let errors = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        // The child says what failed on stderr (an exit test's output is only observed when it exits as expected).
        #expect(!errors.contains("alloc:") && errors.contains("counted:"), "\(errors)")
        print(errors, terminator: "")
    }

    /// A submission to a pool whose workers all sleep wakes exactly one of them, not all.
    @Test func oneSubmissionWakesOneWorker() {
        let pool = WorkerPool(label: "sched.wake", threads: 4)
        defer { poolTestShutDown(pool) }
        let queue = ConcurrentQueue(label: "sched.wake.queue", pool: pool)
        startAndParkWorkers(pool, on: queue, threads: 4)
        let before = pool.statistics
        let ran = WorkGroup()
        queue.async(group: ran) {}
        #expect(ran.wait(timeout: .seconds(10)))
        #expect(waitUntil(every: 20_000) { pool.poolCore.parkedWorkers == pool.poolCore.liveThreads })
        let after = pool.statistics
        #expect(after.wakeUps - before.wakeUps == 1)
        #expect(after.submitted - before.submitted == 1)
    }

    /// Work a task submits to its own pool goes to the worker's local queue: 10,000 such submissions (each task
    /// submits the next) take the pool lock only for the monitor's ticks (two per 10 ms tick) and the odd park, not
    /// once per task (the old pool took it twice per task: submit and pick). A one-thread pool that never grows, so
    /// that the monitor cannot add a thread when a loaded machine preempts the worker (an idle second worker would
    /// rightly be woken for the new work, through the lock).
    @Test func localSubmissionsTakeNoPoolLock() {
        let pool = oneWorkerPool("sched.local")
        defer { poolTestShutDown(pool) }
        let total = 10_000
        let finished = WorkGroup()
        finished.enter()
        let poolCore = pool.poolCore
        let started = WorkGroup()
        started.enter()
        nonisolated(unsafe) var before = pool.statistics
        @Sendable func chain(_ remaining: Int) {
            if remaining == 0 {
                finished.leave()
                return
            }
            poolCore.schedule(.job({ chain(remaining - 1) }), lane: QoS.default.rawValue)
        }
        nonisolated(unsafe) var start: UInt64 = 0
        ConcurrentQueue(label: "sched.queue", pool: pool).async {
            before = pool.statistics
            start = cthr_clock_now_ns()
            started.leave()
            chain(total)
        }
        #expect(started.wait(timeout: .seconds(10)))
        #expect(finished.wait(timeout: .seconds(30)))
        let after = pool.statistics
        let ticks = Int((cthr_clock_now_ns() - start) / PoolCore.monitorTickNanoseconds) + 1
        #expect(after.localSubmissions - before.localSubmissions == total)
        expectFewPoolLockAcquisitions(before: before, after: after, tasks: total, ticks: ticks, kind: "local")
    }

    /// Submissions from outside the pool go to a shared shard: while the pool's one worker is busy, 10,000 of
    /// them take the pool lock only for the monitor's ticks and the odd park. (A blocking pool of one thread: the
    /// monitor cannot add one.)
    @Test func sharedSubmissionsTakeNoPoolLockWhileWorkersAreBusy() {
        let pool = WorkerPool(label: "sched.inject", threads: 1, kind: .blocking)
        defer { poolTestShutDown(pool) }
        let busy = BusyWorker(pool)
        let counter = TestCounter()
        let body: @Sendable () -> Void = { counter.add() }
        let before = pool.statistics
        let start = cthr_clock_now_ns()
        let total = 10_000
        for _ in 0..<total { pool.poolCore.schedule(.job(body), lane: QoS.default.rawValue) }
        let after = pool.statistics
        let ticks = Int((cthr_clock_now_ns() - start) / PoolCore.monitorTickNanoseconds) + 1
        busy.release()
        #expect(waitUntil(every: 20_000) { counter.value == total })
        #expect(after.submitted - before.submitted == total)
        expectFewPoolLockAcquisitions(before: before, after: after, tasks: total, ticks: ticks, kind: "injected")
    }

    /// An idle worker steals from a busy worker's local queue: a task that fills its local queue and then blocks
    /// (without telling the pool) still sees its work run, by the other worker. (On a loaded machine the idle
    /// worker may not run for a whole monitor tick, and the monitor moves the rest: counted as steals too.)
    @Test func idleWorkersStealFromLocalQueues() {
        let pool = WorkerPool(label: "sched.steal", threads: 2)
        defer { poolTestShutDown(pool) }
        let counter = TestCounter()
        let body: @Sendable () -> Void = { counter.add() }
        let poolCore = pool.poolCore
        let total = 100
        let done = Atomic<Bool>(false)
        ConcurrentQueue(label: "sched.queue", pool: pool).async {
            for _ in 0..<total { poolCore.schedule(.job(body), lane: QoS.default.rawValue) }
            // Busy until the other worker ran all of them (a foreign wait: the pool does not know it blocks).
            let deadline = cthr_clock_now_ns() + 10_000_000_000
            while counter.value < total && cthr_clock_now_ns() < deadline {
                _ = cthr_thread_yield()
            }
            done.store(true, ordering: .releasing)
        }
        #expect(waitUntil(every: 20_000) { done.load(ordering: .acquiring) })
        #expect(counter.value == total)
        let statistics = pool.statistics
        #expect(statistics.localSubmissions >= total)
        #expect(statistics.steals >= total)
    }

    /// The monitor moves the units queued behind a worker stuck in one unit to the shared queues, where the next
    /// free worker takes them, and counts them as steals (taken from their owner for another worker). Both workers
    /// of a pool that never grows are busy, so only the monitor can move them; the old rescue counted nothing.
    @Test func theMonitorMovesUnitsStrandedBehindAStuckWorkerAndCountsThemAsSteals() {
        let pool = WorkerPool(poolCore: PoolCore(label: "sched.rescue", threads: 2, blocking: false, capped: true))
        defer { poolTestShutDown(pool) }
        let other = BusyWorker(pool)
        let counter = TestCounter()
        let body: @Sendable () -> Void = { counter.add() }
        let poolCore = pool.poolCore
        let total = 10
        let done = Atomic<Bool>(false)
        ConcurrentQueue(label: "sched.rescue.queue", pool: pool).async {
            for _ in 0..<total { poolCore.schedule(.job(body), lane: QoS.default.rawValue) }
            // Stuck until the units ran elsewhere (a foreign wait: the pool does not know it blocks).
            let deadline = cthr_clock_now_ns() + 20_000_000_000
            while counter.value < total && cthr_clock_now_ns() < deadline { _ = cthr_thread_yield() }
            done.store(true, ordering: .releasing)
        }
        #expect(waitUntil { pool.statistics.steals >= total })
        #expect(counter.value == 0)  // nobody was free to run them yet
        other.release()
        #expect(waitUntil { done.load(ordering: .acquiring) })
        #expect(counter.value == total)
        #expect(pool.statistics.localSubmissions >= total)
    }

    /// Lanes under sharding: with one worker, units of a higher lane injected while it is busy run before units of
    /// a lower lane injected earlier, and the lower lane still runs (aging). A blocking pool of one thread, so that
    /// the monitor cannot add a second worker (two workers would append to `order` in either order).
    @Test func higherLanesRunFirstAndLowerLanesAreNotStarved() {
        let pool = WorkerPool(label: "sched.lanes", threads: 1, kind: .blocking)
        defer { poolTestShutDown(pool) }
        let busy = BusyWorker(pool)
        let order = Mutex<[Int]>([])
        let finished = WorkGroup()
        let count = 20
        for index in 0..<count {
            finished.enter()
            pool.poolCore.schedule(
                .job({
                    order.withLock { $0.append(index) }
                    finished.leave()
                }),
                lane: QoS.background.rawValue
            )
        }
        for index in count..<(2 * count) {
            finished.enter()
            pool.poolCore.schedule(
                .job({
                    order.withLock { $0.append(index) }
                    finished.leave()
                }),
                lane: QoS.userInteractive.rawValue
            )
        }
        busy.release()
        #expect(finished.wait(timeout: .seconds(10)))
        let ran = order.withLock { $0 }
        #expect(ran.count == 2 * count)
        // The first unit run after the blocker is a high one; background ones are interleaved by aging, never last
        // all together; each lane stays FIFO.
        #expect(ran.first.map { $0 >= count } == true)
        let low = ran.filter { $0 < count }
        let high = ran.filter { $0 >= count }
        #expect(low == Array(0..<count))
        #expect(high == Array(count..<(2 * count)))
        let firstLow = ran.firstIndex { $0 < count } ?? ran.count
        #expect(firstLow <= QoS.agingLimit + 2, "\(ran)")
    }

    /// The next slot: a unit a worker submits to its own pool runs right after the current one, on the same worker,
    /// without waking the parked one (the old pool queued it locally and woke the idle worker for it).
    @Test func aUnitAWorkerSubmitsRunsNextOnThatWorkerWithoutAWakeUp() {
        let pool = WorkerPool(label: "sched.next", threads: 2)
        defer { poolTestShutDown(pool) }
        let queue = ConcurrentQueue(label: "sched.next.queue", pool: pool)
        startAndParkWorkers(pool, on: queue, threads: 2)
        let poolCore = pool.poolCore
        let threads = Mutex<(UInt32, UInt32)>((0, 0))
        let wakeUpsBefore = Atomic<Int>(-1)
        let ran = WorkGroup()
        ran.enter()
        queue.async {
            wakeUpsBefore.store(pool.statistics.wakeUps, ordering: .relaxed)
            threads.withLock { $0.0 = currentThreadID }
            poolCore.schedule(
                .job({
                    threads.withLock { $0.1 = currentThreadID }
                    ran.leave()
                }),
                lane: QoS.default.rawValue
            )
        }
        #expect(ran.wait(timeout: .seconds(10)))
        #expect(waitUntil(every: 20_000) { pool.poolCore.parkedWorkers == pool.poolCore.liveThreads })
        let (submitter, runner) = threads.withLock { $0 }
        #expect(submitter == runner)
        #expect(pool.statistics.wakeUps - wakeUpsBefore.load(ordering: .relaxed) == 0)
    }

    /// The next slot is bounded: a task that submits its successor forever (each one lands in the next slot) does
    /// not keep the worker from queued work. A unit injected meanwhile runs within `shardCount + 1` rounds of
    /// ``PoolCore/nextRunLimit`` next-slot units (each round ends with a fairness turn). One thread (a pool that never
    /// grows: the monitor cannot add one).
    @Test func nextSlotRunsAreBoundedSoQueuedWorkRuns() {
        let pool = oneWorkerPool("sched.next.bound")
        defer { poolTestShutDown(pool) }
        let poolCore = pool.poolCore
        let links = Atomic<Int>(0)
        let stop = Atomic<Bool>(false)
        let cap = 10_000_000
        let chainDone = WorkGroup()
        chainDone.enter()
        @Sendable func link() {
            if stop.load(ordering: .acquiring) || links.add(1, ordering: .relaxed).newValue >= cap {
                chainDone.leave()
                return
            }
            poolCore.schedule(.job(link), lane: QoS.default.rawValue)
        }
        poolCore.schedule(.job(link), lane: QoS.default.rawValue)
        #expect(waitUntil(every: 20_000) { links.load(ordering: .relaxed) >= 1000 })
        let linksAt = Atomic<Int>(-1)
        let before = links.load(ordering: .relaxed)
        poolCore.schedule(
            .job({
                linksAt.store(links.load(ordering: .relaxed), ordering: .relaxed)
                stop.store(true, ordering: .releasing)
            }),
            lane: QoS.default.rawValue
        )
        #expect(chainDone.wait(timeout: .seconds(60)))
        let ranAfter = linksAt.load(ordering: .relaxed) - before
        #expect(ranAfter >= 0)
        #expect(
            ranAfter <= (poolCore.shardCount + 1) * (PoolCore.nextRunLimit + 1),
            "the injected unit waited for \(ranAfter) next-slot units"
        )
    }

    /// A worker that blocks in one of the pool's waits hands its next-slot unit to the others first: a task
    /// that submits a unit and waits for it does not wait for the monitor.
    @Test func aWorkerThatBlocksHandsItsNextUnitOver() {
        let pool = WorkerPool(label: "sched.next.block", threads: 2)
        defer { poolTestShutDown(pool) }
        let poolCore = pool.poolCore
        let outcome = Atomic<Int>(0)
        let done = WorkGroup()
        done.enter()
        ConcurrentQueue(label: "sched.queue", pool: pool).async {
            let child = WorkGroup()
            child.enter()
            poolCore.schedule(.job({ child.leave() }), lane: QoS.default.rawValue)
            outcome.store(child.wait(timeout: .seconds(10)) ? 1 : 2, ordering: .relaxed)
            done.leave()
        }
        #expect(done.wait(timeout: .seconds(20)))
        #expect(outcome.load(ordering: .relaxed) == 1)
        #expect(pool.statistics.steals >= 1)
    }

    /// `submit` reports a refusal once the pool stopped and counts the unit as dropped; `trySubmit` reports it and
    /// leaves the unit to its caller (uncounted). Neither runs it.
    @Test func submissionsToAStoppedPoolAreRefused() {
        let pool = WorkerPool(label: "sched.stopped", threads: 1)
        #expect(poolTestShutDown(pool))
        let poolCore = pool.poolCore
        let ran = Atomic<Int>(0)
        #expect(!poolCore.trySchedule(.job({ ran.add(1, ordering: .relaxed) }), lane: QoS.default.rawValue))
        #expect(pool.statistics.cancelledFirings == 0)
        #expect(!poolCore.schedule(.job({ ran.add(1, ordering: .relaxed) }), lane: QoS.default.rawValue))
        #expect(pool.statistics.cancelledFirings == 1)
        #expect(ran.load(ordering: .relaxed) == 0)
    }

    /// A serial queue's drain that yields its worker after a batch (other work waits) goes to the tail of the local
    /// queue, not to the next slot: the waiting unit runs before the rest of the queue's items (through the next
    /// slot the drain would run again first). One thread (a pool that never grows).
    @Test func aYieldingDrainGoesBehindTheWorkThatWaits() {
        let pool = oneWorkerPool("sched.yield")
        defer { poolTestShutDown(pool) }
        let poolCore = pool.poolCore
        let queue = SerialQueue(label: "sched.yield.queue", pool: pool)
        let order = Mutex<[Int]>([])
        let done = WorkGroup()
        let gate = WorkGroup()
        gate.enter()
        let total = SerialCore.batch * 2
        // The first item waits until every item is queued, so one drain meets them all.
        queue.async { _ = gate.wait(timeout: .seconds(10)) }
        for index in 0..<total {
            done.enter()
            queue.async {
                if index == 0 {
                    done.enter()
                    poolCore.schedule(
                        .job({
                            order.withLock { $0.append(-1) }
                            done.leave()
                        }),
                        lane: QoS.default.rawValue
                    )
                }
                order.withLock { $0.append(index) }
                done.leave()
            }
        }
        gate.leave()
        #expect(done.wait(timeout: .seconds(20)))
        let ran = order.withLock { $0 }
        #expect(ran.count == total + 1)
        let position = ran.firstIndex(of: -1) ?? ran.count
        #expect(position <= SerialCore.batch + 1, "the waiting unit ran at \(position) of \(ran.count)")
    }

    /// A worker's run queue whose lanes are full keeps its next slot's unit and leaves the new unit to the caller
    /// (`full`: nothing moved, nothing counted), instead of handing it the slot's unit, which the caller would have
    /// to release, should a stopping pool refuse it too, wherever it is (possibly under its own queue's lock).
    @Test func aFullRunQueueKeepsItsNextUnitAndLeavesTheNewOneToTheCaller() {
        let queue = PoolRunQueue(capacity: 2, observation: PoolObservation(blocking: false))
        let ran = Mutex<[Int]>([])
        func unit(_ tag: Int) -> PoolUnit { .job({ ran.withLock { $0.append(tag) } }) }
        func run(_ unit: PoolUnit?) -> Bool {
            guard case .job(let body, _)? = unit else { return false }
            body()
            return true
        }
        let lane = QoS.default.rawValue
        guard case .pushed = queue.push(unit(1), lane: lane), case .pushed = queue.push(unit(2), lane: lane) else {
            Issue.record("the lanes refused a unit below their capacity")
            return
        }
        guard case .placed = queue.pushNext(unit(3), lane: lane) else {
            Issue.record("an empty next slot refused a unit")
            return
        }
        let submitted = queue.submitted.load(ordering: .relaxed)
        guard case .full = queue.pushNext(unit(4), lane: lane) else {
            Issue.record("a full run queue did not leave the new unit to the caller")
            return
        }
        #expect(queue.submitted.load(ordering: .relaxed) == submitted)
        #expect(run(queue.takeNext()))
        #expect(run(queue.take()))
        #expect(run(queue.take()))
        #expect(queue.take() == nil)
        #expect(ran.withLock { $0 } == [3, 1, 2])
    }

    /// A worker that submits more units than its run queue holds: every unit runs once (the ones that find the
    /// queue full go to a shared shard).
    @Test func aWorkerSubmittingMoreThanItsRunQueueHoldsLosesNothing() {
        let pool = oneWorkerPool("sched.full")
        defer { poolTestShutDown(pool) }
        let poolCore = pool.poolCore
        let total = PoolCore.localCapacity * 2 + 3
        let runs = Mutex<[Int]>(Array(repeating: 0, count: total))
        let done = WorkGroup()
        for _ in 0..<total { done.enter() }
        poolCore.schedule(
            .job({
                for index in 0..<total {
                    poolCore.schedule(
                        .job({
                            runs.withLock { $0[index] += 1 }
                            done.leave()
                        }),
                        lane: QoS.default.rawValue
                    )
                }
            }),
            lane: QoS.default.rawValue
        )
        #expect(done.wait(timeout: .seconds(30)))
        #expect(runs.withLock { $0 } == Array(repeating: 1, count: total))
    }
}
