// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import CThreading
import Synchronization
import Testing

@testable import Threading

@Suite(.serialized) struct QueueConcurrentTests {
    /// Sync readers and barrier writers (async and sync) hammering one queue: a writer never overlaps a reader or
    /// another writer.
    @Test func barrierExclusivity() {
        let queue = ConcurrentQueue(label: "concurrent.barrier")
        let readers = Atomic<Int>(0)
        let writers = Atomic<Int>(0)
        let violations = Atomic<Int>(0)
        let maxWriters = Atomic<Int>(0)
        let threads = 4
        let rounds = 2_000
        let group = WorkGroup()
        let arrived = Atomic<Int>(0)
        let go = QueueGate()
        @Sendable func write() {
            let nowWriters = writers.add(1, ordering: .relaxed).newValue
            maxWriters.max(nowWriters, ordering: .relaxed)
            if readers.load(ordering: .relaxed) != 0 || nowWriters != 1 { violations.add(1, ordering: .relaxed) }
            writers.subtract(1, ordering: .relaxed)
        }
        for _ in 0..<threads { group.enter() }
        for thread in 0..<threads {
            queueTestDetached {
                arrived.add(1, ordering: .relaxed)
                _ = go.wait()
                for round in 0..<rounds {
                    if round % 10 == thread {
                        if round % 20 < 10 {
                            queue.sync(flags: .barrier) { write() }
                        } else {
                            queue.async(group: group, flags: .barrier) { write() }
                        }
                    } else {
                        queue.sync {
                            readers.add(1, ordering: .relaxed)
                            if writers.load(ordering: .relaxed) != 0 { violations.add(1, ordering: .relaxed) }
                            readers.subtract(1, ordering: .relaxed)
                        }
                    }
                }
                group.leave()
            }
        }
        #expect(waitUntil { arrived.load(ordering: .relaxed) == threads })
        go.open()
        #expect(group.wait(timeout: .seconds(60)))
        queue.sync(flags: .barrier) {}
        #expect(violations.load(ordering: .relaxed) == 0)
        #expect(maxWriters.load(ordering: .relaxed) == 1)
    }

    /// A barrier (sync or async) that arrives while a `sync` reader is inside waits for it, runs alone, and a reader
    /// that arrives while the barrier waits runs after the barrier (it does not slip in past it).
    @Test(arguments: [true, false]) func barrierWaitsForAReaderInsideAndLaterReadersWaitForIt(syncBarrier: Bool) {
        let queue = ConcurrentQueue(label: "concurrent.drain")
        let log = TestLog()
        let readerInside = QueueGate()
        let releaseReader = QueueGate()
        let done = WorkGroup()
        done.enter()
        queueTestDetached {
            queue.sync {
                readerInside.open()
                _ = releaseReader.wait()
                log.append(1)
            }
            done.leave()
        }
        #expect(readerInside.wait())
        done.enter()
        if syncBarrier {
            queueTestDetached {
                queue.sync(flags: .barrier) { log.append(2) }
                done.leave()
            }
        } else {
            queue.async(flags: .barrier) {
                log.append(2)
                done.leave()
            }
        }
        // The barrier is registered (owning the queue, or pending) and waits for the reader: a new reader must queue
        // behind it.
        #expect(waitUntil { queue.core.word.load() & (QueueState.owned | QueueState.hasItems) != 0 })
        done.enter()
        queueTestDetached {
            queue.sync { log.append(3) }
            done.leave()
        }
        _ = cthr_sleep_ns(20_000_000)
        #expect(log.values == [])
        releaseReader.open()
        #expect(done.wait(timeout: .seconds(20)))
        #expect(log.values == [1, 2, 3])
    }

    /// Several readers run at once: each reader waits inside the queue until another reader is inside too.
    @Test func severalReadersAtOnce() {
        let queue = ConcurrentQueue(label: "concurrent.readers")
        let inside = Atomic<Int>(0)
        let sawCompany = Atomic<Int>(0)
        let group = WorkGroup()
        for _ in 0..<3 {
            queue.async(group: group) {
                inside.add(1, ordering: .relaxed)
                if waitUntil(seconds: 10, { inside.load(ordering: .relaxed) >= 3 }) {
                    sawCompany.add(1, ordering: .relaxed)
                }
            }
        }
        #expect(group.wait(timeout: .seconds(20)))
        #expect(sawCompany.load(ordering: .relaxed) == 3)
    }

