// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import CThreading
import Synchronization
import Testing

@testable import Threading

#if canImport(Glibc)
import Glibc
#endif

/// The pool: growth when workers block, the thread cap, lanes, groups, items, specifics, the queue pool. Every
/// test that inspects pool state uses a ``WorkerPool`` of its own, so other suites cannot disturb it.
@Suite(.serialized) struct QueueCoreTests {
    /// 32 serial queues whose tasks all wait for each other (through a group the pool sees) all run.
    @Test func thirtyTwoMutuallyWaitingQueuesAllRun() {
        let count = 32
        let pool = WorkerPool(label: "pool.mutual", threads: 2)
        defer { poolTestShutDown(pool) }
        let queues = (0..<count).map { SerialQueue(label: "pool.mutual.\($0)", pool: pool) }
        let arrivals = WorkGroup()
        for _ in 0..<count { arrivals.enter() }
        let succeeded = Atomic<Int>(0)
        let finished = WorkGroup()
        for queue in queues {
            queue.async(group: finished) {
                arrivals.leave()
                if arrivals.wait(timeout: .seconds(20)) { succeeded.add(1, ordering: .relaxed) }
            }
        }
        #expect(finished.wait(timeout: .seconds(30)))
        #expect(succeeded.load(ordering: .relaxed) == count)
        #expect(pool.statistics.peakThreads <= pool.maxThreads)
    }

    /// The same with `Semaphore.wait`, which tells the pool it blocks.
    @Test func mutuallyWaitingQueuesOnASemaphoreAllRun() {
        let count = 32
        let pool = WorkerPool(label: "pool.semaphore", threads: 2)
        defer { poolTestShutDown(pool) }
        let queues = (0..<count).map { SerialQueue(label: "pool.semaphore.\($0)", pool: pool) }
        let gate = Semaphore(value: 0)
        let arrived = Atomic<Int>(0)
        let succeeded = Atomic<Int>(0)
        let finished = WorkGroup()
        for queue in queues {
            queue.async(group: finished) {
                if arrived.add(1, ordering: .relaxed).newValue == count {
                    for _ in 0..<count { gate.signal() }
                }
                if gate.wait(timeout: .seconds(20)) { succeeded.add(1, ordering: .relaxed) }
            }
        }
        #expect(finished.wait(timeout: .seconds(30)))
        #expect(succeeded.load(ordering: .relaxed) == count)
    }

    /// The same with waits the pool cannot see (polling a flag): the monitor grows the pool.
    @Test func mutuallyWaitingQueuesWithForeignWaitsAllRun() {
        let count = 16
        let pool = WorkerPool(label: "poolCore.foreign", threads: 2)
        defer { poolTestShutDown(pool) }
        let queues = (0..<count).map { SerialQueue(label: "poolCore.foreign.\($0)", pool: pool) }
        let arrived = Atomic<Int>(0)
        let succeeded = Atomic<Int>(0)
        let finished = WorkGroup()
        for queue in queues {
            queue.async(group: finished) {
                arrived.add(1, ordering: .relaxed)
                if waitUntil(seconds: 20, { arrived.load(ordering: .relaxed) == count }) {
                    succeeded.add(1, ordering: .relaxed)
                }
            }
        }
        #expect(finished.wait(timeout: .seconds(30)))
        #expect(succeeded.load(ordering: .relaxed) == count)
    }

    /// 64 blocked serial queues never make more threads than the documented cap, and all finish once released.
    @Test func blockedSerialQueuesStayUnderTheCap() {
        let pool = WorkerPool(label: "poolCore.blocked", threads: 2)
        defer { poolTestShutDown(pool) }
        let gate = QueueGate()
        let finished = WorkGroup()
        let queues = (0..<64).map { SerialQueue(label: "poolCore.blocked.\($0)", pool: pool) }
        for queue in queues {
            queue.async(group: finished) { _ = gate.wait(seconds: 20) }
        }
        // The 64 waits are declared, so the pool grows to its cap (40 threads for 2) and no further.
        #expect(waitUntil { pool.statistics.threads == pool.maxThreads })
        _ = cthr_sleep_ns(50_000_000)
        let statistics = pool.statistics
        #expect(statistics.peakThreads == pool.maxThreads)
        #expect(statistics.pending > 0)
        gate.open()
        #expect(finished.wait(timeout: .seconds(30)))
    }

    /// Idle workers above the thread count exit (after the 2 s idle timeout). The pool is the test's own, so other
    /// suites' work cannot keep its idle workers alive.
    @Test func poolShrinksWhenIdle() {
        let pool = WorkerPool(label: "poolCore.shrink", threads: 2)
        defer { poolTestShutDown(pool) }
        let gate = QueueGate()
        let finished = WorkGroup()
        for index in 0..<16 {
            SerialQueue(label: "poolCore.shrink.\(index)", pool: pool).async(group: finished) {
                _ = gate.wait(seconds: 20)
            }
        }
        #expect(waitUntil { pool.statistics.threads >= 8 })
        gate.open()
        #expect(finished.wait(timeout: .seconds(20)))
        #expect(waitUntil(seconds: 15) { pool.statistics.threads <= pool.threadCount })
    }

