// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import CThreading
import Glibc
import Synchronization
import Testing

/// A flat map for one test, destroyed (after a grace period) at the end of `body`.
private func withFlatMap(
    capacity: Int = 0,
    seed: UInt64 = 0x1234,
    _ body: (UnsafeMutablePointer<cthr_rcu_flat_t>) -> Void
) {
    var map: UnsafeMutablePointer<cthr_rcu_flat_t>?
    #expect(cthr_rcu_flat_create(capacity, seed, 0x9E37_79B9_7F4A_7C15, &map) == 0)
    guard let map else { return }
    body(map)
    #expect(cthr_rcu_flat_destroy(map) == 0)
}

/// The value stored for `key`, looked up in a read section of its own.
private func lookup(_ map: UnsafeMutablePointer<cthr_rcu_flat_t>, _ key: UInt64) -> UInt64? {
    cthr_rcu_read_lock()
    defer { cthr_rcu_read_unlock() }
    var value: UInt64 = 0
    return cthr_rcu_flat_get(map, key, &value) != 0 ? value : nil
}

/// Every key and value in the current array, and its slot count, read in one read section.
private func contents(_ map: UnsafeMutablePointer<cthr_rcu_flat_t>) -> (entries: [UInt64: UInt64], slots: UInt64) {
    cthr_rcu_read_lock()
    defer { cthr_rcu_read_unlock() }
    let array = cthr_rcu_flat_current(map)
    var entries: [UInt64: UInt64] = [:]
    var key: UInt64 = 0
    var value: UInt64 = 0
    for index in 0..<cthr_rcu_flat_capacity(array) where cthr_rcu_flat_slot_at(array, index, &key, &value) != 0 {
        #expect(entries.updateValue(value, forKey: key) == nil, "key \(key) in two slots")
    }
    return (entries, cthr_rcu_flat_capacity(array))
}

/// The current array's address (compared, never dereferenced, outside the read section).
private func currentArray(_ map: UnsafeMutablePointer<cthr_rcu_flat_t>) -> UInt {
    cthr_rcu_read_lock()
    defer { cthr_rcu_read_unlock() }
    return UInt(bitPattern: cthr_rcu_flat_current(map))
}

/// `cthr_rcu_barrier` on another thread, failing the test instead of hanging if it does not return in time.
private func barrierWithDeadline() {
    let result = Atomic<Int32>(-1)
    let thread = spawnVoid { result.store(cthr_rcu_barrier(), ordering: .sequentiallyConsistent) }
    #expect(thread?.joined() == true)
    #expect(result.load(ordering: .sequentiallyConsistent) == 0)
}

@Suite(.serialized) struct RCUFlatCTests {
    @Test func createRejectsBadArguments() {
        var map: UnsafeMutablePointer<cthr_rcu_flat_t>?
        #expect(cthr_rcu_flat_create(0, 1, 1, nil) == EINVAL)
        #expect(cthr_rcu_flat_create((1 << 29) + 1, 1, 1, &map) == EINVAL)
        #expect(cthr_rcu_flat_create(Int(bitPattern: UInt(Int.max) + 1), 1, 1, &map) == EINVAL)
        #expect(map == nil)
        #expect(cthr_rcu_flat_destroy(nil) == EINVAL)
    }

