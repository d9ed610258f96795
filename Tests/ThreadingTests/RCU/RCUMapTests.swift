// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import Foundation
import Testing

@testable import Threading

/// A key whose every instance hashes alike, so the map must tell keys apart by `==`.
struct RCUCollidingKey: Hashable, Sendable {
    let id: Int
    func hash(into hasher: inout Hasher) { hasher.combine(7) }
    static func == (lhs: Self, rhs: Self) -> Bool { lhs.id == rhs.id }
}

/// A class value carrying the number a test checks (a cached page).
final class RCUMapPage: Sendable {
    let token: Int
    init(_ token: Int) { self.token = token }
}

@Suite(.serialized) struct RCUMapTests {
    /// The basic operations, on the chained table (`String` keys) and the flat table (`Int` keys).
    @Test func getSetRemoveCount() {
        checkGetSetRemoveCount { "k\($0)" }
        checkGetSetRemoveCount { $0 }
    }

    private func checkGetSetRemoveCount<K: Hashable & Sendable>(_ key: (Int) -> K) {
        let map = RCUMap<K, Int>()
        #expect(map.isEmpty)
        #expect(map.get(key(1)) == nil)
        map.set(1, forKey: key(1))
        map.set(2, forKey: key(2))
        #expect(map.get(key(1)) == 1)
        #expect(map[key(2)] == 2)
        #expect(map.contains(key(1)))
        #expect(!map.contains(key(26)))
        #expect(map.count == 2)
        map.set(10, forKey: key(1))
        #expect(map.get(key(1)) == 10)
        #expect(map.count == 2)
        #expect(map.remove(key(1)) == 10)
        #expect(map.remove(key(1)) == nil)
        #expect(map.count == 1)
        map[key(3)] = 3
        map[key(2)] = nil
        #expect(map.get(key(2)) == nil)
        #expect(map.count == 1)
        #expect(map.withValue(forKey: key(3)) { $0 * 100 } == 300)
        #expect(map.withValue(forKey: key(52)) { $0 * 100 } == nil)
    }

    @Test func updateCreatesModifiesAndRemoves() {
        checkUpdateCreatesModifiesAndRemoves { "k\($0)" }
        checkUpdateCreatesModifiesAndRemoves { $0 }
    }

    private func checkUpdateCreatesModifiesAndRemoves<K: Hashable & Sendable>(_ key: (Int) -> K) {
        let map = RCUMap<K, Int>()
        var sawOld: Int? = -1
        let created = map.update(key(14)) { old in
            sawOld = old
            return 1
        }
        #expect(created == 1)
        #expect(sawOld == nil)
        #expect(map.update(key(14)) { ($0 ?? 0) + 1 } == 2)
        #expect(map.get(key(14)) == 2)
        #expect(map.update(key(14)) { _ in nil } == nil)
        #expect(map.get(key(14)) == nil)
        #expect(map.count == 0)
        #expect(map.update(key(0)) { _ in nil } == nil)
        #expect(map.count == 0)
    }

    /// Integer keys with plain values get the flat table; every other map the chained one.
    @Test func flatTableIsChosenForIntegerKeysWithPlainValues() {
        #expect(RCUMap<Int, Int>.usesFlatTable)
        #expect(RCUMap<UInt8, Bool>.usesFlatTable)
        #expect(RCUMap<Int32, Double>.usesFlatTable)
        #expect(RCUMap<UInt64, Float>.usesFlatTable)
        #expect(!RCUMap<String, Int>.usesFlatTable)
        #expect(!RCUMap<Int, String>.usesFlatTable)
        #expect(!RCUMap<Int, Int?>.usesFlatTable)
        #expect(!RCUMap<Double, Int>.usesFlatTable)
        #expect(!RCUMap<RCUCollidingKey, Int>.usesFlatTable)
        let flat = RCUMap<Int, Int>()
        #expect(flat.flat != nil && flat.chained == nil)
        let chained = RCUMap<Int, String>()
        #expect(chained.flat == nil && chained.chained != nil)
    }