    /// A lower lane is served even while a higher lane is flooded (aging).
    ///
    /// The interactive lane never runs dry: every interactive task submits its successor before it returns, until the
    /// background task has run or the deadline passed. So the background task can only run because the pool
    /// serves the lower lane while the higher one is non-empty.
    @Test func lowerLaneIsNotStarved() {
        let pool = WorkerPool(label: "poolCore.aging", threads: 2)
        defer { poolTestShutDown(pool) }
        let high = ConcurrentQueue(label: "poolCore.aging.high", qos: .userInteractive, pool: pool)
        let low = ConcurrentQueue(label: "poolCore.aging.low", qos: .background, pool: pool)
        let lowRan = Atomic<Bool>(false)
        let highRuns = Atomic<Int>(0)
        let highRunsWhenLowRan = Atomic<Int>(-1)
        let lowRanBeforeDeadline = Atomic<Bool>(false)
        let deadline = ContinuousClock.now + .seconds(20)
        let flood = WorkGroup()

        @Sendable func floodTask() {
            var spin = 0
            for value in 0..<2_000 { spin &+= value }
            if spin == 42 { print(spin) }
            highRuns.add(1, ordering: .relaxed)
            if !lowRan.load(ordering: .acquiring) && ContinuousClock.now < deadline {
                high.async(group: flood, execute: floodTask)
            }
        }
        for _ in 0..<64 { high.async(group: flood, execute: floodTask) }
        while highRuns.load(ordering: .relaxed) < 64 && ContinuousClock.now < deadline { PosixThread.yield() }

        let lowDone = WorkGroup()
        low.async(group: lowDone) {
            highRunsWhenLowRan.store(highRuns.load(ordering: .relaxed), ordering: .relaxed)
            lowRanBeforeDeadline.store(ContinuousClock.now < deadline, ordering: .relaxed)
            lowRan.store(true, ordering: .releasing)
        }
        #expect(lowDone.wait(timeout: .seconds(30)))
        #expect(flood.wait(timeout: .seconds(30)))
        // The flood stops at the deadline, so a background task that ran only after it was starved.
        let ranWhileFlooded = lowRan.load(ordering: .acquiring) && lowRanBeforeDeadline.load(ordering: .relaxed)
        let highRunsBefore = highRunsWhenLowRan.load(ordering: .relaxed)
        #expect(ranWhileFlooded, "the background task never ran while the interactive lane was flooded")
        #expect(highRunsBefore >= 64, "the background task ran after \(highRunsBefore) interactive tasks")
    }

    // MARK: WorkGroup

    @Test func groupWaitTimesOutThenSucceeds() {
        let group = WorkGroup()
        group.enter()
        let start = ContinuousClock.now
        #expect(!group.wait(timeout: .milliseconds(30)))
        #expect(ContinuousClock.now - start >= .milliseconds(30))
        SerialQueue(label: "poolCore.group.leave").asyncAfter(delay: .milliseconds(20)) { group.leave() }
        #expect(group.wait(timeout: .seconds(10)))
    }

    /// Threads asleep in `wait()` set a bit of the group's word so that the `leave()` that reaches zero wakes them
    /// (and one that does not, or a zero reached with nobody asleep, makes no system call): every sleeper wakes,
    /// also when the count goes up again before it reaches zero, round after round.
    @Test func everyThreadAsleepOnAGroupWakesAtZero() {
        let group = WorkGroup()
        for _ in 0..<100 {
            group.enter()
            group.enter()
            let woke = Atomic<Int>(0)
            runTogether(4) { index in
                guard index == 0 else {
                    if group.wait(timeout: testDeadline) { woke.add(1, ordering: .relaxed) }
                    return
                }
                _ = cthr_sleep_ns(200_000)
                group.leave()
                group.enter()
                group.leave()
                group.leave()
            }
            #expect(woke.load(ordering: .relaxed) == 3)
            #expect(group.wait(timeout: .zero))
        }
    }

    @Test func groupIsReusableAndNotifies() {
        let group = WorkGroup()
        let queue = SerialQueue(label: "poolCore.group.reuse")
        let log = TestLog()
        for round in 0..<3 {
            for index in 0..<10 {
                queue.async(group: group) { log.append(round * 100 + index) }
            }
            let notified = QueueGate()
            group.notify(queue: queue) { notified.open() }
            #expect(group.wait(timeout: .seconds(10)))
            #expect(notified.wait())
            #expect(log.count == (round + 1) * 10)
        }
        // Notify on an empty group runs at once.
        let immediate = QueueGate()
        group.notify(queue: queue) { immediate.open() }
        #expect(immediate.wait())
    }

