// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import CThreading
import Glibc
import Synchronization
import Testing

@testable import Threading

/// A serial queue's submission from many producers started together, with what the queue promises checked on the
/// queue itself: each producer's tasks run once and in its order, never two
/// at once; a `sync` runs after the same thread's earlier `async`; a suspended queue holds what producers push;
/// a submission racing a timed shutdown either runs or is counted, and a refused one never runs; a fork while
/// producers push leaves the child a usable queue.
@Suite(.serialized) struct QueueSubmissionTests {
    static let producers = 8
    #if THREADING_LONG_TESTS
    static let perProducer = 50_000
    #else
    static let perProducer = 4_000
    #endif

    /// Per producer, the next sequence number its tasks must carry, and whether a task is running; written only by
    /// the queue's tasks (which the queue runs one at a time), read after they all ran.
    final class Ledger: @unchecked Sendable {
        let next: UnsafeMutablePointer<Int>
        let producers: Int
        let ran = Atomic<Int>(0)
        let outOfOrder = Atomic<Int>(0)
        let overlapping = Atomic<Int>(0)
        private let running = Atomic<Bool>(false)

        init(producers: Int) {
            self.producers = producers
            next = .allocate(capacity: producers)
            next.initialize(repeating: 0, count: producers)
        }

        deinit { next.deallocate() }

        /// Runs on the queue: checks the order and the exclusivity.
        func record(producer: Int, sequence: Int) {
            if running.exchange(true, ordering: .acquiringAndReleasing) { overlapping.add(1, ordering: .relaxed) }
            if next[producer] != sequence { outOfOrder.add(1, ordering: .relaxed) }
            next[producer] = sequence + 1
            running.store(false, ordering: .releasing)
            ran.add(1, ordering: .releasing)
        }
    }

    /// Starts `count` threads together (each arrives, then waits for the go) running `body(index)`; joins them.
    static func together(_ count: Int, _ body: @escaping @Sendable (Int) -> Void) {
        let arrived = Atomic<Int>(0)
        let go = Atomic<Bool>(false)
        let threads = (0..<count).map { index in
            try! PosixThread(name: "submit.\(index)") {
                arrived.add(1, ordering: .relaxed)
                while !go.load(ordering: .acquiring) { _ = cthr_thread_yield() }
                body(index)
            }
        }
        _ = waitUntil { arrived.load(ordering: .relaxed) == count }
        go.store(true, ordering: .releasing)
        for thread in threads { thread.join() }
    }