    /// A flat-table map through growth, removals (tombstones), rebuilds and re-insertions.
    @Test func flatTableGrowsRemovesAndIterates() {
        let map = RCUMap<Int, Int>()
        for key in 0..<5_000 { map.set(-key, forKey: key) }
        for key in stride(from: 1, to: 5_000, by: 2) { #expect(map.remove(key) == -key) }
        #expect(map.count == 2_500)
        let expected = Dictionary(
            uniqueKeysWithValues: stride(from: 0, to: 5_000, by: 2).map { (key: Int) in (key, -key) }
        )
        #expect(map.snapshot() == expected)
        for key in stride(from: 1, to: 5_000, by: 2) { map.update(key) { old in (old ?? 0) + key } }
        #expect((0..<5_000).allSatisfy { map.get($0) == ($0 % 2 == 0 ? -$0 : $0) })
        map.removeAll()
        #expect(map.isEmpty)
        #expect(map.snapshot().isEmpty)
        map.set(7, forKey: 7)
        #expect(map.get(7) == 7)
        #expect(Array(map).count == 1)
    }

    @Test func throwingUpdateChangesNothing() {
        struct Refused: Error {}
        let map = RCUMap<Int, String>()
        map.set("kept", forKey: 1)
        #expect(throws: Refused.self) {
            try map.update(1) { _ in throw Refused() }
        }
        #expect(map.get(1) == "kept")
        #expect(map.update(1) { ($0 ?? "") + "!" } == "kept!")
    }

    @Test func snapshotAndIteration() {
        let map = RCUMap<Int, String>(minimumCapacity: 8)
        var expected: [Int: String] = [:]
        for key in 0..<300 {
            map.set("v\(key)", forKey: key)
            expected[key] = "v\(key)"
        }
        #expect(map.snapshot() == expected)
        var iterated: [Int: String] = [:]
        for (key, value) in map {
            #expect(iterated[key] == nil, "key \(key) iterated twice")
            iterated[key] = value
        }
        #expect(iterated == expected)
        #expect(Array(map).count == 300)
        map.removeAll()
        #expect(map.isEmpty)
        #expect(map.snapshot().isEmpty)
    }

