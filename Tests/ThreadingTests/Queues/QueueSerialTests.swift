// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import CThreading
import Synchronization
import Testing

@testable import Threading

@Suite struct QueueSerialTests {
    @Test func syncReturnsValueAndRethrows() {
        struct Failure: Error, Equatable {}
        let queue = SerialQueue(label: "serial.sync.value")
        #expect(queue.sync { 42 } == 42)
        #expect(throws: Failure()) { try queue.sync { throw Failure() } }
        // The queue is usable after a throwing closure.
        #expect(queue.sync { "again" } == "again")
    }

    @Test func syncIsFIFOAfterEarlierAsyncWork() {
        let queue = SerialQueue(label: "serial.sync.fifo")
        let log = TestLog()
        queue.async {
            _ = cthr_sleep_ns(20_000_000)
            log.append(1)
        }
        queue.async { log.append(2) }
        queue.sync { log.append(3) }
        #expect(log.values == [1, 2, 3])
    }

    /// Sync callers that find async work ahead of them keep FIFO order whoever runs that work.
    @Test func syncAfterAsyncBurstsKeepsOrder() {
        let queue = SerialQueue(label: "serial.sync.bursts")
        let log = TestLog()
        var expected: [Int] = []
        for round in 0..<200 {
            queue.async { log.append(round * 2) }
            queue.sync { log.append(round * 2 + 1) }
            expected += [round * 2, round * 2 + 1]
        }
        #expect(log.values == expected)
    }

    @Test func syncRunsOnTheCallingThread() {
        let queue = SerialQueue(label: "serial.sync.thread")
        let caller = cthr_thread_id()
        #expect(queue.sync { cthr_thread_id() } == caller)
        #expect(queue.sync { queue.isCurrent })
        #expect(!queue.isCurrent)
    }

    /// 10,000 tasks over 64 serial queues: each runs exactly once, in FIFO order per queue.
    @Test func tenThousandTasksOnSixtyFourQueuesRunOnceInOrder() {
        let queueCount = 64
        let total = 10_000
        let queues = (0..<queueCount).map { SerialQueue(label: "serial.fifo.\($0)") }
        let logs = (0..<queueCount).map { _ in TestLog() }
        let group = WorkGroup()
        for task in 0..<total {
            let index = task % queueCount
            let log = logs[index]
            queues[index].async(group: group) { log.append(task / queueCount) }
        }
        #expect(group.wait(timeout: .seconds(30)))
        for index in 0..<queueCount {
            let expected = Array(0..<((total - index + queueCount - 1) / queueCount))
            #expect(logs[index].values == expected, "queue \(index)")
        }
    }

    /// Ping-pong between two serial queues: every hop is counted (100,000 by default, 1,000,000 with
    /// THREADING_LONG_TESTS).
    @Test func pingPongBetweenTwoQueues() {
        #if THREADING_LONG_TESTS
        let hops = 1_000_000
        #else
        let hops = 100_000
        #endif
        let ping = SerialQueue(label: "serial.ping")
        let pong = SerialQueue(label: "serial.pong")
        let counter = PingPong(hops: hops, queues: [ping, pong])
        ping.async { counter.hop(0) }
        #expect(counter.done.wait(seconds: 60))
        #expect(counter.count.load(ordering: .acquiring) == hops)
        #expect(counter.wrongQueue.load(ordering: .acquiring) == 0)
    }

    final class PingPong: Sendable {
        let hops: Int
        let queues: [SerialQueue]
        let count = Atomic<Int>(0)
        let wrongQueue = Atomic<Int>(0)
        let done = QueueGate()

        init(hops: Int, queues: [SerialQueue]) {
            self.hops = hops
            self.queues = queues
        }

        func hop(_ index: Int) {
            if !queues[index % 2].isCurrent { wrongQueue.add(1, ordering: .relaxed) }
            let reached = count.add(1, ordering: .acquiringAndReleasing).newValue
            if reached == hops {
                done.open()
            } else {
                queues[(index + 1) % 2].async { self.hop(index + 1) }
            }
        }
    }

