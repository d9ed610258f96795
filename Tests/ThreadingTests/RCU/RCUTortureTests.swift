// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import Synchronization
import Testing

@testable import Threading

/// A record in the style of liburcu's rcutorture: a generation, a payload derived from it, a pipeline age (0 while
/// published, 1 once replaced, +1 after each grace period the writer waits for) and a poison word set by `deinit`.
///
/// `Sendable`: every mutable field is an `Atomic`; the rest is immutable.
final class TortureRecord: Sendable {
    static let live = TestCounter()
    static let poisoned: UInt64 = 0xDEAD_BEEF_DEAD_BEEF

    let generation: Int
    let payload: Int
    let age = Atomic<Int>(0)
    let poison = Atomic<UInt64>(0)

    init(generation: Int) {
        self.generation = generation
        self.payload = generation &* 0x5851_F42D
        TortureRecord.live.add()
    }

    deinit {
        poison.store(TortureRecord.poisoned, ordering: .sequentiallyConsistent)
        TortureRecord.live.add(-1)
    }

    /// Checks the record as a reader sees it; returns a description of what is wrong, if any. The age is checked
    /// only inside a read section (a record copied out, as by `snapshot()`, may legitimately outlive grace periods).
    func check(inReadSection: Bool = true) -> String? {
        if poison.load(ordering: .relaxed) != 0 { return "read a freed record (generation \(generation))" }
        if payload != generation &* 0x5851_F42D { return "corrupt record (generation \(generation))" }
        guard inReadSection else { return nil }
        let age = age.load(ordering: .relaxed)
        if age >= 2 { return "read a record \(age - 1) grace period(s) after its removal (generation \(generation))" }
        return nil
    }
}

/// The writer's side of the pipeline: replaced records it keeps for two grace periods before dropping them.
struct TorturePipeline {
    private var retired: [TortureRecord] = []

    /// Marks `old` as replaced (age 1).
    mutating func retire(_ old: TortureRecord) {
        old.age.store(1, ordering: .sequentiallyConsistent)
        retired.append(old)
    }

    /// After a grace period: every retired record ages by one; those two grace periods old are dropped.
    mutating func gracePeriodElapsed() {
        for record in retired { record.age.add(1, ordering: .sequentiallyConsistent) }
        retired.removeAll { $0.age.load(ordering: .relaxed) >= 3 }
    }

    mutating func drain() { retired.removeAll() }
}

extension TortureTests {
    /// rcutorture-style runs on `RCUValue` and `RCUMap`: readers check generation, payload, age and poison on every
    /// read (holding the record a random while) while writers replace records, wait for grace periods and let RCU
    /// reclaim; at the end every retired record must be reclaimed (the live-instance count).
    @Suite(.serialized)
    struct RCUTorture {
        static let readers = 3
        static let writers = 2

