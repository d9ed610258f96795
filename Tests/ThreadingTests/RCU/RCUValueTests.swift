// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import CThreading
import Synchronization
import Testing

@testable import Threading

/// A value that counts its live instances and poisons itself when it is destroyed.
final class RCUTracked: Sendable {
    static let aliveMark = 0x5AFE_5AFE
    static let deadMark = 0xDEAD_DEAD

    let generation: Int
    let live: TestCounter
    private let mark = Atomic<Int>(RCUTracked.aliveMark)

    init(_ generation: Int, live: TestCounter) {
        self.generation = generation
        self.live = live
        live.add()
    }

    /// Whether the instance has not been destroyed (a freed instance reads as dead or as garbage).
    var isAlive: Bool { mark.load(ordering: .relaxed) == RCUTracked.aliveMark }

    deinit {
        mark.store(RCUTracked.deadMark, ordering: .relaxed)
        live.add(-1)
    }
}

@Suite(.serialized) struct RCUValueTests {
    @Test func readLoadUpdateExchangeStore() {
        let value = RCUValue(1)
        #expect(value.read { $0 } == 1)
        #expect(value.load() == 1)
        #expect(value.update { $0 + 1 } == 2)
        #expect(value.exchange(10) == 2)
        #expect(value.load() == 10)
        value.store(5)
        #expect(value.read { $0 * 2 } == 10)
    }

    @Test func worksWithValueTypesHoldingReferences() {
        let value = RCUValue(["a": [1, 2], "b": [3]])
        #expect(value.read { $0["a"]?.count } == 2)
        value.update { old in
            var new = old
            new["c"] = [4, 5, 6]
            return new
        }
        #expect(value.read { $0["c"] } == [4, 5, 6])
        #expect(value.read { $0.count } == 3)
    }

