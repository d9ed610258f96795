// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import CThreading

/// The internals of ``RCUMap``: the flat table's update, key comparison and lookup in the hash table, the bit casts
/// and entries of values, the writers' stripe locks and the failure traps.
extension RCUMap {
    /// ``update(_:_:)`` on the flat table: the key's stripe lock is held across the read, `transform` and the write.
    @inlinable
    func updateFlat<E: Error>(_ key: Key, _ transform: (Value?) throws(E) -> Value?) throws(E) -> Value? {
        let flat = self.flat.unsafelyUnwrapped
        let code = cthr_rcu_flat_lock(flat, Self.bits(key))
        if code != 0 { flatFailure(code, "update") }
        defer {
            let code = cthr_rcu_flat_unlock(flat, Self.bits(key))
            if code != 0 { flatFailure(code, "update") }
        }
        let old = get(key)
        let new = try transform(old)
        if let new {
            let code = cthr_rcu_flat_set_locked(flat, Self.bits(key), Self.bits(new))
            if code != 0 { flatFailure(code, "update") }
        } else if old != nil {
            let code = cthr_rcu_flat_remove_locked(flat, Self.bits(key), nil)
            if code != 0 { flatFailure(code, "update") }
        }
        return new
    }

    /// Traps for a failed flat-table write: EDEADLK is a write from inside an ``update(_:_:)`` transform.
    @usableFromInline
    func flatFailure(_ code: CInt, _ operation: StaticString) -> Never {
        rcuRefuseInReadOnlyChild(code, "RCUMap.\(operation)")
        if code == EDEADLK {
            threadingFatal(
                "RCUMap.\(operation): the key's writer lock is already held by this thread "
                    + "(cthr_rcu_flat_lock returned EDEADLK); an update transform must not write to the same map"
            )
        }
        threadingFatal("RCUMap.\(operation): the flat table returned \(ThreadingError.cName(of: code))")
    }

    /// Finds the entry for `key` and positions `iterator` on it. Caller is inside a read section.
    ///
    /// A `String` key is first looked up by its bytes, as in ``stringEntry(_:)``; the walk with `==` below is then
    /// only for the keys the bytes cannot decide.
    @inlinable
    func find(_ key: Key, _ hash: UInt64, _ iterator: inout cthr_rcu_map_iter_t) -> UnsafeMutableRawPointer? {
        if Key.self == String.self {
            let found = unsafeBitCast(key, to: String.self).utf8.withContiguousStorageIfAvailable {
                bytes -> UnsafeMutableRawPointer?? in
                var ambiguous: CInt = 0
                let entry = cthr_rcu_map_find_bytes(table, hash, bytes.baseAddress, bytes.count, &iterator, &ambiguous)
                return ambiguous == 0 ? .some(entry) : nil
            }
            if let found, let found { return found }
        }
        var candidate = cthr_rcu_map_find_hash(table, hash, &iterator)
        while let raw = candidate {
            if raw.assumingMemoryBound(to: Slot.self).pointee.key == key { return raw }
            candidate = cthr_rcu_map_next_hash(table, &iterator)
        }
        return nil
    }

    /// Whether a write to a present key rewrites its value in place, with one atomic store, instead of publishing a
    /// new entry: true for values of 1, 2, 4 or 8 bytes, aligned to their size, that hold no references (`Int`,
    /// `Double`, `UInt32`, a one-field struct of these...). Resolved at compile time in specialized code.
    ///
    /// `_isPOD` is the one underscored standard-library call here, and on purpose: "holds no references" is what makes
    /// an in-place store safe (no reader can see a half-released object), and nothing public answers it for an
    /// unconstrained `Value` (`BitwiseCopyable` is a marker protocol: generic code cannot test it with `is`). Without
    /// it every write of an `Int` value allocates an entry and retires the old one through a grace period.
    @inlinable
    static var valuesInPlace: Bool {
        let size = MemoryLayout<Value>.size
        return _isPOD(Value.self) && MemoryLayout<Value>.alignment == size
            && (size == 1 || size == 2 || size == 4 || size == 8)
    }

    /// The byte offset of the value in a ``RCUMapSlot`` (Swift lays out struct fields in order, each aligned; `init`
    /// checks this against `MemoryLayout.offset(of:)`).
    @inlinable
    static var valueOffset: Int {
        let alignment = MemoryLayout<Value>.alignment
        return (MemoryLayout<Key>.size + alignment - 1) / alignment * alignment
    }

