// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import CBenchSupport

/// Reference: the cache guarded by a raw C compare-exchange spin lock, the hardware floor for a lock.
///
/// One CAS to acquire and one release store to release, both `static inline` C; under contention it spins with
/// `pause` and yields every 128 spins. `@unchecked Sendable`: `storage` is only touched while the lock is held.
public final class CASSpinCache<Shape: CacheShape>: CacheStrategy, @unchecked Sendable {
    public static var name: String { "C CAS spin (floor)" }
    public static var id: String { "cas-spin" }
    public static var kind: StrategyKind { .reference }
    public static var summary: String {
        "raw C compare-exchange spin lock (static inline): the hardware floor for a lock"
    }

    private let word: UnsafeMutablePointer<cthr_bench_spin_word_t>
    private let storage: DictionaryCell<Shape>

    public init(keyCount: Int) {
        word = .allocate(capacity: 1)
        word.initialize(to: 0)
        storage = DictionaryCell<Shape>(keyCount: keyCount)
    }

    deinit {
        storage.destroy()
        word.deallocate()
    }

    @inline(__always)
    public func read(_ key: Shape.Key) -> Int? {
        cthr_bench_spin_lock(word)
        defer { cthr_bench_spin_unlock(word) }
        return storage.get(key)
    }

    @inline(__always)
    public func write(_ key: Shape.Key, _ value: Shape.Value) {
        cthr_bench_spin_lock(word)
        defer { cthr_bench_spin_unlock(word) }
        storage.set(key, value)
    }
}

/// Reference: the cache with no synchronization at all, the shared cache that crashes.
///
/// It is a data race by construction, so the benchmark only ever runs it in a child process and reports what
/// happened to that process (crashed, corrupt reads, or survived). The `@unchecked Sendable` is a deliberate lie
/// that the child process pays for. The dictionary is a plain class `var`, exactly what naive code (and a
/// user who forgot the lock) would write.
public final class UnsynchronizedCache<Shape: CacheShape>: CacheStrategy, @unchecked Sendable {
    public static var name: String { "unsynchronized (child)" }
    public static var id: String { "unsynchronized" }
    public static var kind: StrategyKind { .reference }
    public static var summary: String { "no synchronization (the crashing cache); runs in a child process only" }

    private var storage: [Shape.Key: Shape.Value]

    public init(keyCount: Int) { storage = Shape.prefilled(keyCount: keyCount) }

    @inline(__always)
    public func read(_ key: Shape.Key) -> Int? { storage.token(key, Shape.self) }

    @inline(__always)
    public func write(_ key: Shape.Key, _ value: Shape.Value) { storage[key] = value }
}
