// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import CTestSupport
import CThreading
import Glibc
import Synchronization
import Testing

@testable import Threading

/// Bad input and misuse of queues whose outcome is a value or a thrown error (the object stays usable);
/// the table in <doc:Misuse> lists each case.
@Suite struct QueueMisuseTests {
    @Test func concurrentPerformWithZeroOrNegativeIterationsRunsNothing() {
        let ran = Atomic<Int>(0)
        ConcurrentQueue.concurrentPerform(iterations: 0) { _ in ran.add(1, ordering: .relaxed) }
        ConcurrentQueue.concurrentPerform(iterations: -10) { _ in ran.add(1, ordering: .relaxed) }
        ConcurrentQueue.concurrentPerform(iterations: Int.min) { _ in ran.add(1, ordering: .relaxed) }
        #expect(ran.load(ordering: .relaxed) == 0)
    }

    @Test func negativeDelayRunsSoonAndHugeDelayNeverFires() {
        let queue = SerialQueue(label: "misuse.delays")
        let group = WorkGroup()
        group.enter()
        queue.asyncAfter(delay: .seconds(-3600)) { group.leave() }
        #expect(group.wait(timeout: .seconds(20)))
        group.enter()
        queue.asyncAfter(deadline: .now - .seconds(10)) { group.leave() }
        #expect(group.wait(timeout: .seconds(20)))

        let never = WorkItem {}
        queue.asyncAfter(deadline: .now + hugeDuration, execute: never)
        let timer = QueueTimer(queue: queue, delay: hugeDuration, repeating: hugeDuration) {}
        #expect(!never.wait(timeout: .milliseconds(20)))
        never.cancel()
        timer.cancel()
        timer.cancel()  // twice: no effect
        #expect(timer.isCancelled)
        #expect(never.wait(timeout: .seconds(20)))  // a cancelled item counts as finished
    }

    @Test func negativeAndZeroWaitsOnGroupsAndItems() {
        let queue = SerialQueue(label: "misuse.waits")
        let gate = WorkGroup()
        gate.enter()
        let group = WorkGroup()
        let item = WorkItem { _ = gate.wait(timeout: .seconds(20)) }
        queue.async(group: group) { _ = gate.wait(timeout: .seconds(20)) }
        queue.async(execute: item)
        #expect(!group.wait(timeout: .seconds(-1)))
        #expect(!group.wait(timeout: .zero))
        #expect(!item.wait(timeout: .nanoseconds(-1)))
        gate.leave()
        #expect(group.wait(timeout: hugeDuration))
        #expect(item.wait(timeout: .seconds(20)))
        #expect(WorkGroup().wait(timeout: .seconds(-1)))  // an empty group is done
    }

    @Test func workItemPerformTwiceAndCancelTwiceRunOnce() {
        let ran = Atomic<Int>(0)
        let item = WorkItem { ran.add(1, ordering: .relaxed) }
        item.perform()
        item.perform()
        item.cancel()
        item.cancel()
        #expect(ran.load(ordering: .relaxed) == 1)
        let cancelled = WorkItem { ran.add(1, ordering: .relaxed) }
        cancelled.cancel()
        cancelled.perform()
        SerialQueue(label: "misuse.item").async(execute: cancelled)
        #expect(cancelled.wait(timeout: .seconds(5)))
        #expect(ran.load(ordering: .relaxed) == 1)
    }

    @Test func deepSuspensionBalancedByResumesRunsEverything() {
        let queue = ConcurrentQueue(label: "misuse.suspend", width: 2)
        for _ in 0..<1_000 { queue.suspend() }
        let group = WorkGroup()
        let ran = Atomic<Int>(0)
        for _ in 0..<10 { queue.async(group: group) { ran.add(1, ordering: .relaxed) } }
        for _ in 0..<999 { queue.resume() }
        #expect(!group.wait(timeout: .milliseconds(20)))
        #expect(ran.load(ordering: .relaxed) == 0)
        queue.resume()
        #expect(group.wait(timeout: .seconds(20)))
        #expect(ran.load(ordering: .relaxed) == 10)
    }
}
