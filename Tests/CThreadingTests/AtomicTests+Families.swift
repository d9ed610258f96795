// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

// One conformance per `cthr_atomic_NAME_*` family, so AtomicTests.swift can run the same checks at every width.
// Generated once by hand from a template (the families are identical apart from NAME and T); keep them in step.

import CThreading

/// The operations of one integer family of cthr_atomic.h, as static functions over its storage struct.
protocol IntegerAtomicOps {
    associatedtype Value: FixedWidthInteger
    associatedtype Storage
    static func initialize(_ a: UnsafeMutablePointer<Storage>, _ v: Value)
    static func load(_ a: UnsafeMutablePointer<Storage>, _ o: cthr_memory_order_t) -> Value
    static func store(_ a: UnsafeMutablePointer<Storage>, _ v: Value, _ o: cthr_memory_order_t)
    static func exchange(_ a: UnsafeMutablePointer<Storage>, _ v: Value, _ o: cthr_memory_order_t) -> Value
    static func compareExchange(
        _ a: UnsafeMutablePointer<Storage>,
        _ e: UnsafeMutablePointer<Value>,
        _ d: Value,
        weak: Bool,
        _ s: cthr_memory_order_t,
        _ f: cthr_memory_order_t
    ) -> Bool
    static func fetchAdd(_ a: UnsafeMutablePointer<Storage>, _ v: Value, _ o: cthr_memory_order_t) -> Value
    static func fetchSub(_ a: UnsafeMutablePointer<Storage>, _ v: Value, _ o: cthr_memory_order_t) -> Value
    static func fetchAnd(_ a: UnsafeMutablePointer<Storage>, _ v: Value, _ o: cthr_memory_order_t) -> Value
    static func fetchOr(_ a: UnsafeMutablePointer<Storage>, _ v: Value, _ o: cthr_memory_order_t) -> Value
    static func fetchXor(_ a: UnsafeMutablePointer<Storage>, _ v: Value, _ o: cthr_memory_order_t) -> Value
}

/// The `cthr_atomic_u8_*` family.
enum U8Ops: IntegerAtomicOps {
    typealias Storage = cthr_atomic_u8_t
    static func initialize(_ a: UnsafeMutablePointer<Storage>, _ v: UInt8) { cthr_atomic_u8_init(a, v) }
    static func load(_ a: UnsafeMutablePointer<Storage>, _ o: cthr_memory_order_t) -> UInt8 {
        cthr_atomic_u8_load(a, o)
    }
    static func store(_ a: UnsafeMutablePointer<Storage>, _ v: UInt8, _ o: cthr_memory_order_t) {
        cthr_atomic_u8_store(a, v, o)
    }
    static func exchange(_ a: UnsafeMutablePointer<Storage>, _ v: UInt8, _ o: cthr_memory_order_t) -> UInt8 {
        cthr_atomic_u8_exchange(a, v, o)
    }
    static func compareExchange(
        _ a: UnsafeMutablePointer<Storage>,
        _ e: UnsafeMutablePointer<UInt8>,
        _ d: UInt8,
        weak: Bool,
        _ s: cthr_memory_order_t,
        _ f: cthr_memory_order_t
    ) -> Bool {
        if weak { return cthr_atomic_u8_compare_exchange_weak(a, e, d, s, f) }
        return cthr_atomic_u8_compare_exchange_strong(a, e, d, s, f)
    }
    static func fetchAdd(_ a: UnsafeMutablePointer<Storage>, _ v: UInt8, _ o: cthr_memory_order_t) -> UInt8 {
        cthr_atomic_u8_fetch_add(a, v, o)
    }
    static func fetchSub(_ a: UnsafeMutablePointer<Storage>, _ v: UInt8, _ o: cthr_memory_order_t) -> UInt8 {
        cthr_atomic_u8_fetch_sub(a, v, o)
    }
    static func fetchAnd(_ a: UnsafeMutablePointer<Storage>, _ v: UInt8, _ o: cthr_memory_order_t) -> UInt8 {
        cthr_atomic_u8_fetch_and(a, v, o)
    }
    static func fetchOr(_ a: UnsafeMutablePointer<Storage>, _ v: UInt8, _ o: cthr_memory_order_t) -> UInt8 {
        cthr_atomic_u8_fetch_or(a, v, o)
    }
    static func fetchXor(_ a: UnsafeMutablePointer<Storage>, _ v: UInt8, _ o: cthr_memory_order_t) -> UInt8 {
        cthr_atomic_u8_fetch_xor(a, v, o)
    }
}

