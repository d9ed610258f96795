// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import CThreading

/// A concurrent hash map for read-mostly data (a cache): lookups take no lock, writers change one key at a time.
///
/// Built on liburcu-cds's lock-free RCU hash table (`rculfhash`, auto-resizing). A lookup enters an RCU read
/// section, walks the bucket for the key's hash and compares keys in place: no lock, no atomic read-modify-write and
/// no reference-count traffic on shared objects (``withValue(forKey:_:)`` borrows the value; ``get(_:)`` returns a
/// copy). A write publishes a new immutable entry for one key (the map is never copied); the entry it replaced or
/// removed is released after a grace period, never while a reader can still see it. Values of 1, 2, 4 or 8 bytes
/// that hold no references (`Int`, `Double`, `Bool`...) are the exception: a write to a key already present rewrites
/// the value in place with one atomic store (no allocation, no grace period); readers see the old or the new value.
///
/// **Integer keys with such values** (`RCUMap<Int, Int>`, `RCUMap<UInt32, Double>`...; any fixed-width integer
/// key) use a flat table instead (`cthr_rcu_flat`): open addressing over two arrays, control bytes and key-value
/// slots, so a lookup reads one byte and one slot instead of following the hash chain's pointers, inlined into the
/// caller. New keys fill fresh slots and removed keys leave tombstones; when half of the slots are used a writer
/// copies the live keys into a new array, published like any RCU pointer, the old array freed after a grace period.
/// ``usesFlatTable`` tells which table a map uses; the API and its guarantees are the same.
///
/// **`String` keys** are hashed from their UTF-8 bytes in place (wyhash with a random per-map seed; canonically
/// equal strings hash alike); each entry keeps a copy of its key's bytes in its node, where a lookup compares them,
/// so it never retains a stored key, and `==` is only needed for a canonically equivalent key spelled with other
/// bytes (`"é"` as one scalar or two). Read a class value with ``withValue(forKey:_:)``,
/// which borrows it, rather than ``get(_:)``, which retains it (an atomic increment and decrement on an object every
/// reader shares). For when a lock is the better choice, see "Cost and when to use it" in <doc:RCURules>.
///
/// ```swift
/// let cache = RCUMap<String, Int>()
/// cache.set(1, forKey: "a")
/// let a = cache.get("a")                               // 1, lock-free
/// cache.update("hits") { old in (old ?? 0) + 1 }      // atomic per key
/// print(a ?? 0)
/// ```
///
/// **Writers.** Every write (``set(_:forKey:)``, ``remove(_:)``, ``update(_:_:)``) takes the writer lock of the
/// key's stripe (64 error-checking mutexes chosen by hash), so writes to one key are serialised and
/// ``update(_:_:)`` is atomic per key (its transform sees the latest value and runs exactly once), while writes to
/// keys on different stripes proceed in parallel. Readers never take these locks.
///
/// **Iteration** (`for (key, value) in map`, ``snapshot()``) copies the entries in one read section; see
/// ``snapshot()`` for exactly what it guarantees.
///
/// `RCUMap` is a reference type. It is `Sendable` because the table is only reached through RCU (readers) and the
/// stripe locks plus liburcu's atomic operations (writers); `Key` and `Value` are `Sendable` because entries are
/// shared by every thread that reads them. Rules for read sections: <doc:RCURules>.
public final class RCUMap<Key: Hashable & Sendable, Value: Sendable>: @unchecked Sendable {
    @usableFromInline
    typealias Slot = RCUMapSlot<Key, Value>

    /// The `cthr_rcu_map_t` (each table node stores one ``RCUMapSlot`` inline), or nil for a flat-table map.
    @usableFromInline
    let chained: OpaquePointer?

    /// The `cthr_rcu_flat_t` of a flat-table map (``usesFlatTable``), else nil.
    @usableFromInline
    let flat: UnsafeMutablePointer<cthr_rcu_flat_t>?

    /// The `cthr_rcu_map_t` of a map that does not use the flat table.
    @inlinable
    var table: OpaquePointer { chained.unsafelyUnwrapped }