    @Test func nullArgumentsAreRefusedOrEmpty() {
        var value: UInt64 = 7
        var key: UInt64 = 7
        #expect(cthr_rcu_flat_get(nil, 1, &value) == 0)
        #expect(cthr_rcu_flat_current(nil) == nil)
        #expect(cthr_rcu_flat_capacity(nil) == 0)
        #expect(cthr_rcu_flat_slot_at(nil, 0, &key, &value) == 0)
        #expect(cthr_rcu_flat_count(nil) == 0)
        #expect(cthr_rcu_flat_lock(nil, 1) == EINVAL)
        #expect(cthr_rcu_flat_unlock(nil, 1) == EINVAL)
        #expect(cthr_rcu_flat_set(nil, 1, 1) == EINVAL)
        #expect(cthr_rcu_flat_remove(nil, 1, &value) == EINVAL)
        #expect(cthr_rcu_flat_set_locked(nil, 1, 1) == EINVAL)
        #expect(cthr_rcu_flat_remove_locked(nil, 1, &value) == EINVAL)
        #expect(value == 7 && key == 7)
        withFlatMap { map in
            #expect(cthr_rcu_flat_set(map, 1, 10) == 0)
            cthr_rcu_read_lock()
            #expect(cthr_rcu_flat_get(map, 1, nil) == 0)
            let array = cthr_rcu_flat_current(map)
            #expect(cthr_rcu_flat_slot_at(array, 0, nil, &value) == 0)
            #expect(cthr_rcu_flat_slot_at(array, cthr_rcu_flat_capacity(array), &key, &value) == 0)
            cthr_rcu_read_unlock()
        }
    }