    /// Contended sync from several threads is mutually exclusive and loses nothing.
    @Test func contendedSyncIsExclusive() {
        let queue = SerialQueue(label: "serial.contended")
        let inside = Atomic<Int>(0)
        let overlaps = Atomic<Int>(0)
        let total = Atomic<Int>(0)
        let threads = 4
        let perThread = 5_000
        let group = WorkGroup()
        let arrived = Atomic<Int>(0)
        let go = QueueGate()
        for _ in 0..<threads { group.enter() }
        for _ in 0..<threads {
            queueTestDetached {
                arrived.add(1, ordering: .relaxed)
                _ = go.wait()
                for _ in 0..<perThread {
                    queue.sync {
                        if inside.add(1, ordering: .relaxed).newValue != 1 { overlaps.add(1, ordering: .relaxed) }
                        total.add(1, ordering: .relaxed)
                        inside.subtract(1, ordering: .relaxed)
                    }
                }
                group.leave()
            }
        }
        #expect(waitUntil { arrived.load(ordering: .relaxed) == threads })
        go.open()
        #expect(group.wait(timeout: .seconds(60)))
        #expect(overlaps.load(ordering: .relaxed) == 0)
        #expect(total.load(ordering: .relaxed) == threads * perThread)
    }

    /// Suspend holds a queue's tasks until resume, counted, and does not delay other queues.
    @Test func suspendHoldsTasksUntilResume() {
        let held = SerialQueue(label: "serial.suspended")
        let other = SerialQueue(label: "serial.other")
        let log = TestLog()
        held.suspend()
        held.suspend()
        held.async { log.append(1) }
        held.async { log.append(2) }
        let otherRan = QueueGate()
        other.async { otherRan.open() }
        #expect(otherRan.wait())
        _ = cthr_sleep_ns(30_000_000)
        #expect(log.count == 0)
        held.resume()
        _ = cthr_sleep_ns(30_000_000)
        #expect(log.count == 0, "one resume of two suspends must not start the queue")
        held.resume()
        #expect(log.wait(for: 2))
        #expect(log.values == [1, 2])
    }

    /// Dropping the last handle of a suspended queue resumes it: the held tasks run, in order, and a queue that
    /// targets it is not stranded (nobody could call `resume()` any more).
    @Test func releasingASuspendedQueueRunsItsWork() {
        let log = TestLog()
        let child: SerialQueue
        do {
            let parent = SerialQueue(label: "serial.suspended.released")
            child = SerialQueue(label: "serial.suspended.child", target: parent)
            parent.suspend()
            parent.suspend()
            parent.async { log.append(1) }
            parent.async { log.append(2) }
            _ = cthr_sleep_ns(20_000_000)
            #expect(log.count == 0)
        }
        #expect(log.wait(for: 2))
        child.async { log.append(3) }
        #expect(log.wait(for: 3))
        #expect(log.values == [1, 2, 3])
    }

    /// A sync onto a suspended queue waits for the resume.
    @Test func syncWaitsForResume() {
        let queue = SerialQueue(label: "serial.suspended.sync")
        let log = TestLog()
        queue.suspend()
        let finished = QueueGate()
        queueTestDetached {
            queue.sync { log.append(1) }
            finished.open()
        }
        _ = cthr_sleep_ns(30_000_000)
        #expect(log.count == 0)
        queue.resume()
        #expect(finished.wait())
        #expect(log.values == [1])
    }

    /// The closure of a task is released once it ran.
    @Test func closureIsReleasedAfterItRuns() {
        let counter = LiveCounter()
        let queue = SerialQueue(label: "serial.release")
        let ran = QueueGate()
        do {
            let tracked = Tracked(counter)
            queue.async {
                _ = tracked.id
                ran.open()
            }
        }
        #expect(ran.wait())
        #expect(waitUntil { counter.live.value == 0 })
    }