    /// The largest `minimumCapacity` the constructor pre-sizes for: 65,536 entries.
    ///
    /// A larger request is clamped to it, never refused: the table grows on its own past it, so the hint only
    /// saves the first resizes, and the constructor commits a bounded amount whatever it is given (at the limit,
    /// measured: about 2.5 MB of buckets for the chained table; for the flat one 128 KB of control bytes, its 2 MB
    /// slot array being touched only as entries fill it).
    public static var minimumCapacityLimit: Int { 1 << 16 }

    /// Creates an empty map.
    ///
    /// - Parameter minimumCapacity: About how many entries to make room for before the first resize (the table
    ///   grows and shrinks on its own; this only avoids early resizes). Clamped to
    ///   0...``minimumCapacityLimit``: a negative value makes the smallest table, a larger one (`Int.max`
    ///   included) the table for ``minimumCapacityLimit`` entries, which then grows as entries come.
    public init(minimumCapacity: Int = 0) {
        _ = RCU.liburcuChecked
        require(MemoryLayout<Slot>.alignment <= 16, "RCUMap: key-value pairs aligned beyond 16 bytes")
        require(
            MemoryLayout<Slot>.offset(of: \Slot.value) == Self.valueOffset,
            "RCUMap: unexpected layout of the key-value pair"
        )
        // Per-map random hash seeds, drawn from the per-process random `Hasher`.
        var hasher = Hasher()
        hasher.combine(ObjectIdentifier(Self.self))
        hasher.combine(rcuMapSeedCounter.add(1, ordering: .relaxed).newValue)
        let seed = UInt64(UInt(bitPattern: hasher.finalize()))
        hasher = Hasher()
        hasher.combine(seed)
        self.hashSeed = seed
        self.hashMultiplier = UInt64(UInt(bitPattern: hasher.finalize())) | 1
        // Clamped to `minimumCapacityLimit` (the C tables would pre-size for up to 2^29 entries, committing up to
        // 1 GB of control bytes or 16 GB of buckets before the first entry).
        let capacity = Swift.min(Swift.max(0, minimumCapacity), Self.minimumCapacityLimit)
        if Self.usesFlatTable {
            var flat: UnsafeMutablePointer<cthr_rcu_flat_t>?
            let code = cthr_rcu_flat_create(capacity, hashSeed, hashMultiplier, &flat)
            rcuRefuseInReadOnlyChild(code, "RCUMap()")
            require(code == 0, "RCUMap: \(ThreadingError(code: code, operation: "cthr_rcu_flat_create"))")
            self.flat = flat
            self.chained = nil
        } else {
            let releaser = Unmanaged.passRetained(RCUMapTypedReleaser<Key, Value>() as RCUMapReleaser).toOpaque()
            var table: OpaquePointer?
            let code = cthr_rcu_map_create(capacity, rcuMapRelease, releaser, &table)
            if code != 0 { Unmanaged<RCUMapReleaser>.fromOpaque(releaser).release() }
            rcuRefuseInReadOnlyChild(code, "RCUMap()")
            require(code == 0, "RCUMap: \(ThreadingError(code: code, operation: "cthr_rcu_map_create"))")
            self.chained = table
            self.flat = nil
        }
    }

    deinit {
        // Entries (or the flat table's arrays) are released after a grace period and the table is freed on the
        // call_rcu thread, so this is safe anywhere, even inside a read section of another RCU structure.
        if let flat {
            _ = cthr_rcu_flat_destroy(flat)
        } else {
            _ = cthr_rcu_map_destroy(table)
        }
    }

    /// The seed of ``hash(_:)`` for integer keys: random per map (drawn from the per-process random `Hasher`).
    @usableFromInline
    let hashSeed: UInt64

    /// The odd multiplier of ``hash(_:)`` for integer keys: random per map, like ``hashSeed``.
    @usableFromInline
    let hashMultiplier: UInt64

