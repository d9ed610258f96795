// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import CThreading
import Synchronization
import Testing

@testable import Threading

/// What `QueueTimer` promises (see its documentation and <doc:Misuse>): at most one firing waits, a cancelled timer
/// starts no firing, and a timer nobody keeps never fires.
@Suite struct QueueTimerTests {
    /// A repeating timer whose queue is busy far longer than its interval has one firing queued, not one per missed
    /// deadline: a marker queued when the queue frees up runs after at most one firing. The timer goes on firing
    /// afterwards. With a 1 ns interval too (an interval no queue can serve).
    @Test(arguments: [Duration.nanoseconds(1), .milliseconds(1)])
    func aBusyQueueHoldsAtMostOneFiringOfATimer(interval: Duration) {
        let queue = SerialQueue(label: "timer.coalesce")
        let fired = Atomic<Int>(0)
        let gate = QueueGate()
        let markerSaw = Atomic<Int>(-1)
        let markerRan = QueueGate()
        queue.async {
            _ = gate.wait(seconds: 20)
            // Queued behind every firing queued so far: it sees how many of them ran first.
            queue.async {
                markerSaw.store(fired.load(ordering: .relaxed), ordering: .relaxed)
                markerRan.open()
            }
        }
        let timer = QueueTimer(queue: queue, delay: .zero, repeating: interval) {
            fired.add(1, ordering: .relaxed)
        }
        _ = cthr_sleep_ns(100_000_000)  // about 100 deadlines of the 1 ms timer pass while the queue is busy
        gate.open()
        #expect(markerRan.wait(seconds: 20))
        let saw = markerSaw.load(ordering: .relaxed)
        #expect(saw <= 1, "\(saw) firings were queued behind the busy task")
        // Not stalled by the coalescing: it fires again once its last firing ran.
        #expect(waitUntil(seconds: 20) { fired.load(ordering: .relaxed) >= saw + 3 })
        timer.cancel()
    }

    /// A handler slower than the interval never overlaps itself, even on a concurrent queue (the next firing is
    /// armed when the handler returns).
    @Test func aSlowHandlerNeverOverlapsItselfOnAConcurrentQueue() {
        let queue = ConcurrentQueue(label: "timer.slow")
        let running = Atomic<Int>(0)
        let mostAtOnce = Atomic<Int>(0)
        let fired = Atomic<Int>(0)
        let timer = QueueTimer(queue: queue, delay: .zero, repeating: .milliseconds(1)) {
            let now = running.add(1, ordering: .relaxed).newValue
            _ = mostAtOnce.max(now, ordering: .relaxed)
            _ = cthr_sleep_ns(10_000_000)
            running.subtract(1, ordering: .relaxed)
            fired.add(1, ordering: .relaxed)
        }
        #expect(waitUntil(seconds: 20) { fired.load(ordering: .relaxed) >= 5 })
        timer.cancel()
        #expect(mostAtOnce.load(ordering: .relaxed) == 1)
    }

    /// A firing queued before `cancel()` does not run its handler: the check is made when the firing starts.
    @Test func aFiringQueuedBeforeCancelDoesNotRun() {
        let queue = SerialQueue(label: "timer.cancel.queued")
        let fired = Atomic<Int>(0)
        let gate = QueueGate()
        queue.async { _ = gate.wait(seconds: 20) }
        let timer = QueueTimer(queue: queue, delay: .zero, repeating: .milliseconds(1)) {
            fired.add(1, ordering: .relaxed)
        }
        _ = cthr_sleep_ns(30_000_000)  // deadlines pass while the queue is busy: a firing is queued
        timer.cancel()
        gate.open()
        queue.sync {}
        _ = cthr_sleep_ns(20_000_000)
        queue.sync {}
        #expect(fired.load(ordering: .relaxed) == 0)
    }

    /// Once `cancel()` returned, only the handler that was already running finishes; nothing else starts (on a
    /// concurrent queue, where queued firings would otherwise run beside it).
    @Test func onlyTheRunningHandlerFinishesAfterCancel() {
        let queue = ConcurrentQueue(label: "timer.cancel.running")
        let started = Atomic<Int>(0)
        let running = QueueGate()
        let release = QueueGate()
        let timer = QueueTimer(queue: queue, delay: .zero, repeating: .milliseconds(1)) {
            if started.add(1, ordering: .relaxed).newValue == 1 {
                running.open()
                _ = release.wait(seconds: 20)
            }
        }
        #expect(running.wait(seconds: 20))
        _ = cthr_sleep_ns(30_000_000)  // deadlines pass while the first handler runs
        timer.cancel()
        release.open()
        queue.sync(flags: .barrier) {}
        _ = cthr_sleep_ns(20_000_000)
        queue.sync(flags: .barrier) {}
        #expect(started.load(ordering: .relaxed) == 1)
    }

    /// The lifetime rule: a timer nobody keeps is cancelled when it is released, so it never fires; the same timer
    /// kept in a variable does. (The first deadline is 200 ms away, so the release comes first even on a loaded
    /// machine.)
    @Test func aTimerNobodyKeepsNeverFires() {
        let queue = SerialQueue(label: "timer.unkept")
        let dropped = Atomic<Int>(0)
        _ = QueueTimer(queue: queue, delay: .milliseconds(200), repeating: .milliseconds(1)) {
            dropped.add(1, ordering: .relaxed)
        }
        let kept = Atomic<Int>(0)
        let timer = QueueTimer(queue: queue, delay: .milliseconds(200), repeating: .milliseconds(1)) {
            kept.add(1, ordering: .relaxed)
        }
        #expect(waitUntil(seconds: 20) { kept.load(ordering: .relaxed) >= 3 })
        timer.cancel()
        queue.sync {}
        #expect(dropped.load(ordering: .relaxed) == 0)
    }
}