    @Test func manyProducersKeepTheirOrderAndNoTaskRunsTwice() {
        let queue = SerialQueue(label: "submit.order")
        let ledger = Ledger(producers: Self.producers)
        let perProducer = Self.perProducer
        Self.together(Self.producers) { producer in
            for sequence in 0..<perProducer {
                queue.async { ledger.record(producer: producer, sequence: sequence) }
            }
        }
        let total = Self.producers * perProducer
        #expect(waitUntil(seconds: 30) { ledger.ran.load(ordering: .acquiring) == total })
        #expect(ledger.ran.load(ordering: .acquiring) == total)
        #expect(ledger.outOfOrder.load(ordering: .relaxed) == 0)
        #expect(ledger.overlapping.load(ordering: .relaxed) == 0)
        queue.sync {
            for producer in 0..<Self.producers { #expect(ledger.next[producer] == perProducer) }
        }
    }

    /// A `sync` from a producer runs after every `async` that producer submitted before it, while other producers
    /// keep the queue busy (the idle fast path, the slow path behind a drain, and the list not yet announced).
    @Test func syncRunsAfterTheSameThreadsEarlierAsyncsUnderManyProducers() {
        let queue = SerialQueue(label: "submit.sync")
        let ledger = Ledger(producers: Self.producers)
        let early = Atomic<Int>(0)
        let perProducer = Self.perProducer / 4
        Self.together(Self.producers) { producer in
            for sequence in 0..<perProducer {
                queue.async { ledger.record(producer: producer, sequence: sequence) }
                if sequence % 7 == 0 {
                    queue.sync {
                        if ledger.next[producer] != sequence + 1 { early.add(1, ordering: .relaxed) }
                    }
                }
            }
        }
        let total = Self.producers * perProducer
        #expect(waitUntil(seconds: 30) { ledger.ran.load(ordering: .acquiring) == total })
        #expect(early.load(ordering: .relaxed) == 0, "a sync ran before the same thread's earlier async")
        #expect(ledger.outOfOrder.load(ordering: .relaxed) == 0)
        #expect(ledger.overlapping.load(ordering: .relaxed) == 0)
    }

    /// Producers push into a suspended queue: nothing runs until `resume()`, then everything runs in order.
    @Test func suspendedQueueHoldsWhatProducersPushUntilResume() {
        let queue = SerialQueue(label: "submit.suspend")
        let ledger = Ledger(producers: 4)
        queue.suspend()
        let perProducer = 1_000
        Self.together(4) { producer in
            for sequence in 0..<perProducer {
                queue.async { ledger.record(producer: producer, sequence: sequence) }
            }
        }
        _ = cthr_sleep_ns(20_000_000)
        #expect(ledger.ran.load(ordering: .acquiring) == 0)
        #expect(queue.queueCore.pendingTaskCount == 4 * perProducer)
        queue.resume()
        #expect(waitUntil(seconds: 30) { ledger.ran.load(ordering: .acquiring) == 4 * perProducer })
        #expect(ledger.outOfOrder.load(ordering: .relaxed) == 0)
        #expect(ledger.overlapping.load(ordering: .relaxed) == 0)
    }

    /// `tryAsync` from several producers while the pool is shut down with a deadline: every accepted task runs at
    /// most once, the accepted ones that never ran are exactly the shutdown's `tasksNotRun`, and no refused task runs.
    @Test(arguments: 0..<6) func tryAsyncRacingATimedShutdownRunsOrIsCounted(round: Int) {
        let pool = WorkerPool(label: "submit.shutdown.\(round)", threads: 2)
        let queue = SerialQueue(label: "submit.shutdown.\(round)", pool: pool)
        let capacity = 4 * 20_000
        let runs = UnsafeMutablePointer<Atomic<UInt8>>.allocate(capacity: capacity)
        for index in 0..<capacity { (runs + index).initialize(to: Atomic(0)) }
        defer { runs.deallocate() }
        let slots = UnsafeSendableBox(runs)
        let accepted = UnsafeMutablePointer<Atomic<Bool>>.allocate(capacity: capacity)
        for index in 0..<capacity { (accepted + index).initialize(to: Atomic(false)) }
        defer { accepted.deallocate() }
        let answers = UnsafeSendableBox(accepted)
        let result = Mutex<WorkerPool.ShutdownResult?>(nil)
        Self.together(5) { index in
            if index == 4 {
                _ = cthr_sleep_ns(UInt64(1_000_000 + round * 300_000))
                let outcome = pool.shutdown(timeout: .milliseconds(1))
                result.withLock { $0 = outcome }
                return
            }
            for sequence in 0..<20_000 {
                let id = index * 20_000 + sequence
                let ok = queue.tryAsync {
                    slots.value[id].add(1, ordering: .relaxed)
                    if sequence % 64 == 0 { _ = cthr_sleep_ns(20_000) }
                }
                answers.value[id].store(ok, ordering: .relaxed)
            }
        }
        let outcome = result.withLock { $0 }!
        var acceptedNotRun = 0
        for id in 0..<capacity {
            let count = runs[id].load(ordering: .relaxed)
            #expect(count <= 1, "task \(id) ran \(count) times")
            if accepted[id].load(ordering: .relaxed) {
                if count == 0 { acceptedNotRun += 1 }
            } else {
                #expect(count == 0, "refused task \(id) ran")
            }
        }
        #expect(acceptedNotRun == outcome.tasksNotRun, "accepted but not run \(acceptedNotRun), \(outcome)")
    }

    /// A fork while producers push into a serial queue (a producer may be inside its submission): the
    /// child's queue is idle and usable (its own `async` and `sync` run), and none of the parent's tasks runs there.
    @Test(.disabled(if: faultForkBlockedBySanitizer, "TSan does not support multi-threaded fork children"))
    func forkWhileProducersPushLeavesTheChildAUsableQueue() async {
        await #expect(processExitsWith: .success) {
            exit(forkWhileProducersPushScenario())
        }
    }
}

/// The scenario of ``QueueSubmissionTests/forkWhileProducersPushLeavesTheChildAUsableQueue()``: 0 when it held.
func forkWhileProducersPushScenario() -> Int32 {
    let queue = SerialQueue(label: "submit.fork")
    let stop = Atomic<Bool>(false)
    let parentRan = Atomic<Int>(0)
    let pid = getpid()
    let producers = (0..<3).map { index in
        try! PosixThread(name: "submit.fork.\(index)") {
            while !stop.load(ordering: .relaxed) {
                queue.async {
                    if getpid() != pid { _exit(3) }  // a task of the parent's ran in the child
                    parentRan.add(1, ordering: .relaxed)
                }
            }
        }
    }
    guard waitUntil({ parentRan.load(ordering: .relaxed) > 1_000 }) else { return 4 }
    var statuses: [Int32] = []
    for _ in 0..<5 {
        statuses.append(
            // While the producers push: the fork this test is about (their paths ran a thousand times already).
            faultRunForked(seconds: 30, quiet: false) {
                let ranHere = Atomic<Int>(0)
                for _ in 0..<100 { queue.async { ranHere.add(1, ordering: .relaxed) } }
                let seen = queue.sync { ranHere.load(ordering: .relaxed) }
                return seen == 100 ? 0 : 5
            }
        )
    }
    stop.store(true, ordering: .relaxed)
    for producer in producers { producer.join() }
    queue.sync {}
    return statuses.allSatisfy { $0 == 0 } ? 0 : 1
}