    /// The 64-bit hash the chained table is keyed by.
    ///
    /// Integer keys (every fixed-width integer type, ``isIntegerKey``) skip SipHash (`hashValue`, about half the
    /// cost of a lookup): their bits are XORed with the map's random seed and folded through one 64x64->128-bit
    /// multiply by a random odd number (wyhash's mixer, as `cthr_rcu_flat_hash` does for the flat table), which
    /// spreads them over every bit the table uses and cannot be steered into one bucket without knowing the seed.
    /// `String` keys are hashed by ``stringHash(_:_:)`` (wyhash of their UTF-8 bytes, seeded per map).
    /// Every other key type uses `hashValue`. In specialized code the type tests are resolved at compile time.
    @inlinable
    @inline(__always)
    func hash(_ key: Key) -> UInt64 {
        if Key.self == String.self { return Self.stringHash(unsafeBitCast(key, to: String.self), hashSeed) }
        guard Self.isIntegerKey else { return UInt64(UInt(bitPattern: key.hashValue)) }
        let product = (Self.bits(key) ^ hashSeed).multipliedFullWidth(by: hashMultiplier)
        return product.high ^ product.low
    }

    /// The hash of a `String` key: wyhash of its UTF-8 bytes with the map's random seed (`cthr_rcu_hash_bytes`, about
    /// a tenth of the cost of `hashValue`'s SipHash-1-3 for a 40-byte key), read in place, without a copy.
    ///
    /// It must give equal hashes to equal strings, and `String` equality is canonical equivalence: `"é"` written as
    /// one scalar or as `e` plus a combining accent are equal, with different bytes. An ASCII string is its own
    /// normal form, so its bytes are hashed as they are; any other string goes to ``nonASCIIStringHash(_:_:)``.
    @inlinable
    @inline(__always)
    static func stringHash(_ key: String, _ seed: UInt64) -> UInt64 {
        let ascii = key.utf8.withContiguousStorageIfAvailable { bytes -> UInt64? in
            var hash: UInt64 = 0
            return cthr_rcu_hash_ascii(bytes.baseAddress, bytes.count, seed, &hash) != 0 ? hash : nil
        }
        if let ascii, let ascii { return ascii }
        return nonASCIIStringHash(key, seed)
    }

    /// The hash of a `String` key that is not ASCII (or not stored as contiguous UTF-8).
    ///
    /// Three non-ASCII scalars are canonically equivalent to an ASCII one (U+037E GREEK QUESTION MARK to `;`,
    /// U+1FEF GREEK VARIA to `` ` ``, U+212A KELVIN SIGN to `K`), so a string of ASCII and these scalars equals the
    /// ASCII string with each replaced: it is hashed as that string's bytes. Any other non-ASCII scalar leaves a
    /// non-ASCII scalar in the normal form (no ASCII scalar is a composition), so such a string never equals an
    /// ASCII one, and `hashValue` (which hashes the normal form) is consistent with `==` for it.
    @usableFromInline
    static func nonASCIIStringHash(_ key: String, _ seed: UInt64) -> UInt64 {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(key.utf8.count)
        for scalar in key.unicodeScalars {
            switch scalar.value {
            case 0..<0x80: bytes.append(UInt8(truncatingIfNeeded: scalar.value))
            case 0x037E: bytes.append(UInt8(ascii: ";"))
            case 0x1FEF: bytes.append(UInt8(ascii: "`"))
            case 0x212A: bytes.append(UInt8(ascii: "K"))
            default: return UInt64(UInt(bitPattern: key.hashValue))
            }
        }
        return bytes.withUnsafeBufferPointer { cthr_rcu_hash_bytes($0.baseAddress, $0.count, seed) }
    }

    /// Whether `Key` is a fixed-width integer type of the standard library (`Int`, `UInt8`...`UInt64`).
    @inlinable
    static var isIntegerKey: Bool {
        Key.self == Int.self || Key.self == UInt.self || Key.self == Int64.self || Key.self == UInt64.self
            || Key.self == Int32.self || Key.self == UInt32.self || Key.self == Int16.self || Key.self == UInt16.self
            || Key.self == Int8.self || Key.self == UInt8.self
    }

    /// Whether this map uses the flat table (`cthr_rcu_flat`): integer keys (`isIntegerKey`) and values rewritten
    /// in place (`valuesInPlace`). Fixed per `Key` and `Value`, resolved at compile time in specialized code.
    @inlinable
    public static var usesFlatTable: Bool { isIntegerKey && valuesInPlace }