    /// An async barrier waits for the earlier tasks and runs before the later ones.
    @Test func asyncBarrierOrdersAroundIt() {
        let queue = ConcurrentQueue(label: "concurrent.barrier.order")
        let finishedBefore = Atomic<Int>(0)
        let startedAfter = Atomic<Int>(0)
        let barrierSaw = QueueTestLocked<(Int, Int)>((-1, -1))
        let group = WorkGroup()
        for _ in 0..<8 {
            queue.async(group: group) {
                _ = cthr_sleep_ns(2_000_000)
                finishedBefore.add(1, ordering: .relaxed)
            }
        }
        queue.async(group: group, flags: .barrier) {
            barrierSaw.withLock {
                $0 = (finishedBefore.load(ordering: .relaxed), startedAfter.load(ordering: .relaxed))
            }
        }
        for _ in 0..<8 {
            queue.async(group: group) { startedAfter.add(1, ordering: .relaxed) }
        }
        #expect(group.wait(timeout: .seconds(20)))
        #expect(barrierSaw.withLock { $0 } == (8, 0))
    }

    /// Barrier closures are released once they ran, also when a waiting reader ran them.
    @Test func barrierClosuresAreReleasedAfterTheyRun() {
        let counter = LiveCounter()
        let queue = ConcurrentQueue(label: "concurrent.release")
        for round in 0..<50 {
            let tracked = Tracked(counter, id: round)
            queue.async(flags: .barrier) { _ = tracked.id }
            _ = queue.sync { round }
        }
        queue.sync(flags: .barrier) {}
        #expect(waitUntil { counter.live.value == 0 })
    }

    @Test func widthLimitsConcurrency() {
        let queue = ConcurrentQueue(label: "concurrent.width", width: 2)
        let inside = Atomic<Int>(0)
        let maxInside = Atomic<Int>(0)
        let group = WorkGroup()
        for _ in 0..<12 {
            queue.async(group: group) {
                maxInside.max(inside.add(1, ordering: .relaxed).newValue, ordering: .relaxed)
                _ = cthr_sleep_ns(2_000_000)
                inside.subtract(1, ordering: .relaxed)
            }
        }
        #expect(group.wait(timeout: .seconds(20)))
        #expect(maxInside.load(ordering: .relaxed) <= 2)
        #expect(queue.width == 2)
    }

    @Test func suspendHoldsConcurrentWork() {
        let queue = ConcurrentQueue(label: "concurrent.suspend")
        let log = TestLog()
        queue.suspend()
        queue.async { log.append(1) }
        queue.async(flags: .barrier) { log.append(2) }
        _ = cthr_sleep_ns(30_000_000)
        #expect(log.count == 0)
        queue.resume()
        #expect(log.wait(for: 2))
        #expect(log.values == [1, 2])
    }

    /// Async barriers queued back to back (the thread that runs one goes on with the next) run one at a time, in
    /// submission order, and a `sync` reader queued behind them returns only after all of them ran.
    @Test func queuedBarriersRunAloneInOrderBeforeALaterReader() {
        let queue = ConcurrentQueue(label: "concurrent.barrier.chain")
        let log = TestLog()
        let inside = Atomic<Int>(0)
        let overlaps = Atomic<Int>(0)
        let count = 40
        queue.suspend()
        for index in 0..<count {
            queue.async(flags: .barrier) {
                if inside.add(1, ordering: .relaxed).newValue != 1 { overlaps.add(1, ordering: .relaxed) }
                log.append(index)
                inside.subtract(1, ordering: .relaxed)
            }
        }
        queue.resume()
        let seen = queue.sync { log.count }
        #expect(seen == count)
        #expect(log.values == Array(0..<count))
        #expect(overlaps.load(ordering: .relaxed) == 0)
    }

    /// A barrier that suspends its own queue stops the barriers queued behind it until `resume()`, also when they
    /// would otherwise run right after it on the same thread.
    @Test func barrierThatSuspendsItsQueueHoldsTheNextBarriers() {
        let queue = ConcurrentQueue(label: "concurrent.barrier.chain.suspend")
        let log = TestLog()
        let first = QueueGate()
        queue.suspend()
        queue.async(flags: .barrier) {
            queue.suspend()
            log.append(1)
            first.open()
        }
        queue.async(flags: .barrier) { log.append(2) }
        queue.async(flags: .barrier) { log.append(3) }
        queue.resume()
        #expect(first.wait())
        _ = cthr_sleep_ns(30_000_000)
        #expect(log.values == [1])
        queue.resume()
        #expect(log.wait(for: 3))
        #expect(log.values == [1, 2, 3])
    }