/// The `cthr_atomic_u16_*` family.
enum U16Ops: IntegerAtomicOps {
    typealias Storage = cthr_atomic_u16_t
    static func initialize(_ a: UnsafeMutablePointer<Storage>, _ v: UInt16) { cthr_atomic_u16_init(a, v) }
    static func load(_ a: UnsafeMutablePointer<Storage>, _ o: cthr_memory_order_t) -> UInt16 {
        cthr_atomic_u16_load(a, o)
    }
    static func store(_ a: UnsafeMutablePointer<Storage>, _ v: UInt16, _ o: cthr_memory_order_t) {
        cthr_atomic_u16_store(a, v, o)
    }
    static func exchange(_ a: UnsafeMutablePointer<Storage>, _ v: UInt16, _ o: cthr_memory_order_t) -> UInt16 {
        cthr_atomic_u16_exchange(a, v, o)
    }
    static func compareExchange(
        _ a: UnsafeMutablePointer<Storage>,
        _ e: UnsafeMutablePointer<UInt16>,
        _ d: UInt16,
        weak: Bool,
        _ s: cthr_memory_order_t,
        _ f: cthr_memory_order_t
    ) -> Bool {
        if weak { return cthr_atomic_u16_compare_exchange_weak(a, e, d, s, f) }
        return cthr_atomic_u16_compare_exchange_strong(a, e, d, s, f)
    }
    static func fetchAdd(_ a: UnsafeMutablePointer<Storage>, _ v: UInt16, _ o: cthr_memory_order_t) -> UInt16 {
        cthr_atomic_u16_fetch_add(a, v, o)
    }
    static func fetchSub(_ a: UnsafeMutablePointer<Storage>, _ v: UInt16, _ o: cthr_memory_order_t) -> UInt16 {
        cthr_atomic_u16_fetch_sub(a, v, o)
    }
    static func fetchAnd(_ a: UnsafeMutablePointer<Storage>, _ v: UInt16, _ o: cthr_memory_order_t) -> UInt16 {
        cthr_atomic_u16_fetch_and(a, v, o)
    }
    static func fetchOr(_ a: UnsafeMutablePointer<Storage>, _ v: UInt16, _ o: cthr_memory_order_t) -> UInt16 {
        cthr_atomic_u16_fetch_or(a, v, o)
    }
    static func fetchXor(_ a: UnsafeMutablePointer<Storage>, _ v: UInt16, _ o: cthr_memory_order_t) -> UInt16 {
        cthr_atomic_u16_fetch_xor(a, v, o)
    }
}

/// The `cthr_atomic_u32_*` family.
enum U32Ops: IntegerAtomicOps {
    typealias Storage = cthr_atomic_u32_t
    static func initialize(_ a: UnsafeMutablePointer<Storage>, _ v: UInt32) { cthr_atomic_u32_init(a, v) }
    static func load(_ a: UnsafeMutablePointer<Storage>, _ o: cthr_memory_order_t) -> UInt32 {
        cthr_atomic_u32_load(a, o)
    }
    static func store(_ a: UnsafeMutablePointer<Storage>, _ v: UInt32, _ o: cthr_memory_order_t) {
        cthr_atomic_u32_store(a, v, o)
    }
    static func exchange(_ a: UnsafeMutablePointer<Storage>, _ v: UInt32, _ o: cthr_memory_order_t) -> UInt32 {
        cthr_atomic_u32_exchange(a, v, o)
    }
    static func compareExchange(
        _ a: UnsafeMutablePointer<Storage>,
        _ e: UnsafeMutablePointer<UInt32>,
        _ d: UInt32,
        weak: Bool,
        _ s: cthr_memory_order_t,
        _ f: cthr_memory_order_t
    ) -> Bool {
        if weak { return cthr_atomic_u32_compare_exchange_weak(a, e, d, s, f) }
        return cthr_atomic_u32_compare_exchange_strong(a, e, d, s, f)
    }
    static func fetchAdd(_ a: UnsafeMutablePointer<Storage>, _ v: UInt32, _ o: cthr_memory_order_t) -> UInt32 {
        cthr_atomic_u32_fetch_add(a, v, o)
    }
    static func fetchSub(_ a: UnsafeMutablePointer<Storage>, _ v: UInt32, _ o: cthr_memory_order_t) -> UInt32 {
        cthr_atomic_u32_fetch_sub(a, v, o)
    }
    static func fetchAnd(_ a: UnsafeMutablePointer<Storage>, _ v: UInt32, _ o: cthr_memory_order_t) -> UInt32 {
        cthr_atomic_u32_fetch_and(a, v, o)
    }
    static func fetchOr(_ a: UnsafeMutablePointer<Storage>, _ v: UInt32, _ o: cthr_memory_order_t) -> UInt32 {
        cthr_atomic_u32_fetch_or(a, v, o)
    }
    static func fetchXor(_ a: UnsafeMutablePointer<Storage>, _ v: UInt32, _ o: cthr_memory_order_t) -> UInt32 {
        cthr_atomic_u32_fetch_xor(a, v, o)
    }
}