    // MARK: Reading

    /// Calls `body` with the value stored for `key`, borrowed inside an RCU read section, and returns its result.
    ///
    /// The value is not retained or copied: this is the lookup to use in hot paths when `Value` holds references.
    /// The rules of ``RCUValue/read(_:)`` apply to `body` (short, non-blocking, no ``RCU/synchronize()``).
    ///
    /// - Parameters:
    ///   - key: The key to look up.
    ///   - body: Reads the value.
    /// - Returns: What `body` returns, or `nil` if `key` has no value (then `body` is not called).
    /// - Throws: What `body` throws.
    /// - Complexity: O(1) on average; no lock, no allocation.
    @inlinable
    public func withValue<R, E: Error>(forKey key: Key, _ body: (Value) throws(E) -> R) throws(E) -> R? {
        cthr_rcu_read_lock()
        defer { cthr_rcu_read_unlock() }
        if Self.usesFlatTable {
            var bits: UInt64 = 0
            guard cthr_rcu_flat_get(flat.unsafelyUnwrapped, Self.bits(key), &bits) != 0 else { return nil }
            return try body(Self.fromBits(bits) as Value)
        }
        // The lookup is a function of its own so that this one stays small enough to be specialized for `body`:
        // with `body` inlined the value is only borrowed (no retain and release of an object every reader shares).
        guard let raw = entry(forKey: key) else { return nil }
        if Self.valuesInPlace { return try body(Self.loadInPlace(raw)) }
        return try body(raw.assumingMemoryBound(to: Slot.self).pointee.value)
    }

    /// The published entry (an ``RCUMapSlot``) of `key` in the chained table, or nil. Caller is inside a read section;
    /// the entry stays valid until it ends.
    @inlinable
    func entry(forKey key: Key) -> UnsafeRawPointer? {
        if Key.self == String.self, let found = stringEntry(unsafeBitCast(key, to: String.self)) { return found }
        let hash = self.hash(key)
        var iterator = cthr_rcu_map_iter_t()
        var candidate = cthr_rcu_map_find_hash(table, hash, &iterator)
        while let raw = candidate {
            if raw.assumingMemoryBound(to: Slot.self).pointee.key == key { return UnsafeRawPointer(raw) }
            candidate = cthr_rcu_map_next_hash(table, &iterator)
        }
        return nil
    }

    /// The lookup of a `String` key by its UTF-8 bytes, read in place: `.some(entry)` (`.some(nil)` when absent) when
    /// the bytes decide, or `nil` when they cannot (the key is not stored as contiguous UTF-8, or an entry of its hash
    /// holds other bytes), and ``entry(forKey:)`` walks the hash comparing with `==`.
    ///
    /// The table keeps each key's bytes in its node (``makeEntry(_:_:)``) and compares them there, so the lookup never
    /// touches a stored `String`: reading one's bytes would retain it, an atomic increment and decrement on an object
    /// every reader of that key shares, and follow its pointer to storage in another cache line. Equal bytes are
    /// equal strings; no entry with the key's 64-bit hash means no equal key (equal strings hash alike, see
    /// ``stringHash(_:_:)``). Only an entry of the same hash with other bytes, which may be a canonically equivalent
    /// spelling of the key, needs `==`.
    @inlinable
    @inline(__always)
    func stringEntry(_ key: String) -> UnsafeRawPointer?? {
        let found = key.utf8.withContiguousStorageIfAvailable { bytes -> UnsafeRawPointer?? in
            var iterator = cthr_rcu_map_iter_t()
            var outcome: CInt = 0
            // ASCII keys (most keys of a server) are hashed and looked up in one C call.
            let entry = cthr_rcu_map_find_ascii(table, bytes.baseAddress, bytes.count, hashSeed, &iterator, &outcome)
            switch outcome {
            case CTHR_RCU_MAP_DECIDED: return .some(entry.map { UnsafeRawPointer($0) })
            case CTHR_RCU_MAP_NOT_ASCII: break
            default: return nil
            }
            var ambiguous: CInt = 0
            let hash = Self.nonASCIIStringHash(key, hashSeed)
            let other = cthr_rcu_map_find_bytes(table, hash, bytes.baseAddress, bytes.count, &iterator, &ambiguous)
            return ambiguous == 0 ? .some(other.map { UnsafeRawPointer($0) }) : nil
        }
        return found ?? nil
    }