    @Test func throwingTransformChangesNothing() {
        struct Refused: Error {}
        let value = RCUValue("kept")
        #expect(throws: Refused.self) {
            try value.update { _ in throw Refused() }
        }
        #expect(value.load() == "kept")
        // The writer lock was released: a later update works.
        #expect(value.update { $0 + "!" } == "kept!")
    }

    @Test func readsNestAndMayUpdate() {
        let value = RCUValue(1)
        let seen = value.read { outer -> Int in
            #expect(RCU.isInReadSection)
            let inner = value.read { $0 }
            value.store(2)  // allowed inside a read section: the old value is reclaimed later
            // The outer borrow is still the value read at entry.
            return outer + inner
        }
        #expect(seen == 2)
        #expect(!RCU.isInReadSection)
        #expect(value.load() == 2)
    }

    /// swift-atomics' `compareExchange(expected:desired:)` and liburcu's `rcu_cmpxchg_pointer`: it publishes only
    /// when the current value is the expected one, and returns what was current either way.
    @Test func compareExchangePublishesOnlyOverTheExpectedValue() {
        let value = RCUValue(10)
        let won = value.compareExchange(expected: 10, desired: 11)
        #expect(won.exchanged && won.original == 10)
        let lost = value.compareExchange(expected: 10, desired: 99)
        #expect(!lost.exchanged && lost.original == 11)
        #expect(value.load() == 11)
        // Value equality, not identity: an equal copy made elsewhere matches.
        let names = RCUValue(["a", "b"])
        #expect(names.compareExchange(expected: ["a"] + ["b"], desired: ["c"]).exchanged)
        #expect(names.load() == ["c"])
    }

    /// The CAS loop of the atomics' users: threads increment a shared counter with compare-and-exchange only, and
    /// no increment is lost.
    @Test func compareExchangeLoopsLoseNoIncrement() {
        let counter = RCUValue(0)
        let ok = runTogether(4) { _ in
            for _ in 0..<500 {
                var seen = counter.load()
                while true {
                    let (exchanged, original) = counter.compareExchange(expected: seen, desired: seen + 1)
                    if exchanged { break }
                    seen = original
                }
            }
        }
        #expect(ok)
        #expect(counter.load() == 2_000)
    }

    /// `rcu_cmpxchg_pointer` compares pointers: for class values, `compareExchange(expected:desired:by: ===)`
    /// compares identity, and an equal but distinct object does not match.
    @Test func compareExchangeByIdentityForClassValues() {
        let live = TestCounter()
        let first = RCUTracked(1, live: live)
        let value = RCUValue(first)
        let lookalike = RCUTracked(1, live: live)
        let refused = value.compareExchange(expected: lookalike, desired: RCUTracked(2, live: live), by: ===)
        #expect(!refused.exchanged && refused.original === first)
        let accepted = value.compareExchange(expected: first, desired: RCUTracked(3, live: live), by: ===)
        #expect(accepted.exchanged && accepted.original === first)
        #expect(value.read { $0.generation } == 3)
    }

    /// liburcu's `call_rcu`: a callback queued while a reader still sees the old value runs only after that reader
    /// left its read section; `RCU.barrier()` waits for it.
    @Test func callbackRunsAfterTheGracePeriod() {
        let value = RCUValue(1)
        let inside = RCUTestSupport.Flag()
        let leave = RCUTestSupport.Flag()
        let sawOld = RCUTestSupport.Flag()
        let reader = RCUTestSupport.start {
            value.read { old in
                inside.set()
                #expect(waitUntil(seconds: 20) { leave.isSet })
                sawOld.set(old == 1)
            }
        }
        #expect(waitUntil(seconds: 20) { inside.isSet })
        value.store(2)
        let ran = RCUTestSupport.Flag()
        let ranWhileReading = RCUTestSupport.Flag()
        RCU.callAfterGracePeriod {
            ranWhileReading.set(!leave.isSet)
            ran.set()
        }
        // The reader still holds its read section: the callback must not have run (checked for a while; a callback
        // that ran too early is also caught by `ranWhileReading`).
        for _ in 0..<20 where !ran.isSet { _ = cthr_sleep_ns(1_000_000) }
        #expect(!ran.isSet)
        leave.set()
        RCUTestSupport.join(reader, within: 20)
        RCU.barrier()
        #expect(ran.isSet)
        #expect(!ranWhileReading.isSet)
        #expect(sawOld.isSet)
    }

    /// A callback may be queued from inside a read section (it never waits), and what it captured is released
    /// once it ran.
    @Test func callbackQueuedInAReadSectionRunsAndIsReleased() {
        let live = TestCounter()
        let value = RCUValue(0)
        let ran = TestCounter()
        do {
            let captured = RCUTracked(1, live: live)
            value.read { _ in
                RCU.callAfterGracePeriod { ran.add(captured.generation) }
            }
        }
        RCU.barrier()
        #expect(ran.value == 1)
        #expect(live.value == 0)
    }

    @Test func oldValuesAreReleasedAfterGracePeriod() {
        let live = TestCounter()
        var value: RCUValue<RCUTracked>? = RCUValue(RCUTracked(0, live: live))
        for generation in 1...100 {
            value!.store(RCUTracked(generation, live: live))
        }
        RCU.barrier()
        #expect(live.value == 1)
        #expect(value!.read { $0.generation } == 100)
        value = nil
        #expect(live.value == 0)
    }

    @Test func threadsRegisterAutomatically() {
        let value = RCUValue(1)
        let registeredBefore = RCUTestSupport.Flag()
        let registeredAfter = RCUTestSupport.Flag()
        let thread = RCUTestSupport.start {
            registeredBefore.set(RCU.isCurrentThreadRegistered)
            _ = value.read { $0 }
            registeredAfter.set(RCU.isCurrentThreadRegistered)
        }
        RCUTestSupport.join(thread)
        #expect(!registeredBefore.isSet)
        #expect(registeredAfter.isSet)
        // The exited thread was unregistered: a grace period does not wait for it.
        RCU.synchronize()
    }

    @Test func explicitRegistrationReportsState() {
        let results = TestCounter()
        let thread = RCUTestSupport.start {
            if RCU.registerCurrentThread() { results.add(1) }
            if !RCU.registerCurrentThread() { results.add(10) }
            if RCU.unregisterCurrentThread() { results.add(100) }
            if !RCU.unregisterCurrentThread() { results.add(1000) }
        }
        RCUTestSupport.join(thread)
        #expect(results.value == 1111)
    }

    @Test func updatesFromRacingWritersAreNotLost() {
        let value = RCUValue(0)
        let line = RCUTestSupport.StartLine()
        let writers = (0..<2).map { _ in
            RCUTestSupport.start {
                line.arriveAndWait()
                for _ in 0..<1_000 { value.update { $0 + 1 } }
            }
        }
        line.go(expecting: writers.count)
        writers.forEach { RCUTestSupport.join($0) }
        #expect(value.load() == 2_000)
    }

    /// Readers and a writer swapping the value 10,000 times: no reader ever sees a destroyed value or a generation
    /// going backwards, and after a grace period every old value is released (one instance left).
    @Test func readersNeverSeeFreedValues() {
        #if THREADING_LONG_TESTS
        let swaps = 1_000_000
        #else
        let swaps = 10_000
        #endif
        let live = TestCounter()
        let value = RCUValue(RCUTracked(0, live: live))
        let line = RCUTestSupport.StartLine()
        let writerDone = RCUTestSupport.Flag()
        let deadSeen = TestCounter()
        let backwardsSeen = TestCounter()
        let reads = TestCounter()

        let readers = (0..<2).map { _ in
            RCUTestSupport.start {
                line.arriveAndWait()
                var last = 0
                var count = 0
                // At least one read each: on a loaded machine a reader may get its first CPU only after the writer
                // finished its swaps (then `reads` was 0 and the test failed, 2 runs in 10 under load).
                repeat {
                    value.read { current in
                        if !current.isAlive { deadSeen.add() }
                        if current.generation < last { backwardsSeen.add() }
                        last = current.generation
                    }
                    count += 1
                } while !writerDone.isSet
                reads.add(count)
            }
        }
        let writer = RCUTestSupport.start {
            line.arriveAndWait()
            for generation in 1...swaps {
                value.store(RCUTracked(generation, live: live))
            }
            writerDone.set()
        }
        line.go(expecting: readers.count + 1)
        RCUTestSupport.join(writer)
        readers.forEach { RCUTestSupport.join($0) }

        #expect(deadSeen.value == 0)
        #expect(backwardsSeen.value == 0)
        #expect(reads.value > 0)
        #expect(value.read { $0.generation } == swaps)
        RCU.barrier()
        #expect(live.value == 1)
    }
}