    @Test func setGetRemoveAndCount() {
        withFlatMap { map in
            let keys: [UInt64] = [0, 1, 42, 1 << 63, .max, .max - 1]
            for key in keys { #expect(cthr_rcu_flat_set(map, key, key &* 3) == 0) }
            #expect(cthr_rcu_flat_count(map) == keys.count)
            for key in keys { #expect(lookup(map, key) == key &* 3) }
            #expect(lookup(map, 2) == nil)
            // A present key is rewritten in place: the count does not change.
            #expect(cthr_rcu_flat_set(map, 42, 7) == 0)
            #expect(lookup(map, 42) == 7)
            #expect(cthr_rcu_flat_count(map) == keys.count)
            var old: UInt64 = 0
            #expect(cthr_rcu_flat_remove(map, 42, &old) == 0)
            #expect(old == 7)
            #expect(cthr_rcu_flat_remove(map, 42, &old) == ENOENT)
            #expect(cthr_rcu_flat_remove(map, 42, nil) == ENOENT)
            #expect(lookup(map, 42) == nil)
            #expect(cthr_rcu_flat_count(map) == keys.count - 1)
            // Added again after removal: a fresh slot.
            #expect(cthr_rcu_flat_set(map, 42, 8) == 0)
            #expect(lookup(map, 42) == 8)
            let snapshot = contents(map)
            #expect(snapshot.entries == Dictionary(uniqueKeysWithValues: keys.map { ($0, $0 == 42 ? 8 : $0 &* 3) }))
        }
    }

    @Test func growsAndKeepsEveryKeyWithHalfTheSlotsFree() {
        withFlatMap { map in
            let initial = contents(map).slots
            #expect(initial == 16)
            for key in 0..<UInt64(10_000) {
                #expect(cthr_rcu_flat_set(map, key, key + 1) == 0)
            }
            let snapshot = contents(map)
            #expect(snapshot.entries.count == 10_000)
            #expect(snapshot.slots >= 20_000)
            #expect(cthr_rcu_flat_count(map) == 10_000)
            for key in 0..<UInt64(10_000) where lookup(map, key) != key + 1 {
                Issue.record("key \(key) lost")
            }
        }
    }

    @Test func initialCapacityIsTakenWithoutResizing() {
        withFlatMap(capacity: 1_000) { map in
            let before = currentArray(map)
            #expect(contents(map).slots == 2_048)
            for key in 0..<UInt64(1_000) { #expect(cthr_rcu_flat_set(map, key, key) == 0) }
            #expect(currentArray(map) == before)
        }
    }

    @Test func tombstonesAreDroppedWhenTheArrayIsRebuilt() {
        withFlatMap { map in
            // Each new key takes a fresh slot and leaves a tombstone when removed; rebuilds drop the tombstones,
            // so churning through many keys keeps the array at its small size.
            #expect(cthr_rcu_flat_set(map, 999_999, 1) == 0)
            for key in 0..<UInt64(5_000) {
                #expect(cthr_rcu_flat_set(map, key, key) == 0)
                #expect(cthr_rcu_flat_remove(map, key, nil) == 0)
            }
            let snapshot = contents(map)
            #expect(snapshot.entries == [999_999: 1])
            #expect(snapshot.slots == 16)
            #expect(cthr_rcu_flat_count(map) == 1)
        }
    }

    @Test func seedsChangeTheHashAndTheMultiplierIsOdd() {
        withFlatMap(seed: 1) { first in
            withFlatMap(seed: 2) { second in
                #expect(first.pointee.multiplier & 1 == 1)
                let differing = (0..<UInt64(64)).filter {
                    cthr_rcu_flat_hash(first, $0) != cthr_rcu_flat_hash(second, $0)
                }
                #expect(differing.count == 64)
            }
        }
        var map: UnsafeMutablePointer<cthr_rcu_flat_t>?
        #expect(cthr_rcu_flat_create(0, 0, 2, &map) == 0)
        #expect(map?.pointee.multiplier == 3)
        #expect(cthr_rcu_flat_destroy(map) == 0)
    }

    @Test func writerLocksAreStripedAndErrorChecked() {
        withFlatMap { map in
            func stripe(_ key: UInt64) -> UInt64 { (cthr_rcu_flat_hash(map, key) >> 40) & 63 }
            let sameStripe = (2..<UInt64(100_000)).first { stripe($0) == stripe(1) }!
            let otherStripe = (2..<UInt64(100_000)).first { stripe($0) != stripe(1) }!
            #expect(cthr_rcu_flat_unlock(map, 1) == EPERM)
            #expect(cthr_rcu_flat_set_locked(map, 1, 1) == EPERM)
            #expect(cthr_rcu_flat_remove_locked(map, 1, nil) == EPERM)
            #expect(cthr_rcu_flat_lock(map, 1) == 0)
            #expect(cthr_rcu_flat_lock(map, 1) == EDEADLK)
            #expect(cthr_rcu_flat_lock(map, sameStripe) == EDEADLK)
            #expect(cthr_rcu_flat_set(map, 1, 1) == EDEADLK)
            #expect(cthr_rcu_flat_set(map, sameStripe, 1) == EDEADLK)
            #expect(cthr_rcu_flat_remove(map, 1, nil) == EDEADLK)
            #expect(lookup(map, 1) == nil)
            #expect(cthr_rcu_flat_set_locked(map, 1, 5) == 0)
            #expect(cthr_rcu_flat_set_locked(map, sameStripe, 6) == 0)
            #expect(cthr_rcu_flat_set_locked(map, otherStripe, 7) == EPERM)
            #expect(lookup(map, 1) == 5)
            var old: UInt64 = 0
            #expect(cthr_rcu_flat_remove_locked(map, 1, &old) == 0)
            #expect(old == 5)
            #expect(cthr_rcu_flat_remove_locked(map, 1, &old) == ENOENT)
            // Another thread writes a key on another stripe at once; a key on the held stripe waits for the unlock.
            let address = UInt(bitPattern: map)
            let wroteOther = Event()
            let wroteSame = Event()
            let writer = spawnVoid {
                let map = UnsafeMutablePointer<cthr_rcu_flat_t>(bitPattern: address)
                _ = cthr_rcu_flat_set(map, otherStripe, 70)
                wroteOther.signal()
                _ = cthr_rcu_flat_set(map, 1, 20)
                wroteSame.signal()
            }
            #expect(wroteOther.wait())
            #expect(lookup(map, otherStripe) == 70)
            #expect(!wroteSame.wait(timeoutNs: 50_000_000))
            #expect(cthr_rcu_flat_unlock(map, 1) == 0)
            #expect(wroteSame.wait())
            #expect(writer?.joined() == true)
            #expect(lookup(map, 1) == 20)
            #expect(lookup(map, sameStripe) == 6)
            #expect(cthr_rcu_flat_unlock(map, 1) == EPERM)
            #expect(cthr_rcu_flat_count(map) == 3)
        }
    }

    /// Writers adding, rewriting and removing distinct keys at once (racing for the same EMPTY slots, and rebuilding
    /// from 16 slots up while the others write) lose nothing, and readers meanwhile see only values written for the
    /// key they asked for.
    @Test func concurrentWritersOfDistinctKeysLoseNothing() {
        withFlatMap { map in
            let address = UInt(bitPattern: map)
            let writers = 3
            let keysPerWriter = UInt64(3_000)
            let gate = StartGate()
            let wrong = Atomic<Int>(0)
            let writersLeft = Atomic<Int>(writers)
            let writerThreads = (0..<writers).map { writer in
                spawnVoid {
                    let map = UnsafeMutablePointer<cthr_rcu_flat_t>(bitPattern: address)!
                    _ = gate.arriveAndWait()
                    let base = UInt64(writer) << 32
                    for index in 0..<keysPerWriter {
                        let key = base + index
                        if cthr_rcu_flat_set(map, key, key &* 3) != 0 { wrong.add(1, ordering: .relaxed) }
                        // Every third key is removed again and every fifth rewritten, behind the newest keys.
                        if index >= 8 && index % 3 == 0 && cthr_rcu_flat_remove(map, key - 8, nil) != 0 {
                            wrong.add(1, ordering: .relaxed)
                        }
                        if index >= 4 && index % 5 == 0 { _ = cthr_rcu_flat_set(map, key - 4, (key - 4) &* 3) }
                    }
                    writersLeft.subtract(1, ordering: .sequentiallyConsistent)
                }
            }
            let reader = spawnVoid {
                let map = UnsafeMutablePointer<cthr_rcu_flat_t>(bitPattern: address)!
                _ = gate.arriveAndWait()
                var index = UInt64(0)
                while writersLeft.load(ordering: .sequentiallyConsistent) > 0 {
                    index = (index &+ 7_919) % keysPerWriter
                    let key = (UInt64(index % UInt64(writers)) << 32) + index
                    cthr_rcu_read_lock()
                    var value: UInt64 = 0
                    if cthr_rcu_flat_get(map, key, &value) != 0 && value != key &* 3 {
                        wrong.add(1, ordering: .relaxed)
                    }
                    cthr_rcu_read_unlock()
                }
            }
            #expect(gate.release(writers + 1))
            for thread in writerThreads { #expect(thread?.joined(timeoutNs: 60_000_000_000) == true) }
            #expect(reader?.joined() == true)
            #expect(wrong.load(ordering: .relaxed) == 0)
            var expected: [UInt64: UInt64] = [:]
            for writer in 0..<UInt64(writers) {
                for index in 0..<keysPerWriter {
                    let removed = index + 8 < keysPerWriter && (index + 8) % 3 == 0 && index + 8 >= 8
                    if !removed { expected[(writer << 32) + index] = ((writer << 32) + index) &* 3 }
                }
            }
            #expect(contents(map).entries == expected)
            #expect(cthr_rcu_flat_count(map) == expected.count)
            barrierWithDeadline()
        }
    }

    /// A reader holding an array that a rebuild retired can read all of it until it leaves its read section.
    @Test func retiredArrayStaysReadableUntilTheReaderLeaves() {
        withFlatMap { map in
            for key in 0..<UInt64(8) { #expect(cthr_rcu_flat_set(map, key, key * 10) == 0) }
            let address = UInt(bitPattern: map)
            let holding = Event()
            let rebuilt = Event()
            let badSlots = Atomic<Int>(-1)
            let held = Atomic<UInt>(0)
            let reader = spawnVoid {
                let map = UnsafeMutablePointer<cthr_rcu_flat_t>(bitPattern: address)
                cthr_rcu_read_lock()
                let array = cthr_rcu_flat_current(map)
                held.store(UInt(bitPattern: array), ordering: .sequentiallyConsistent)
                holding.signal()
                _ = rebuilt.wait()
                var bad = 0
                var found = 0
                var key: UInt64 = 0
                var value: UInt64 = 0
                for index in 0..<cthr_rcu_flat_capacity(array)
                where cthr_rcu_flat_slot_at(array, index, &key, &value) != 0 {
                    found += 1
                    if key >= 8 || value != key * 10 { bad += 1 }
                }
                cthr_rcu_read_unlock()
                badSlots.store(found == 8 ? bad : -found, ordering: .sequentiallyConsistent)
            }
            #expect(holding.wait())
            // Growing past half of the 16 slots moves every key to a new array and retires the one the reader holds.
            for key in 8..<UInt64(64) { #expect(cthr_rcu_flat_set(map, key, key * 10) == 0) }
            #expect(currentArray(map) != held.load(ordering: .sequentiallyConsistent))
            rebuilt.signal()
            #expect(reader?.joined() == true)
            #expect(badSlots.load(ordering: .sequentiallyConsistent) == 0)
            barrierWithDeadline()
        }
    }

    /// Readers racing a writer that rewrites values, adds and removes keys and so rebuilds the array many times see
    /// every stable key, each with a value written for it, and churning keys only with their own values.
    @Test func readersSeeOnlyWrittenValuesWhileTheArrayIsRebuilt() {
        withFlatMap { map in
            let stable = UInt64(64)
            for key in 0..<stable { #expect(cthr_rcu_flat_set(map, key, key) == 0) }
            let address = UInt(bitPattern: map)
            let first = currentArray(map)
            let done = Atomic<Bool>(false)
            let wrong = Atomic<Int>(0)
            let gate = StartGate()
            let readers = (0..<2).map { seed in
                spawnVoid {
                    let map = UnsafeMutablePointer<cthr_rcu_flat_t>(bitPattern: address)!
                    _ = gate.arriveAndWait()
                    var key = UInt64(seed)
                    while !done.load(ordering: .relaxed) {
                        key = (key &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407)
                        let probe = key >> 58  // 0..<64: a stable key
                        let churn = 1_000 + (key >> 40) % 512
                        cthr_rcu_read_lock()
                        var value: UInt64 = 0
                        if cthr_rcu_flat_get(map, probe, &value) == 0 || value % 1_000 != probe {
                            wrong.add(1, ordering: .relaxed)
                        }
                        if cthr_rcu_flat_get(map, churn, &value) != 0 && value != churn * 7 {
                            wrong.add(1, ordering: .relaxed)
                        }
                        cthr_rcu_read_unlock()
                    }
                }
            }
            let writer = spawnVoid {
                let map = UnsafeMutablePointer<cthr_rcu_flat_t>(bitPattern: address)!
                _ = gate.arriveAndWait()
                for round in 1...UInt64(40) {
                    for key in 0..<stable { _ = cthr_rcu_flat_set(map, key, key + 1_000 * round) }
                    for churn in 1_000..<UInt64(1_512) where churn % 40 == round % 40 || churn % 3 == round % 3 {
                        if cthr_rcu_flat_remove(map, churn, nil) == ENOENT {
                            _ = cthr_rcu_flat_set(map, churn, churn * 7)
                        }
                    }
                }
                done.store(true, ordering: .relaxed)
            }
            #expect(gate.release(3))
            #expect(writer?.joined(timeoutNs: 60_000_000_000) == true)
            for reader in readers { #expect(reader?.joined() == true) }
            #expect(wrong.load(ordering: .relaxed) == 0)
            #expect(currentArray(map) != first)
            for key in 0..<stable { #expect(lookup(map, key) == key + 40_000) }
            barrierWithDeadline()
        }
    }
}