    /// Returns the value stored for `key`, or `nil`.
    ///
    /// - Parameter key: The key to look up.
    /// - Returns: A copy of the value, or `nil`.
    /// - Complexity: O(1) on average; no lock.
    @inlinable
    public func get(_ key: Key) -> Value? {
        withValue(forKey: key) { $0 }
    }

    /// Whether `key` has a value.
    ///
    /// - Parameter key: The key to look up.
    /// - Returns: `true` if the map holds a value for `key` at the time of the lookup.
    @inlinable
    public func contains(_ key: Key) -> Bool {
        withValue(forKey: key) { _ in true } ?? false
    }

    /// The number of entries.
    ///
    /// Exact when no write runs concurrently; during writes it is a value that some order of those writes produced.
    ///
    /// - Complexity: O(1).
    public var count: Int {
        Int(flat.map { cthr_rcu_flat_count($0) } ?? cthr_rcu_map_count(table))
    }

    /// Whether the map has no entries (with the precision of ``count``).
    public var isEmpty: Bool { count == 0 }

    /// Reads or writes the value for `key`; assigning `nil` removes the key.
    ///
    /// - Parameter key: The key.
    @inlinable
    public subscript(key: Key) -> Value? {
        get { get(key) }
        set {
            if let newValue {
                set(newValue, forKey: key)
            } else {
                remove(key)
            }
        }
    }

    // MARK: Writing

    /// Stores `value` for `key`, replacing any previous value (released after a grace period).
    ///
    /// - Parameters:
    ///   - value: The new value.
    ///   - key: The key.
    /// - Complexity: O(1) on average; takes the key's stripe lock, allocates one entry.
    @inlinable
    public func set(_ value: Value, forKey key: Key) {
        if Self.usesFlatTable {
            let code = cthr_rcu_flat_set(flat.unsafelyUnwrapped, Self.bits(key), Self.bits(value))
            if code != 0 { flatFailure(code, "set") }
            return
        }
        let hash = self.hash(key)
        // Allocated before taking the lock, to keep it short; in-place values need no new entry for a present key.
        let entry = Self.valuesInPlace ? nil : Self.makeEntry(key, value)
        lockStripe(hash, "set")
        defer { unlockStripe(hash) }
        cthr_rcu_read_lock()
        defer { cthr_rcu_read_unlock() }
        var iterator = cthr_rcu_map_iter_t()
        if let raw = find(key, hash, &iterator) {
            if let entry {
                check(cthr_rcu_map_replace_at_entry(table, &iterator, entry), "cthr_rcu_map_replace_at_entry")
            } else {
                Self.storeInPlace(value, raw)
            }
        } else {
            check(cthr_rcu_map_add_entry(table, hash, entry ?? Self.makeEntry(key, value)), "cthr_rcu_map_add_entry")
        }
    }

    /// Removes the value for `key` (released after a grace period).
    ///
    /// - Parameter key: The key.
    /// - Returns: The value removed, or `nil` if there was none.
    @discardableResult
    @inlinable
    public func remove(_ key: Key) -> Value? {
        if Self.usesFlatTable {
            var old: UInt64 = 0
            let code = cthr_rcu_flat_remove(flat.unsafelyUnwrapped, Self.bits(key), &old)
            if code == ENOENT { return nil }
            if code != 0 { flatFailure(code, "remove") }
            return Self.fromBits(old) as Value
        }
        let hash = self.hash(key)
        lockStripe(hash, "remove")
        defer { unlockStripe(hash) }
        cthr_rcu_read_lock()
        defer { cthr_rcu_read_unlock() }
        var iterator = cthr_rcu_map_iter_t()
        guard let raw = find(key, hash, &iterator) else { return nil }
        let old = Self.copyValue(raw)
        check(cthr_rcu_map_delete_at(table, &iterator), "cthr_rcu_map_delete_at")
        return old
    }