    // MARK: WorkItem

    @Test func workItemCancelledBeforeStartNeverRuns() {
        let queue = SerialQueue(label: "poolCore.item.cancel")
        let log = TestLog()
        queue.suspend()
        let item = WorkItem { log.append(1) }
        queue.async(execute: item)
        item.cancel()
        #expect(item.isCancelled)
        queue.resume()
        #expect(item.wait(timeout: .seconds(10)))
        queue.sync {}
        #expect(log.count == 0)
    }

    /// Threads asleep in `wait(timeout:)` all wake when the item finishes, whether they slept before it or came
    /// after (the finishing thread wakes only when one set the sleeper bit).
    @Test func everyThreadAsleepOnAnItemWakesWhenItFinishes() {
        for _ in 0..<100 {
            let item = WorkItem {}
            let woke = Atomic<Int>(0)
            runTogether(4) { index in
                guard index == 0 else {
                    if item.wait(timeout: testDeadline) { woke.add(1, ordering: .relaxed) }
                    return
                }
                _ = cthr_sleep_ns(200_000)
                item.perform()
            }
            #expect(woke.load(ordering: .relaxed) == 3)
        }
    }

    @Test func workItemWaitAndNotify() {
        let queue = ConcurrentQueue(label: "poolCore.item.notify")
        let log = TestLog()
        let item = WorkItem {
            _ = cthr_sleep_ns(10_000_000)
            log.append(1)
        }
        let notified = QueueGate()
        item.notify(queue: queue) {
            log.append(2)
            notified.open()
        }
        queue.async(execute: item)
        #expect(item.wait(timeout: .seconds(10)))
        #expect(notified.wait())
        #expect(log.values == [1, 2])
        #expect(!item.isCancelled)
        // It runs at most once.
        item.perform()
        #expect(log.values == [1, 2])
    }

    // MARK: Specifics

    @Test func specificsAreReleasedWhenReplacedClearedOrTheQueueDies() {
        let counter = LiveCounter()
        let key = QueueKey<Tracked>()
        do {
            let queue = SerialQueue(label: "poolCore.specific")
            queue.setSpecific(key, Tracked(counter, id: 1))
            #expect(queue.getSpecific(key)?.id == 1)
            #expect(counter.deinits.value == 0)
            queue.setSpecific(key, Tracked(counter, id: 2))  // replaces: releases 1
            #expect(counter.deinits.value == 1)
            #expect(queue.getSpecific(key)?.id == 2)
            queue.setSpecific(key, nil)  // clears: releases 2
            #expect(counter.deinits.value == 2)
            #expect(queue.getSpecific(key) == nil)
            queue.setSpecific(key, Tracked(counter, id: 3))
            #expect(counter.deinits.value == 2)
        }
        // The queue died: releases 3.
        #expect(waitUntil { counter.deinits.value == 3 })
        #expect(counter.live.value == 0)
    }

    @Test func currentSpecificIsLookedUpThroughTargets() {
        let key = QueueKey<String>()
        let root = SerialQueue(label: "poolCore.specific.root")
        let child = SerialQueue(label: "poolCore.specific.child", target: root)
        let grandchild = ConcurrentQueue(label: "poolCore.specific.grandchild", target: child)
        root.setSpecific(key, "root")
        #expect(key.current == nil)
        #expect(root.sync { key.current } == "root")
        #expect(child.sync { key.current } == "root")
        #expect(grandchild.sync { key.current } == "root")
        child.setSpecific(key, "child")
        #expect(grandchild.sync { key.current } == "child")
        #expect(root.sync { key.current } == "root")
        // Async work sees the same.
        let seen = QueueTestLocked<String?>(nil)
        let ran = QueueGate()
        grandchild.async {
            seen.withLock { $0 = key.current }
            ran.open()
        }
        #expect(ran.wait())
        #expect(seen.withLock { $0 } == "child")
        // Nested sync: the innermost queue decides.
        let other = SerialQueue(label: "poolCore.specific.other")
        #expect(root.sync { other.sync { key.current } } == nil)
    }

    // MARK: QueuePool

    @Test func queuePoolHandsOutQueuesRoundRobin() {
        let pool = QueuePool(label: "poolCore.pool", qos: .utility, count: 3)
        let handed = (0..<6).map { _ in pool.next() }
        #expect(handed[0] === handed[3] && handed[1] === handed[4] && handed[2] === handed[5])
        #expect(handed[0] !== handed[1] && handed[1] !== handed[2])
        #expect(handed.allSatisfy { $0.qos == .utility })
        #expect(QueuePool.defaultCount == min(32, max(2, WorkerPool.defaultThreadCount + 1)))
        #expect(QueuePool.shared(for: .background).queues.count == QueuePool.defaultCount)
        #expect(QueuePool.shared(for: .background) === QueuePool.shared(for: .background))
    }
}