    /// Threads mixing `sync` reads with async barriers (which waiting readers may run, or claim from each other):
    /// every barrier runs exactly once, each thread's barriers in its submission order, never beside a reader.
    @Test func everyAsyncBarrierRunsOnceInOrderAmongSyncReaders() {
        let queue = ConcurrentQueue(label: "concurrent.barrier.claims")
        let threads = 4
        let rounds = 3_000
        let lastSeen = QueueTestLocked<[Int]>(Array(repeating: -1, count: threads))
        let outOfOrder = Atomic<Int>(0)
        let ran = Atomic<Int>(0)
        let overlaps = Atomic<Int>(0)
        let readers = Atomic<Int>(0)
        let group = WorkGroup()
        let arrived = Atomic<Int>(0)
        let go = QueueGate()
        for _ in 0..<threads { group.enter() }
        for thread in 0..<threads {
            queueTestDetached {
                arrived.add(1, ordering: .relaxed)
                _ = go.wait()
                var random = UInt64(thread + 1) &* 0x9E37_79B9_7F4A_7C15
                for round in 0..<rounds {
                    random ^= random << 13
                    random ^= random >> 7
                    random ^= random << 17
                    if random & 1 == 0 {
                        queue.async(flags: .barrier) {
                            if readers.load(ordering: .relaxed) != 0 { overlaps.add(1, ordering: .relaxed) }
                            let previous = lastSeen.withLock { seen in
                                defer { seen[thread] = round }
                                return seen[thread]
                            }
                            if previous >= round { outOfOrder.add(1, ordering: .relaxed) }
                            ran.add(1, ordering: .relaxed)
                        }
                    } else {
                        queue.sync {
                            readers.add(1, ordering: .relaxed)
                            readers.subtract(1, ordering: .relaxed)
                        }
                    }
                }
                group.leave()
            }
        }
        #expect(waitUntil { arrived.load(ordering: .relaxed) == threads })
        go.open()
        #expect(group.wait(timeout: .seconds(60)))
        queue.sync(flags: .barrier) {}
        var expected = 0
        for thread in 0..<threads {
            var random = UInt64(thread + 1) &* 0x9E37_79B9_7F4A_7C15
            for _ in 0..<rounds {
                random ^= random << 13
                random ^= random >> 7
                random ^= random << 17
                if random & 1 == 0 { expected += 1 }
            }
        }
        #expect(ran.load(ordering: .relaxed) == expected)
        #expect(outOfOrder.load(ordering: .relaxed) == 0)
        #expect(overlaps.load(ordering: .relaxed) == 0)
    }

    /// Dropping the last handle of a suspended concurrent queue resumes it, so its held work (barrier included) runs.
    @Test func releasingASuspendedConcurrentQueueRunsItsWork() {
        let log = TestLog()
        do {
            let queue = ConcurrentQueue(label: "concurrent.suspended.released")
            queue.suspend()
            queue.async { log.append(1) }
            queue.async(flags: .barrier) { log.append(2) }
            _ = cthr_sleep_ns(20_000_000)
            #expect(log.count == 0)
        }
        #expect(log.wait(for: 2))
        #expect(log.values == [1, 2])
    }

    /// Every index runs exactly once, also when every pool worker is busy (the caller takes part).
    @Test func concurrentPerformCoversEveryIndexOnce() {
        let log = TestLog()
        ConcurrentQueue.concurrentPerform(iterations: 1_000) { index in
            log.append(index)
        }
        #expect(log.values.sorted() == Array(0..<1_000))
    }

    @Test func concurrentPerformCompletesWhenWorkersAreBusy() {
        // Occupy every worker slot with tasks that block invisibly to the pool (polling), then perform.
        let release = Atomic<Bool>(false)
        let busy = WorkGroup()
        let cores = WorkerPoolStatistics.current.cores
        for _ in 0..<cores {
            ConcurrentQueue.global().async(group: busy) {
                _ = waitUntil(seconds: 20) { release.load(ordering: .relaxed) }
            }
        }
        let sum = Atomic<Int>(0)
        ConcurrentQueue.concurrentPerform(iterations: 100) { index in
            sum.add(index, ordering: .relaxed)
        }
        release.store(true, ordering: .relaxed)
        #expect(sum.load(ordering: .relaxed) == 4_950)
        #expect(busy.wait(timeout: .seconds(20)))
    }

    /// A non-barrier task of a concurrent queue may wait for an item queued on the same queue: another reader slot
    /// runs it (the serial-queue case is a diagnosed deadlock, see `QueueCrashTests`).
    @Test func taskWaitsForAnItemOnItsOwnConcurrentQueue() {
        let queue = ConcurrentQueue(label: "cq.item.wait")
        let finished = WorkItem {}
        queue.async {
            let item = WorkItem {}
            queue.async(execute: item)
            _ = item.wait()  // untimed: the path that diagnoses deadlocks must not refuse this one
            finished.perform()
        }
        #expect(finished.wait(timeout: .seconds(20)))
    }

    /// A non-barrier task of a concurrent queue may wait for a group whose task is queued on the same queue: another
    /// reader slot runs it.
    @Test func taskWaitsForAGroupOnItsOwnConcurrentQueue() {
        let queue = ConcurrentQueue(label: "cq.group.wait")
        let finished = WorkItem {}
        queue.async {
            let group = WorkGroup()
            queue.async(group: group) {}
            _ = group.wait()  // untimed: the path that diagnoses deadlocks must not refuse this one
            finished.perform()
        }
        #expect(finished.wait(timeout: .seconds(20)))
    }
}