        @Test func rcuValueTorture() {
            let seed = Torture.seed()
            let updatesPerWriter = Torture.size(300, long: 20_000)
            let liveBefore = TortureRecord.live.value
            let violations = TortureViolations()
            let reads = TestCounter()
            let updates = TestCounter()
            let gracePeriods = TestCounter()
            let writersLeft = Atomic<Int>(Self.writers)
            do {
                let value = RCUValue(TortureRecord(generation: 0))
                let ok = runTogether(Self.readers + Self.writers) { index in
                    var random = TortureRandom(seed: seed &+ UInt64(index))
                    if index < Self.writers {
                        var pipeline = TorturePipeline()
                        for step in 0..<updatesPerWriter {
                            var replaced: TortureRecord?
                            value.update { old in
                                if random.chance(50) { replaced = old }
                                return TortureRecord(generation: old.generation + 1)
                            }
                            updates.add()
                            if let replaced { pipeline.retire(replaced) }
                            if step % 4 == 0 || random.chance(20) {
                                value.synchronize()
                                gracePeriods.add()
                                pipeline.gracePeriodElapsed()
                            }
                        }
                        value.synchronize()
                        pipeline.gracePeriodElapsed()
                        pipeline.drain()
                        writersLeft.subtract(1, ordering: .sequentiallyConsistent)
                    } else {
                        var lastGeneration = 0
                        var count = 0
                        while writersLeft.load(ordering: .relaxed) > 0 || count < 100 {
                            let hold = random.below(64)
                            value.read { record in
                                if let problem = record.check() { violations.record(problem) }
                                if record.generation < lastGeneration {
                                    violations.record("generation went back: \(lastGeneration) -> \(record.generation)")
                                }
                                lastGeneration = record.generation
                                Torture.spin(hold)
                                if let problem = record.check() { violations.record("after holding: " + problem) }
                            }
                            count += 1
                            if count % 64 == 0 { PosixThread.yield() }
                        }
                        reads.add(count)
                    }
                }
                #expect(ok)
                #expect(value.load().generation == Self.writers * updatesPerWriter)
                RCU.barrier()
                let liveHeld = TortureRecord.live.value - liveBefore
                #expect(liveHeld == 1, "records still alive besides the current one: \(liveHeld - 1)")
            }
            RCU.barrier()
            let liveAfter = TortureRecord.live.value - liveBefore
            #expect(liveAfter == 0, "records never reclaimed: \(liveAfter)")
            #expect(violations.count == 0, "\(violations.messages)")
            Torture.report(
                "rcu-value",
                seed: seed,
                [
                    "reads": reads.value, "updates": updates.value, "grace-periods": gracePeriods.value,
                    "unreclaimed": liveAfter, "violations": violations.count,
                ]
            )
        }

        @Test func rcuMapTorture() {
            let seed = Torture.seed()
            let keys = 16
            let opsPerWriter = Torture.size(300, long: 20_000)
            let liveBefore = TortureRecord.live.value
            let violations = TortureViolations()
            let reads = TestCounter()
            let writes = TestCounter()
            let removals = TestCounter()
            let gracePeriods = TestCounter()
            let generations = Atomic<Int>(0)
            let writersLeft = Atomic<Int>(Self.writers)
            do {
                let map = RCUMap<Int, TortureRecord>()
                for key in 0..<keys {
                    map.set(TortureRecord(generation: generations.add(1, ordering: .relaxed).newValue), forKey: key)
                }
                let ok = runTogether(Self.readers + Self.writers) { index in
                    var random = TortureRandom(seed: seed &+ UInt64(index))
                    if index < Self.writers {
                        var pipeline = TorturePipeline()
                        for step in 0..<opsPerWriter {
                            let key = random.below(keys)
                            let remove = random.chance(10)
                            let keep = random.chance(50)
                            var replaced: TortureRecord?
                            map.update(key) { old in
                                if keep { replaced = old }
                                if remove { return nil }
                                // Generations grow per key: updates of one key are serialised by the map.
                                return TortureRecord(generation: generations.add(1, ordering: .relaxed).newValue)
                            }
                            if remove { removals.add() } else { writes.add() }
                            if let replaced { pipeline.retire(replaced) }
                            if step % 4 == 0 || random.chance(20) {
                                RCU.synchronize()
                                gracePeriods.add()
                                pipeline.gracePeriodElapsed()
                            }
                        }
                        RCU.synchronize()
                        pipeline.gracePeriodElapsed()
                        pipeline.drain()
                        writersLeft.subtract(1, ordering: .sequentiallyConsistent)
                    } else {
                        var lastGeneration = [Int](repeating: 0, count: keys)
                        var count = 0
                        while writersLeft.load(ordering: .relaxed) > 0 || count < 100 {
                            let key = random.below(keys)
                            let hold = random.below(64)
                            _ = map.withValue(forKey: key) { record in
                                if let problem = record.check() { violations.record(problem) }
                                if record.generation < lastGeneration[key] {
                                    violations.record(
                                        "key \(key): generation went back \(lastGeneration[key]) -> \(record.generation)"
                                    )
                                }
                                lastGeneration[key] = record.generation
                                Torture.spin(hold)
                                if let problem = record.check() { violations.record("after holding: " + problem) }
                            }
                            if random.chance(2) {
                                // A whole-map pass (iteration goes through the same read-side protection).
                                for (_, record) in map.snapshot() {
                                    if let problem = record.check(inReadSection: false) {
                                        violations.record("snapshot: " + problem)
                                    }
                                }
                            }
                            count += 1
                            if count % 64 == 0 { PosixThread.yield() }
                        }
                        reads.add(count)
                    }
                }
                #expect(ok)
                RCU.barrier()
                let liveHeld = TortureRecord.live.value - liveBefore
                #expect(liveHeld == map.count, "records alive: \(liveHeld), in the map: \(map.count)")
            }
            RCU.barrier()
            let liveAfter = TortureRecord.live.value - liveBefore
            #expect(liveAfter == 0, "records never reclaimed: \(liveAfter)")
            #expect(violations.count == 0, "\(violations.messages)")
            Torture.report(
                "rcu-map",
                seed: seed,
                [
                    "reads": reads.value, "writes": writes.value, "removals": removals.value,
                    "grace-periods": gracePeriods.value, "unreclaimed": liveAfter, "violations": violations.count,
                ]
            )
        }