    /// Integer keys take the seeded-multiply hash instead of `hashValue`; extremes, signs and widths must still be told
    /// apart and round-trip.
    @Test func integerKeysOfEveryWidthRoundTrip() {
        func check<K: FixedWidthInteger & Sendable>(_: K.Type) {
            let keys: [K] = [.min, .max, 0, 1, K(truncatingIfNeeded: -1), K(truncatingIfNeeded: 0x5555_5555), 64, 128]
            let unique = Array(Set(keys))
            let map = RCUMap<K, Int>()
            for (index, key) in unique.enumerated() { map.set(index, forKey: key) }
            #expect(map.count == unique.count)
            for (index, key) in unique.enumerated() {
                #expect(map.get(key) == index)
                #expect(map.contains(key))
            }
            #expect(map.snapshot() == Dictionary(uniqueKeysWithValues: unique.enumerated().map { ($1, $0) }))
            for key in unique { #expect(map.remove(key) != nil) }
            #expect(map.isEmpty)
        }
        check(Int.self)
        check(UInt.self)
        check(Int64.self)
        check(UInt64.self)
        check(Int32.self)
        check(UInt32.self)
        check(Int16.self)
        check(UInt8.self)
    }

    /// Values of 1, 2, 4 or 8 bytes that hold no references are rewritten in place; everything else gets a new entry.
    @Test func onlySmallTrivialValuesAreRewrittenInPlace() {
        struct TwoHalves { var low: Int32, high: Int32 }  // 8 bytes, but aligned to 4
        struct Wrapped { var value: UInt32 }
        #expect(RCUMap<Int, Int>.valuesInPlace)
        #expect(RCUMap<String, UInt8>.valuesInPlace)
        #expect(RCUMap<Int, Int16>.valuesInPlace)
        #expect(RCUMap<Int, Float>.valuesInPlace)
        #expect(RCUMap<Int, Double>.valuesInPlace)
        #expect(RCUMap<Int, Bool>.valuesInPlace)
        #expect(RCUMap<Int, Wrapped>.valuesInPlace)
        #expect(!RCUMap<Int, Int?>.valuesInPlace)
        #expect(!RCUMap<Int, TwoHalves>.valuesInPlace)
        #expect(!RCUMap<Int, String>.valuesInPlace)
        #expect(!RCUMap<Int, RCUTracked>.valuesInPlace)
        #expect(!RCUMap<Int, (Int, Int)>.valuesInPlace)
    }

    /// In-place values of every width keep every bit (signs, extremes, infinities) through set, update,
    /// remove, borrow and snapshot, next to keys of another width: in the flat table (`Int8` keys) and in the
    /// chained one (`String` keys).
    @Test func inPlaceValuesOfEveryWidthRoundTrip() {
        func check<V: Equatable & Sendable>(_ values: [V]) {
            check(values) { Int8($0) }
            check(values) { "key \($0)" }
        }
        func check<K: Hashable & Sendable, V: Equatable & Sendable>(_ values: [V], _ key: (Int) -> K) {
            #expect(RCUMap<K, V>.valuesInPlace)
            let map = RCUMap<K, V>()
            for (index, value) in values.enumerated() { map.set(value, forKey: key(index)) }
            for (index, value) in values.enumerated() {
                #expect(map.get(key(index)) == value)
                #expect(map.withValue(forKey: key(index)) { $0 == value } == true)
            }
            // Rewrite every key in place with the value of its neighbour, half by set, half by update.
            for index in values.indices {
                let next = values[(index + 1) % values.count]
                if index % 2 == 0 {
                    map.set(next, forKey: key(index))
                } else {
                    #expect(map.update(key(index)) { _ in next } == next)
                }
            }
            let expected = Dictionary(
                uniqueKeysWithValues: values.indices.map { (key($0), values[($0 + 1) % values.count]) }
            )
            #expect(map.snapshot() == expected)
            #expect(map.remove(key(0)) == values[1 % values.count])
            #expect(map.get(key(0)) == nil)
            map.set(values[0], forKey: key(0))  // a key added again after removal gets a new entry
            #expect(map.get(key(0)) == values[0])
            #expect(map.count == values.count)
        }
        check([UInt8.min, .max, 0x5A, 1])
        check([Int16.min, .max, -1, 0x1234])
        check([Int32.min, .max, -1, 0x1234_5678])
        check([Int.min, .max, -1, 0x1234_5678_9ABC_DEF0])
        check([Float(-0.5), .infinity, .leastNonzeroMagnitude, 3.25])
        check([Double(-0.5), -.infinity, .greatestFiniteMagnitude, 1e-300])
        check([true, false, true])
    }

    /// Two maps draw different hash seeds, and a map of many integer keys still finds every one.
    @Test func integerKeyHashIsSeededPerMapAndFindsEveryKey() {
        let first = RCUMap<Int, Int>()
        let second = RCUMap<Int, Int>()
        #expect((first.hashSeed, first.hashMultiplier) != (second.hashSeed, second.hashMultiplier))
        #expect(first.hashMultiplier & 1 == 1)
        for key in -2_000..<2_000 { first.set(key &* 31, forKey: key) }
        #expect(first.count == 4_000)
        #expect((-2_000..<2_000).allSatisfy { first.get($0) == $0 &* 31 })
        #expect(first.get(2_000) == nil)
    }

    @Test func collidingHashesAreToldApartByKey() {
        let map = RCUMap<RCUCollidingKey, Int>()
        for id in 0..<20 {
            map.set(id * 10, forKey: RCUCollidingKey(id: id))
        }
        #expect(map.count == 20)
        for id in 0..<20 {
            #expect(map.get(RCUCollidingKey(id: id)) == id * 10)
        }
        map.set(-5, forKey: RCUCollidingKey(id: 5))
        #expect(map.remove(RCUCollidingKey(id: 6)) == 60)
        #expect(map.update(RCUCollidingKey(id: 7)) { ($0 ?? 0) + 1 } == 71)
        #expect(map.get(RCUCollidingKey(id: 5)) == -5)
        #expect(map.get(RCUCollidingKey(id: 6)) == nil)
        #expect(map.get(RCUCollidingKey(id: 7)) == 71)
        #expect(map.get(RCUCollidingKey(id: 8)) == 80)
        #expect(map.count == 19)
        #expect(map.snapshot().count == 19)
    }

    /// `String` keys are hashed from their UTF-8 bytes; strings that are equal with other bytes (canonically
    /// equivalent) must still find each other, whichever form was stored.
    @Test(arguments: [
        ("\u{E9}t\u{E9}", "e\u{301}te\u{301}"),  // é precomposed, and e + combining acute
        ("K", "\u{212A}"),  // KELVIN SIGN is canonically K
        ("a;b", "a\u{37E}b"),  // GREEK QUESTION MARK is canonically ;
        ("`x`", "\u{1FEF}x\u{1FEF}"),  // GREEK VARIA is canonically `
        ("/static/" + String(repeating: "K", count: 70), "/static/" + String(repeating: "\u{212A}", count: 70)),
        ("\u{1100}\u{1161}", "\u{AC00}"),  // Hangul jamo and the precomposed syllable
    ])
    func canonicallyEquivalentStringKeysAreOneKey(stored: String, lookedUp: String) {
        #expect(stored == lookedUp)
        for (first, second) in [(stored, lookedUp), (lookedUp, stored)] {
            let map = RCUMap<String, Int>()
            #expect(map.hash(first) == map.hash(second))
            map.set(1, forKey: first)
            #expect(map.get(second) == 1)
            map.set(2, forKey: second)
            #expect(map.count == 1)
            #expect(map.get(first) == 2)
            #expect(map.remove(second) == 2)
            #expect(map.isEmpty)
        }
    }

    /// Keys of every length from 0 to 200 bytes (each of wyhash's paths), ASCII and not, differing in one byte
    /// anywhere, all stay apart and are found again.
    @Test func stringKeysOfEveryLengthAndByteAreToldApart() {
        let map = RCUMap<String, Int>()
        var keys: [String] = []
        for length in 0...200 {
            let base = String(repeating: "a", count: length)
            keys.append(base)
            if length > 0 {
                for position in Set([0, length / 2, length - 1]) {
                    var bytes = Array(base.utf8)
                    bytes[position] = UInt8(ascii: "b")
                    keys.append(String(decoding: bytes, as: UTF8.self) + "#\(length)")
                }
                keys.append(base + "\u{E9}")
                keys.append("\u{1F600}" + base)
            }
        }
        #expect(Set(keys).count == keys.count)
        for (index, key) in keys.enumerated() { map.set(index, forKey: key) }
        #expect(map.count == keys.count)
        for (index, key) in keys.enumerated() {
            // A fresh copy of the key (other storage), so the lookup compares bytes, not the stored object.
            #expect(map.get(String(decoding: Array(key.utf8), as: UTF8.self)) == index, "\(key.utf8.count) bytes")
        }
        #expect(map.get("b") == nil)
        #expect(map.get(String(repeating: "a", count: 201)) == nil)
    }

    /// The table compares a `String` key's bytes as stored at insertion, whatever the representation of the stored
    /// and the looked-up string: literals (immortal), small strings (inline, 15 bytes at most), heap strings,
    /// strings bridged from Foundation, made from a `Substring` or transcoded from UTF-16, non-ASCII, and equal ones
    /// spelled with other bytes (precomposed or decomposed `é`). Each spelling finds, replaces, updates and removes
    /// the one entry.
    @Test(arguments: [
        "/static/css/site.css",  // large ASCII, 20 bytes
        "/a/b",  // small ASCII
        "/images/thumbs/caf\u{E9}-\u{1F600}-photo.png",  // large, not ASCII
        "caf\u{E9}",  // small, not ASCII
        "",
    ])
    func stringKeysOfEveryRepresentationAreOneKey(text: String) {
        let decomposed = text.replacingOccurrences(of: "\u{E9}", with: "e\u{301}")
        let spellings: [String] = [
            text,
            String(decoding: Array(text.utf8), as: UTF8.self),
            NSString(string: text) as String,
            String(("xy" + text).dropFirst(2)),
            String(decoding: Array(text.utf16), as: UTF16.self),
            decomposed,
        ]
        for stored in spellings {
            let map = RCUMap<String, RCUMapPage>()
            map.set(RCUMapPage(1), forKey: "other\(text)")
            map.set(RCUMapPage(0), forKey: stored)
            for (index, lookedUp) in spellings.enumerated() {
                #expect(lookedUp == stored)
                #expect(map.withValue(forKey: lookedUp) { $0.token } == index)
                map.set(RCUMapPage(index + 2), forKey: lookedUp)
                #expect(map.update(lookedUp) { RCUMapPage(($0?.token ?? -100) - 1) }?.token == index + 1)
            }
            #expect(map.count == 2)
            #expect(map.remove(spellings.last!)?.token == spellings.count)
            #expect(map.get(stored) == nil)
            #expect(map.get("other\(text)")?.token == 1)
            #expect(map.count == 1)
        }
    }

    /// The `String` hash is seeded per map, depends on every byte, and sends ASCII and non-ASCII keys alike through
    /// the map's own table (no hash value is shared by the keys of a small set).
    @Test func stringHashIsSeededPerMap() {
        let first = RCUMap<String, Int>()
        let second = RCUMap<String, Int>()
        let key = "/api/v2/users/42/profile"
        #expect(first.hash(key) != second.hash(key))
        #expect(first.hash(key) == first.hash(String(decoding: Array(key.utf8), as: UTF8.self)))
        let hashes = (0..<10_000).map { first.hash(Self.path($0)) }
        #expect(Set(hashes).count == hashes.count)
        #expect(first.hash("") != first.hash("\u{0}"))
    }

    @Test func replacedAndRemovedEntriesAreReleasedAfterGracePeriod() {
        let live = TestCounter()
        var map: RCUMap<Int, RCUTracked>? = RCUMap()
        for generation in 0..<100 {
            map!.set(RCUTracked(generation, live: live), forKey: generation % 10)
        }
        map!.remove(3)
        map!.update(4) { _ in nil }
        RCU.barrier()
        #expect(live.value == 8)
        #expect(map!.count == 8)
        #expect(map!.get(9)?.generation == 99)
        map = nil
        RCU.barrier()
        #expect(live.value == 0)
    }

    /// A map whose last reference goes away in a deferred release (an old value of an RCUValue) is destroyed on the
    /// call_rcu thread and still releases every entry.
    @Test func mapDroppedInsideDeferredReleaseReleasesEntries() {
        let live = TestCounter()
        let holder = RCUValue(RCUMap<Int, RCUTracked>())
        holder.read { map in
            for key in 0..<10 { map.set(RCUTracked(key, live: live), forKey: key) }
        }
        holder.store(RCUMap<Int, RCUTracked>())  // the first map's last reference is now the deferred release
        RCU.barrier()  // runs the release: the map is destroyed there, scheduling its entries and table
        RCU.barrier()  // runs what the destruction scheduled
        #expect(live.value == 0)
    }

    /// Concurrent readers and writers: readers only ever see a value written for the key they asked for, and no
    /// update made under distinct keys is lost. `Int` values are rewritten in place; `[Int]` values (one element) get a
    /// new entry per write, reclaimed after a grace period.
    @Test func concurrentReadersAndWritersOnDistinctKeys() {
        concurrentReadersAndWriters(key: { $0 }, encode: { $0 }, decode: { $0 })
        concurrentReadersAndWriters(key: { $0 }, encode: { [$0] }, decode: { $0.count == 1 ? $0[0] : -1 })
    }

    /// The same race with `String` keys (URL paths, long paths, non-ASCII paths) and class values, borrowed by the
    /// readers inside the read section (``RCUMap/withValue(forKey:_:)``) while writers replace them.
    @Test func concurrentReadersAndWritersWithStringKeysAndClassValues() {
        concurrentReadersAndWriters(
            key: { Self.path($0) },
            encode: { RCUMapPage($0) },
            decode: { $0.token },
            borrow: true
        )
    }

    /// A key of every kind the `String` hash treats apart: short (stored inline), URL-like (20-60 bytes), long
    /// (past wyhash's 48-byte loop) and non-ASCII.
    static func path(_ index: Int) -> String {
        switch index % 4 {
        case 0: "/p\(index)"
        case 1: "/api/v2/users/\(index)/profile"
        case 2: "/static/" + String(repeating: "segment/", count: 12) + "\(index).css"
        default: "/café/日本/\(index)/ü"
        }
    }

    private func concurrentReadersAndWriters<Key: Hashable & Sendable, Value: Sendable>(
        key makeKey: @escaping @Sendable (Int) -> Key,
        encode: @escaping @Sendable (Int) -> Value,
        decode: @escaping @Sendable (Value) -> Int,
        borrow: Bool = false
    ) {
        #if THREADING_LONG_TESTS
        let rounds = 200
        #else
        let rounds = 5
        #endif
        let keysPerWriter = 200
        let writers = 2
        let map = RCUMap<Key, Value>()
        let line = RCUTestSupport.StartLine()
        let writersDone = TestCounter()
        let wrongValues = TestCounter()
        let hits = TestCounter()

        let readerThreads = (0..<2).map { seed in
            RCUTestSupport.start {
                line.arriveAndWait()
                var generator = SystemRandomNumberGenerator()
                var found = 0
                _ = seed
                while writersDone.value < writers {
                    let key = Int.random(in: 0..<(writers * keysPerWriter), using: &generator)
                    let read = borrow ? map.withValue(forKey: makeKey(key), decode) : map.get(makeKey(key)).map(decode)
                    if let value = read {
                        // Values encode their key: key * 1_000 + round.
                        if value / 1_000 != key { wrongValues.add() }
                        found += 1
                    }
                }
                hits.add(found)
            }
        }
        let writerThreads = (0..<writers).map { writer in
            RCUTestSupport.start {
                line.arriveAndWait()
                for round in 1...rounds {
                    for index in 0..<keysPerWriter {
                        let key = writer * keysPerWriter + index
                        if round % 2 == 0 {
                            map.update(makeKey(key)) { _ in encode(key * 1_000 + round) }
                        } else {
                            map.set(encode(key * 1_000 + round), forKey: makeKey(key))
                        }
                    }
                }
                writersDone.add()
            }
        }
        line.go(expecting: readerThreads.count + writerThreads.count)
        writerThreads.forEach { RCUTestSupport.join($0) }
        readerThreads.forEach { RCUTestSupport.join($0) }

        #expect(wrongValues.value == 0)
        #expect(map.count == writers * keysPerWriter)
        for key in 0..<(writers * keysPerWriter) {
            #expect(map.get(makeKey(key)).map(decode) == key * 1_000 + rounds, "key \(key)")
        }
    }

    @Test func updateIsAtomicPerKey() {
        checkUpdateIsAtomicPerKey { "k\($0)" }
        checkUpdateIsAtomicPerKey { $0 }
    }

    private func checkUpdateIsAtomicPerKey<K: Hashable & Sendable>(_ key: @escaping @Sendable (Int) -> K) {
        let map = RCUMap<K, Int>()
        let line = RCUTestSupport.StartLine()
        let threads = (0..<2).map { index in
            RCUTestSupport.start {
                line.arriveAndWait()
                for step in 0..<500 {
                    map.update(key(-1)) { ($0 ?? 0) + 1 }
                    map.set(step, forKey: key(index))
                }
            }
        }
        line.go(expecting: threads.count)
        threads.forEach { RCUTestSupport.join($0) }
        #expect(map.get(key(-1)) == 1_000)
        #expect(map.get(key(0)) == 499)
        #expect(map.get(key(1)) == 499)
        #expect(map.count == 3)
    }
}
