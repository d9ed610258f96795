// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import BenchKit
import Foundation
import Synchronization
import Testing

/// Broken on purpose, deterministically: every write stores a value that is not congruent to its key.
final class WrongValueCache: CacheStrategy, Sendable {
    typealias Shape = IntCacheShape
    static let name = "wrong value (test)"
    static let id = "test-wrong-value"
    static let kind = StrategyKind.reference
    static let summary = "stores value + 1"

    private let state: Mutex<[Int: Int]>

    init(keyCount: Int) { state = Mutex(IntCacheShape.prefilled(keyCount: keyCount)) }

    func read(_ key: Int) -> Int? { state.withLock { $0[key] } }

    func write(_ key: Int, _ value: Int) { state.withLock { $0[key] = value + 1 } }
}

/// Broken on purpose, racily: no lock, and a non-atomic two-step write that passes through a value not congruent to
/// its key. Memory-safe (each slot is an `Atomic`), so it runs in-process and under TSan; only the validation can
/// tell that it is wrong.
final class TornWriteCache: CacheStrategy, Sendable {
    typealias Shape = IntCacheShape
    static let name = "torn write (test)"
    static let id = "test-torn-write"
    static let kind = StrategyKind.reference
    static let summary = "two-step unsynchronized write"

    final class Slot: Sendable {
        let value: Atomic<Int>
        init(_ value: Int) { self.value = Atomic(value) }
    }

    private let slots: [Slot]
    private let spin = Atomic<Int>(0)

    init(keyCount: Int) { slots = (0..<keyCount).map { Slot($0) } }

    func read(_ key: Int) -> Int? { slots[key].value.load(ordering: .relaxed) }

    func write(_ key: Int, _ value: Int) {
        slots[key].value.store(value &+ 1, ordering: .relaxed)
        for _ in 0..<50 {  // keep the torn state visible for a moment
            spin.add(1, ordering: .relaxed)
        }
        slots[key].value.store(value, ordering: .relaxed)
    }
}

@Suite("Workload validation", .serialized)
struct ValidationTests {
    @Test("a strategy that writes wrong values is reported INVALID")
    func wrongValuesAreInvalid() {
        let sample = CacheContention.runWorkload(
            WrongValueCache.self,
            parameters: .init(keyCount: 16, readRatio: 0.5),
            threads: 1,
            seconds: 0.02
        )
        #expect(sample.badOperations > 0)
        #expect(sample.operations > 0)
        let study = runStudy(
            id: "t",
            family: "cache",
            title: "t",
            operation: "op",
            parameters: [:],
            threads: [1],
            cases: [
                BenchCase(name: WrongValueCache.name, id: WrongValueCache.id, kind: .peer) { threads, seconds in
                    CacheContention.runWorkload(
                        WrongValueCache.self,
                        parameters: .init(keyCount: 16, readRatio: 0.5),
                        threads: threads,
                        seconds: seconds
                    )
                }
            ],
            settings: RunSettings(seconds: 0.01, warmup: 0, repeats: 1),
            progress: Progress(enabled: false)
        )
        let cell = study.results[0]
        #expect(!cell.valid)
        #expect(cell.outcome.hasPrefix("INVALID"))
        #expect(cell.ratioToBestPeer == nil)
        #expect(study.summary.contains("no valid result"))
    }

    @Test("torn writes from a lock-free two-step write are caught by concurrent readers")
    func tornWritesAreCaught() {
        var bad = 0
        let deadline = Date().addingTimeInterval(5)
        while bad == 0 && Date() < deadline {
            bad +=
                CacheContention.runWorkload(
                    TornWriteCache.self,
                    parameters: .init(keyCount: 2, readRatio: 0.5),
                    threads: 2,
                    seconds: 0.05
                ).badOperations
        }
        #expect(bad > 0)
    }

    @Test("a correctly locked strategy validates clean under contention")
    func lockedStrategyIsValid() {
        let sample = CacheContention.runWorkload(
            NIOLockCache<IntCacheShape>.self,
            parameters: .init(keyCount: 8, readRatio: 0.5),
            threads: 2,
            seconds: 0.05
        )
        #expect(sample.operations > 0)
        #expect(sample.badOperations == 0)
        #expect(sample.fairness > 0 && sample.fairness <= 1)
    }

    @Test(
        "a correctly locked strategy validates clean with String keys and page values under contention",
        arguments: [false, true]
    )
    func stringShapeIsValid(rcu: Bool) {
        let parameters = CacheContention.Parameters(keyCount: 8, readRatio: 0.5, shape: .string)
        let sample =
            rcu
            ? CacheContention.runWorkload(
                RCUMapCache<StringCacheShape>.self,
                parameters: parameters,
                threads: 2,
                seconds: 0.05
            )
            : CacheContention.runWorkload(
                NIOLockCache<StringCacheShape>.self,
                parameters: parameters,
                threads: 2,
                seconds: 0.05
            )
        #expect(sample.operations > 0)
        #expect(sample.badOperations == 0)
    }

    @Test("String-shape keys are distinct URL paths of 20 to 60 bytes, stored out of line, fresh per call")
    func stringKeys() {
        let keys = StringCacheShape.makeKeys(1024)
        #expect(Set(keys).count == 1024)
        #expect(keys.allSatisfy { (20...60).contains($0.utf8.count) && $0.hasPrefix("/") })
        let again = StringCacheShape.makeKeys(1024)
        #expect(again == keys)
    }

    @Test(
        "every catalog entry passes validation single-threaded, in both shapes",
        arguments: CacheContention.catalog.filter {
            $0.isolation == .inProcess
        }.map(\.id),
        CacheShapeID.allCases
    )
    func catalogIsValid(id: String, shape: CacheShapeID) throws {
        let entry = try #require(CacheContention.catalog.first { $0.id == id })
        let sample = entry.runInProcess(.init(keyCount: 32, readRatio: 0.5, shape: shape), 1, 0.01)
        #expect(sample.operations > 0)
        #expect(sample.badOperations == 0)
    }
}