/// The `cthr_atomic_u64_*` family.
enum U64Ops: IntegerAtomicOps {
    typealias Storage = cthr_atomic_u64_t
    static func initialize(_ a: UnsafeMutablePointer<Storage>, _ v: UInt64) { cthr_atomic_u64_init(a, v) }
    static func load(_ a: UnsafeMutablePointer<Storage>, _ o: cthr_memory_order_t) -> UInt64 {
        cthr_atomic_u64_load(a, o)
    }
    static func store(_ a: UnsafeMutablePointer<Storage>, _ v: UInt64, _ o: cthr_memory_order_t) {
        cthr_atomic_u64_store(a, v, o)
    }
    static func exchange(_ a: UnsafeMutablePointer<Storage>, _ v: UInt64, _ o: cthr_memory_order_t) -> UInt64 {
        cthr_atomic_u64_exchange(a, v, o)
    }
    static func compareExchange(
        _ a: UnsafeMutablePointer<Storage>,
        _ e: UnsafeMutablePointer<UInt64>,
        _ d: UInt64,
        weak: Bool,
        _ s: cthr_memory_order_t,
        _ f: cthr_memory_order_t
    ) -> Bool {
        if weak { return cthr_atomic_u64_compare_exchange_weak(a, e, d, s, f) }
        return cthr_atomic_u64_compare_exchange_strong(a, e, d, s, f)
    }
    static func fetchAdd(_ a: UnsafeMutablePointer<Storage>, _ v: UInt64, _ o: cthr_memory_order_t) -> UInt64 {
        cthr_atomic_u64_fetch_add(a, v, o)
    }
    static func fetchSub(_ a: UnsafeMutablePointer<Storage>, _ v: UInt64, _ o: cthr_memory_order_t) -> UInt64 {
        cthr_atomic_u64_fetch_sub(a, v, o)
    }
    static func fetchAnd(_ a: UnsafeMutablePointer<Storage>, _ v: UInt64, _ o: cthr_memory_order_t) -> UInt64 {
        cthr_atomic_u64_fetch_and(a, v, o)
    }
    static func fetchOr(_ a: UnsafeMutablePointer<Storage>, _ v: UInt64, _ o: cthr_memory_order_t) -> UInt64 {
        cthr_atomic_u64_fetch_or(a, v, o)
    }
    static func fetchXor(_ a: UnsafeMutablePointer<Storage>, _ v: UInt64, _ o: cthr_memory_order_t) -> UInt64 {
        cthr_atomic_u64_fetch_xor(a, v, o)
    }
}