    /// The bits of an integer key (``isIntegerKey``) or an in-place value (``valuesInPlace``): a 1, 2, 4 or 8-byte
    /// trivial value, zero-extended to 64 bits (equal integer keys have equal bits).
    @inlinable
    @inline(__always)
    static func bits<T>(_ value: T) -> UInt64 {
        switch MemoryLayout<T>.size {
        case 1: return UInt64(unsafeBitCast(value, to: UInt8.self))
        case 2: return UInt64(unsafeBitCast(value, to: UInt16.self))
        case 4: return UInt64(unsafeBitCast(value, to: UInt32.self))
        default: return unsafeBitCast(value, to: UInt64.self)
        }
    }

    /// The key or value whose ``bits(_:)`` are `bits`.
    @inlinable
    @inline(__always)
    static func fromBits<T>(_ bits: UInt64) -> T {
        switch MemoryLayout<T>.size {
        case 1: return unsafeBitCast(UInt8(truncatingIfNeeded: bits), to: T.self)
        case 2: return unsafeBitCast(UInt16(truncatingIfNeeded: bits), to: T.self)
        case 4: return unsafeBitCast(UInt32(truncatingIfNeeded: bits), to: T.self)
        default: return unsafeBitCast(bits, to: T.self)
        }
    }

    /// Reads an in-place value (``valuesInPlace``) of the entry at `entry` with one atomic acquire load.
    @inlinable
    @inline(__always)
    static func loadInPlace(_ entry: UnsafeRawPointer) -> Value {
        fromBits(cthr_rcu_map_value_load(entry + valueOffset, MemoryLayout<Value>.size))
    }

    /// A copy of the value of the published entry at `entry`, read atomically when it is an in-place value.
    @inlinable
    @inline(__always)
    static func copyValue(_ entry: UnsafeRawPointer) -> Value {
        valuesInPlace ? loadInPlace(entry) : entry.assumingMemoryBound(to: Slot.self).pointee.value
    }

    /// Replaces an in-place value (``valuesInPlace``) of the published entry at `entry` with one atomic release store.
    /// The caller holds the key's stripe lock, so no other writer touches the entry meanwhile.
    @inlinable
    @inline(__always)
    static func storeInPlace(_ value: Value, _ entry: UnsafeMutableRawPointer) {
        _ = cthr_rcu_map_value_store(entry + valueOffset, bits(value), MemoryLayout<Value>.size)
    }

    /// Allocates an unpublished inline entry holding `key` and `value` (published by the caller).
    ///
    /// A `String` key's UTF-8 bytes are also copied into the table node, where lookups compare them
    /// (``stringEntry(_:)``): a write pays one copy of the key so that no read touches the stored `String`.
    @inlinable
    static func makeEntry(_ key: Key, _ value: Value) -> UnsafeMutableRawPointer {
        var allocated: UnsafeMutableRawPointer?
        if Key.self == String.self {
            let string = unsafeBitCast(key, to: String.self)
            let size = MemoryLayout<Slot>.size
            // In place when the string is stored as contiguous UTF-8 (no copy, so no retain and release of it).
            let inPlace = string.utf8.withContiguousStorageIfAvailable { bytes in
                cthr_rcu_map_entry_alloc_keyed(size, bytes.baseAddress, bytes.count)
            }
            allocated = inPlace ?? nil
            if allocated == nil {
                // Not contiguous UTF-8 (or out of memory, then this fails alike): `withUTF8` makes it so in a copy.
                var copy = string
                allocated = copy.withUTF8 { cthr_rcu_map_entry_alloc_keyed(size, $0.baseAddress, $0.count) }
            }
        } else {
            allocated = cthr_rcu_map_entry_alloc(MemoryLayout<Slot>.size)
        }
        guard let entry = allocated else {
            fatalError("RCUMap: out of memory (cthr_rcu_map_entry_alloc)")
        }
        entry.initializeMemory(as: Slot.self, to: Slot(key: key, value: value))
        return entry
    }

    @usableFromInline
    func lockStripe(_ hash: UInt64, _ operation: StaticString) {
        let code = cthr_rcu_map_writer_lock(table, hash)
        rcuRefuseInReadOnlyChild(code, "RCUMap.\(operation)")
        require(
            code == 0,
            "RCUMap.\(operation): the key's writer lock is already held by this thread "
                + "(cthr_rcu_map_writer_lock returned \(ThreadingError.cName(of: code))); "
                + "an update transform must not write to the same map"
        )
    }

    @usableFromInline
    func unlockStripe(_ hash: UInt64) {
        let code = cthr_rcu_map_writer_unlock(table, hash)
        require(code == 0, "RCUMap: cthr_rcu_map_writer_unlock returned \(ThreadingError.cName(of: code))")
    }

    @usableFromInline
    func check(_ code: CInt, _ operation: StaticString) {
        require(code == 0, "RCUMap: \(operation) returned \(ThreadingError.cName(of: code))")
    }
}