    /// A queue released with pending tasks still runs them all.
    @Test func releasedQueueRunsPendingTasks() {
        let log = TestLog()
        weak var weakQueue: SerialQueue?
        do {
            let queue = SerialQueue(label: "serial.released")
            weakQueue = queue
            for index in 0..<100 {
                queue.async {
                    if index == 0 { _ = cthr_sleep_ns(10_000_000) }
                    log.append(index)
                }
            }
        }
        #expect(weakQueue == nil)
        #expect(log.wait(for: 100))
        #expect(log.values == Array(0..<100))
    }

    /// Queues that target one serial queue never run at the same time, and sync goes through the target.
    @Test func targetQueueSerializesChildren() {
        let root = SerialQueue(label: "serial.target.root")
        let children = (0..<4).map { SerialQueue(label: "serial.target.child\($0)", target: root) }
        let inside = Atomic<Int>(0)
        let overlaps = Atomic<Int>(0)
        let group = WorkGroup()
        for round in 0..<200 {
            let child = children[round % children.count]
            child.async(group: group) {
                if inside.add(1, ordering: .relaxed).newValue != 1 { overlaps.add(1, ordering: .relaxed) }
                #expect(root.isCurrent && child.isCurrent)
                inside.subtract(1, ordering: .relaxed)
            }
        }
        let value = children[0].sync { root.isCurrent ? 1 : 0 }
        #expect(value == 1)
        #expect(group.wait(timeout: .seconds(30)))
        #expect(overlaps.load(ordering: .relaxed) == 0)
    }

    @Test func asyncAfterRunsAfterTheDelay() {
        let queue = SerialQueue(label: "serial.after")
        let start = ContinuousClock.now
        let ran = QueueGate()
        let elapsed = QueueTestLocked<Duration>(.zero)
        queue.asyncAfter(delay: .milliseconds(50)) {
            elapsed.withLock { $0 = ContinuousClock.now - start }
            ran.open()
        }
        #expect(ran.wait())
        #expect(elapsed.withLock { $0 } >= .milliseconds(50))
    }

    @Test func asyncAfterWithCancelledItemNeverRuns() {
        let queue = SerialQueue(label: "serial.after.cancel")
        let log = TestLog()
        let item = WorkItem { log.append(1) }
        queue.asyncAfter(deadline: .now + .milliseconds(30), execute: item)
        item.cancel()
        let later = QueueGate()
        queue.asyncAfter(delay: .milliseconds(80)) { later.open() }
        #expect(later.wait())
        #expect(log.count == 0)
        #expect(item.wait(timeout: .seconds(1)))
    }

    @Test func repeatingTimerFiresUntilCancelled() {
        let queue = SerialQueue(label: "serial.timer")
        let fired = Atomic<Int>(0)
        let timer = QueueTimer(queue: queue, delay: .milliseconds(5), repeating: .milliseconds(5)) {
            fired.add(1, ordering: .relaxed)
        }
        #expect(waitUntil { fired.load(ordering: .relaxed) >= 3 })
        timer.cancel()
        #expect(timer.isCancelled)
        queue.sync {}
        _ = cthr_sleep_ns(20_000_000)
        let after = fired.load(ordering: .relaxed)
        _ = cthr_sleep_ns(40_000_000)
        #expect(fired.load(ordering: .relaxed) == after)
    }
}

/// Runs `body` on a new detached thread.
func queueTestDetached(_ body: @escaping @Sendable () -> Void) {
    final class Box: @unchecked Sendable {
        let body: @Sendable () -> Void
        init(_ body: @escaping @Sendable () -> Void) { self.body = body }
    }
    let context = Unmanaged.passRetained(Box(body)).toOpaque()
    var attributes = cthr_thread_attr_t()
    attributes.detached = 1
    var handle = pthread_t()
    let code = cthr_thread_create(
        &handle,
        &attributes,
        { raw in
            Unmanaged<Box>.fromOpaque(raw!).takeRetainedValue().body()
            return nil
        },
        context
    )
    precondition(code == 0, "cthr_thread_create: \(code)")
}