/// The `cthr_atomic_i8_*` family.
enum I8Ops: IntegerAtomicOps {
    typealias Storage = cthr_atomic_i8_t
    static func initialize(_ a: UnsafeMutablePointer<Storage>, _ v: Int8) { cthr_atomic_i8_init(a, v) }
    static func load(_ a: UnsafeMutablePointer<Storage>, _ o: cthr_memory_order_t) -> Int8 {
        cthr_atomic_i8_load(a, o)
    }
    static func store(_ a: UnsafeMutablePointer<Storage>, _ v: Int8, _ o: cthr_memory_order_t) {
        cthr_atomic_i8_store(a, v, o)
    }
    static func exchange(_ a: UnsafeMutablePointer<Storage>, _ v: Int8, _ o: cthr_memory_order_t) -> Int8 {
        cthr_atomic_i8_exchange(a, v, o)
    }
    static func compareExchange(
        _ a: UnsafeMutablePointer<Storage>,
        _ e: UnsafeMutablePointer<Int8>,
        _ d: Int8,
        weak: Bool,
        _ s: cthr_memory_order_t,
        _ f: cthr_memory_order_t
    ) -> Bool {
        if weak { return cthr_atomic_i8_compare_exchange_weak(a, e, d, s, f) }
        return cthr_atomic_i8_compare_exchange_strong(a, e, d, s, f)
    }
    static func fetchAdd(_ a: UnsafeMutablePointer<Storage>, _ v: Int8, _ o: cthr_memory_order_t) -> Int8 {
        cthr_atomic_i8_fetch_add(a, v, o)
    }
    static func fetchSub(_ a: UnsafeMutablePointer<Storage>, _ v: Int8, _ o: cthr_memory_order_t) -> Int8 {
        cthr_atomic_i8_fetch_sub(a, v, o)
    }
    static func fetchAnd(_ a: UnsafeMutablePointer<Storage>, _ v: Int8, _ o: cthr_memory_order_t) -> Int8 {
        cthr_atomic_i8_fetch_and(a, v, o)
    }
    static func fetchOr(_ a: UnsafeMutablePointer<Storage>, _ v: Int8, _ o: cthr_memory_order_t) -> Int8 {
        cthr_atomic_i8_fetch_or(a, v, o)
    }
    static func fetchXor(_ a: UnsafeMutablePointer<Storage>, _ v: Int8, _ o: cthr_memory_order_t) -> Int8 {
        cthr_atomic_i8_fetch_xor(a, v, o)
    }
}

/// The `cthr_atomic_i16_*` family.
enum I16Ops: IntegerAtomicOps {
    typealias Storage = cthr_atomic_i16_t
    static func initialize(_ a: UnsafeMutablePointer<Storage>, _ v: Int16) { cthr_atomic_i16_init(a, v) }
    static func load(_ a: UnsafeMutablePointer<Storage>, _ o: cthr_memory_order_t) -> Int16 {
        cthr_atomic_i16_load(a, o)
    }
    static func store(_ a: UnsafeMutablePointer<Storage>, _ v: Int16, _ o: cthr_memory_order_t) {
        cthr_atomic_i16_store(a, v, o)
    }
    static func exchange(_ a: UnsafeMutablePointer<Storage>, _ v: Int16, _ o: cthr_memory_order_t) -> Int16 {
        cthr_atomic_i16_exchange(a, v, o)
    }
    static func compareExchange(
        _ a: UnsafeMutablePointer<Storage>,
        _ e: UnsafeMutablePointer<Int16>,
        _ d: Int16,
        weak: Bool,
        _ s: cthr_memory_order_t,
        _ f: cthr_memory_order_t
    ) -> Bool {
        if weak { return cthr_atomic_i16_compare_exchange_weak(a, e, d, s, f) }
        return cthr_atomic_i16_compare_exchange_strong(a, e, d, s, f)
    }
    static func fetchAdd(_ a: UnsafeMutablePointer<Storage>, _ v: Int16, _ o: cthr_memory_order_t) -> Int16 {
        cthr_atomic_i16_fetch_add(a, v, o)
    }
    static func fetchSub(_ a: UnsafeMutablePointer<Storage>, _ v: Int16, _ o: cthr_memory_order_t) -> Int16 {
        cthr_atomic_i16_fetch_sub(a, v, o)
    }
    static func fetchAnd(_ a: UnsafeMutablePointer<Storage>, _ v: Int16, _ o: cthr_memory_order_t) -> Int16 {
        cthr_atomic_i16_fetch_and(a, v, o)
    }
    static func fetchOr(_ a: UnsafeMutablePointer<Storage>, _ v: Int16, _ o: cthr_memory_order_t) -> Int16 {
        cthr_atomic_i16_fetch_or(a, v, o)
    }
    static func fetchXor(_ a: UnsafeMutablePointer<Storage>, _ v: Int16, _ o: cthr_memory_order_t) -> Int16 {
        cthr_atomic_i16_fetch_xor(a, v, o)
    }
}

