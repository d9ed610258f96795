// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import Synchronization
import Testing
import Threading

/// A queue type outside the library: it counts submissions and forwards everything else to a serial queue.
private final class CountingQueue: WorkQueue {
    let inner: SerialQueue
    let submissions = Atomic<Int>(0)

    init(_ inner: SerialQueue) { self.inner = inner }

    var label: String { "counting(\(inner.label))" }
    var qos: QoS { inner.qos }
    var queueHandle: QueueHandle { inner.queueHandle }

    func async(execute work: @escaping @Sendable () -> Void) {
        submissions.add(1, ordering: .relaxed)
        inner.async(execute: work)
    }
}

/// `WorkQueue` is open to conformers that forward to a library queue: every API that takes a queue runs the work on
/// the queue it forwards to, with no trap.
@Suite struct WorkQueueConformanceTests {
    @Test func aForwardingConformerServesAsTargetNotifyQueueAndTimerQueue() {
        let inner = SerialQueue(label: "conformance.inner")
        let outer = CountingQueue(inner)
        let key = QueueKey<Int>()
        inner.setSpecific(key, 7)

        // As a target: work of the child runs on the inner queue.
        let child = SerialQueue(label: "conformance.child", target: outer)
        let seen = Atomic<Int>(0)
        child.sync { seen.store(inner.isCurrent ? 1 : -1, ordering: .relaxed) }
        #expect(seen.load(ordering: .relaxed) == 1)

        // As a notification queue.
        let group = WorkGroup()
        let notified = WorkGroup()
        notified.enter()
        group.notify(queue: outer) {
            seen.store(inner.isCurrent ? 2 : -2, ordering: .relaxed)
            notified.leave()
        }
        #expect(notified.wait(timeout: .seconds(10)))
        #expect(seen.load(ordering: .relaxed) == 2)

        // Queue-specific values, suspension and isCurrent act on the inner queue.
        #expect(outer.getSpecific(key) == 7)
        outer.suspend()
        let ran = Atomic<Bool>(false)
        inner.async { ran.store(true, ordering: .relaxed) }
        outer.resume()
        inner.sync {}
        let didRun = ran.load(ordering: .relaxed)
        #expect(didRun)
        #expect(!outer.isCurrent)
        inner.sync { #expect(outer.isCurrent) }

        // Its own `async` is the conformer's: counted.
        outer.async {}
        inner.sync {}
        #expect(outer.submissions.load(ordering: .relaxed) >= 1)
    }
}