    /// Replaces the value for `key` with `transform(old)`, atomically for that key.
    ///
    /// The key's stripe lock is held across the whole call, so no other write to `key` can come between reading the
    /// old value and publishing the new one, and `transform` runs exactly once. Readers are never blocked: they see
    /// the old value until the new one is published. `transform` runs outside any read section (it may block), but
    /// it must not write to this map: a write to a key on the same stripe traps (the lock is not recursive), and a
    /// write to another stripe could deadlock against another updater.
    ///
    /// - Parameters:
    ///   - key: The key.
    ///   - transform: Receives the current value (`nil` if absent) and returns the new one (`nil` removes the key).
    /// - Returns: The value now stored for `key` (`nil` if absent).
    /// - Throws: What `transform` throws; then nothing changes.
    @discardableResult
    @inlinable
    public func update<E: Error>(_ key: Key, _ transform: (Value?) throws(E) -> Value?) throws(E) -> Value? {
        if Self.usesFlatTable { return try updateFlat(key, transform) }
        let hash = self.hash(key)
        lockStripe(hash, "update")
        defer { unlockStripe(hash) }
        // Holding the stripe lock, no other writer can change `key`, so the old value read here stays current.
        let old = withValue(forKey: key) { $0 }
        let new = try transform(old)
        cthr_rcu_read_lock()
        defer { cthr_rcu_read_unlock() }
        var iterator = cthr_rcu_map_iter_t()
        switch (find(key, hash, &iterator), new) {
        case (let raw?, let new?):
            if Self.valuesInPlace {
                Self.storeInPlace(new, raw)
            } else {
                let entry = Self.makeEntry(key, new)
                check(cthr_rcu_map_replace_at_entry(table, &iterator, entry), "cthr_rcu_map_replace_at_entry")
            }
        case (_?, nil):
            check(cthr_rcu_map_delete_at(table, &iterator), "cthr_rcu_map_delete_at")
        case (nil, let new?):
            check(cthr_rcu_map_add_entry(table, hash, Self.makeEntry(key, new)), "cthr_rcu_map_add_entry")
        case (nil, nil):
            break
        }
        return new
    }

    /// Removes every entry (each released after a grace period).
    ///
    /// Not atomic: concurrent writers may add entries while it runs; each entry present when it starts and not
    /// rewritten meanwhile is removed.
    public func removeAll() {
        for key in snapshot().keys {
            remove(key)
        }
    }

    // MARK: Iteration

    /// Copies the entries into a dictionary, in one read section.
    ///
    /// What it guarantees under concurrent writes:
    /// - every key that is present during the whole copy appears exactly once, with a value it held at some moment
    ///   during the copy (a concurrent replacement gives the old or the new value, never both, never neither);
    /// - a key inserted or removed during the copy may or may not appear;
    /// - it is not an atomic snapshot: two keys written one after the other during the copy may show the second
    ///   write but not the first. With no concurrent writer it is exact.
    ///
    /// - Returns: The entries as a `Dictionary`.
    /// - Complexity: O(n); the read section lasts the whole copy, so call it sparingly on large maps (a long read
    ///   section delays reclamation, not readers or writers).
    public func snapshot() -> [Key: Value] {
        var result: [Key: Value] = [:]
        result.reserveCapacity(count)
        cthr_rcu_read_lock()
        defer { cthr_rcu_read_unlock() }
        if let flat {
            let array = cthr_rcu_flat_current(flat)
            var key: UInt64 = 0
            var value: UInt64 = 0
            for index in 0..<cthr_rcu_flat_capacity(array) where cthr_rcu_flat_slot_at(array, index, &key, &value) != 0
            {
                result[Self.fromBits(key) as Key] = Self.fromBits(value) as Value
            }
            return result
        }
        var iterator = cthr_rcu_map_iter_t()
        var candidate = cthr_rcu_map_first(table, &iterator)
        while let raw = candidate {
            let slot = raw.assumingMemoryBound(to: Slot.self)
            result[slot.pointee.key] = Self.copyValue(raw)
            candidate = cthr_rcu_map_next(table, &iterator)
        }
        return result
    }
}