/// The `cthr_atomic_i32_*` family.
enum I32Ops: IntegerAtomicOps {
    typealias Storage = cthr_atomic_i32_t
    static func initialize(_ a: UnsafeMutablePointer<Storage>, _ v: Int32) { cthr_atomic_i32_init(a, v) }
    static func load(_ a: UnsafeMutablePointer<Storage>, _ o: cthr_memory_order_t) -> Int32 {
        cthr_atomic_i32_load(a, o)
    }
    static func store(_ a: UnsafeMutablePointer<Storage>, _ v: Int32, _ o: cthr_memory_order_t) {
        cthr_atomic_i32_store(a, v, o)
    }
    static func exchange(_ a: UnsafeMutablePointer<Storage>, _ v: Int32, _ o: cthr_memory_order_t) -> Int32 {
        cthr_atomic_i32_exchange(a, v, o)
    }
    static func compareExchange(
        _ a: UnsafeMutablePointer<Storage>,
        _ e: UnsafeMutablePointer<Int32>,
        _ d: Int32,
        weak: Bool,
        _ s: cthr_memory_order_t,
        _ f: cthr_memory_order_t
    ) -> Bool {
        if weak { return cthr_atomic_i32_compare_exchange_weak(a, e, d, s, f) }
        return cthr_atomic_i32_compare_exchange_strong(a, e, d, s, f)
    }
    static func fetchAdd(_ a: UnsafeMutablePointer<Storage>, _ v: Int32, _ o: cthr_memory_order_t) -> Int32 {
        cthr_atomic_i32_fetch_add(a, v, o)
    }
    static func fetchSub(_ a: UnsafeMutablePointer<Storage>, _ v: Int32, _ o: cthr_memory_order_t) -> Int32 {
        cthr_atomic_i32_fetch_sub(a, v, o)
    }
    static func fetchAnd(_ a: UnsafeMutablePointer<Storage>, _ v: Int32, _ o: cthr_memory_order_t) -> Int32 {
        cthr_atomic_i32_fetch_and(a, v, o)
    }
    static func fetchOr(_ a: UnsafeMutablePointer<Storage>, _ v: Int32, _ o: cthr_memory_order_t) -> Int32 {
        cthr_atomic_i32_fetch_or(a, v, o)
    }
    static func fetchXor(_ a: UnsafeMutablePointer<Storage>, _ v: Int32, _ o: cthr_memory_order_t) -> Int32 {
        cthr_atomic_i32_fetch_xor(a, v, o)
    }
}

/// The `cthr_atomic_i64_*` family.
enum I64Ops: IntegerAtomicOps {
    typealias Storage = cthr_atomic_i64_t
    static func initialize(_ a: UnsafeMutablePointer<Storage>, _ v: Int64) { cthr_atomic_i64_init(a, v) }
    static func load(_ a: UnsafeMutablePointer<Storage>, _ o: cthr_memory_order_t) -> Int64 {
        cthr_atomic_i64_load(a, o)
    }
    static func store(_ a: UnsafeMutablePointer<Storage>, _ v: Int64, _ o: cthr_memory_order_t) {
        cthr_atomic_i64_store(a, v, o)
    }
    static func exchange(_ a: UnsafeMutablePointer<Storage>, _ v: Int64, _ o: cthr_memory_order_t) -> Int64 {
        cthr_atomic_i64_exchange(a, v, o)
    }
    static func compareExchange(
        _ a: UnsafeMutablePointer<Storage>,
        _ e: UnsafeMutablePointer<Int64>,
        _ d: Int64,
        weak: Bool,
        _ s: cthr_memory_order_t,
        _ f: cthr_memory_order_t
    ) -> Bool {
        if weak { return cthr_atomic_i64_compare_exchange_weak(a, e, d, s, f) }
        return cthr_atomic_i64_compare_exchange_strong(a, e, d, s, f)
    }
    static func fetchAdd(_ a: UnsafeMutablePointer<Storage>, _ v: Int64, _ o: cthr_memory_order_t) -> Int64 {
        cthr_atomic_i64_fetch_add(a, v, o)
    }
    static func fetchSub(_ a: UnsafeMutablePointer<Storage>, _ v: Int64, _ o: cthr_memory_order_t) -> Int64 {
        cthr_atomic_i64_fetch_sub(a, v, o)
    }
    static func fetchAnd(_ a: UnsafeMutablePointer<Storage>, _ v: Int64, _ o: cthr_memory_order_t) -> Int64 {
        cthr_atomic_i64_fetch_and(a, v, o)
    }
    static func fetchOr(_ a: UnsafeMutablePointer<Storage>, _ v: Int64, _ o: cthr_memory_order_t) -> Int64 {
        cthr_atomic_i64_fetch_or(a, v, o)
    }
    static func fetchXor(_ a: UnsafeMutablePointer<Storage>, _ v: Int64, _ o: cthr_memory_order_t) -> Int64 {
        cthr_atomic_i64_fetch_xor(a, v, o)
    }
}