        /// The flat table (`RCUMap<Int, Int>`): writers update, remove and re-add keys (so arrays fill with tombstones
        /// and are rebuilt over and over) while readers and snapshots check that no key's generation goes back and
        /// that every value is one a writer stored for that key.
        @Test func rcuFlatMapTorture() {
            let seed = Torture.seed()
            let keys = 64
            let opsPerWriter = Torture.size(2_000, long: 200_000)
            let violations = TortureViolations()
            let reads = TestCounter()
            let writes = TestCounter()
            let removals = TestCounter()
            let generations = Atomic<Int>(0)
            let writersLeft = Atomic<Int>(Self.writers)
            // A value encodes its key and a generation that grows per key: generation * 1_024 + key.
            let map = RCUMap<Int, Int>()
            #expect(RCUMap<Int, Int>.usesFlatTable)
            let ok = runTogether(Self.readers + Self.writers) { index in
                var random = TortureRandom(seed: seed &+ UInt64(index))
                if index < Self.writers {
                    for _ in 0..<opsPerWriter {
                        let key = random.below(keys)
                        let remove = random.chance(30)
                        map.update(key) { _ in
                            remove ? nil : generations.add(1, ordering: .relaxed).newValue * 1_024 + key
                        }
                        if remove { removals.add() } else { writes.add() }
                    }
                    writersLeft.subtract(1, ordering: .sequentiallyConsistent)
                } else {
                    var lastGeneration = [Int](repeating: 0, count: keys)
                    var count = 0
                    while writersLeft.load(ordering: .relaxed) > 0 || count < 100 {
                        let key = random.below(keys)
                        if let value = map.get(key) {
                            if value % 1_024 != key { violations.record("key \(key): foreign value \(value)") }
                            if value / 1_024 < lastGeneration[key] {
                                violations.record(
                                    "key \(key): generation went back \(lastGeneration[key]) -> \(value / 1_024)"
                                )
                            }
                            lastGeneration[key] = value / 1_024
                        }
                        if random.chance(5) {
                            for (key, value) in map.snapshot() where value % 1_024 != key {
                                violations.record("snapshot: key \(key): foreign value \(value)")
                            }
                        }
                        count += 1
                    }
                    reads.add(count)
                }
            }
            #expect(ok)
            #expect(map.count == map.snapshot().count)
            #expect(violations.count == 0, "\(violations.messages)")
            Torture.report(
                "rcu-flat-map",
                seed: seed,
                [
                    "reads": reads.value, "writes": writes.value, "removals": removals.value,
                    "violations": violations.count,
                ]
            )
        }
    }
}
