// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import CBenchSupport

/// Reference: the cache guarded by a raw C compare-exchange spin lock, the hardware floor for a lock.
///
/// One CAS to acquire and one release store to release, both `static inline` C; under contention it spins with
/// `pause` and yields every 128 spins. `@unchecked Sendable`: `storage` is only touched while the lock is held.
public final class CASSpinCache: CacheStrategy, @unchecked Sendable {
    public static let name = "C CAS spin (floor)"
    public static let id = "cas-spin"
    public static let kind = StrategyKind.reference
    public static let summary = "raw C compare-exchange spin lock (static inline): the hardware floor for a lock"

    private let word: UnsafeMutablePointer<cthr_bench_spin_word_t>
    private let storage: DictionaryCell

    public init(keyCount: Int) {
        word = .allocate(capacity: 1)
        word.initialize(to: 0)
        storage = DictionaryCell(keyCount: keyCount)
    }

    deinit {
        storage.destroy()
        word.deallocate()
    }

    @inline(__always)
    public func read(_ key: Int) -> Int? {
        cthr_bench_spin_lock(word)
        defer { cthr_bench_spin_unlock(word) }
        return storage.get(key)
    }

    @inline(__always)
    public func write(_ key: Int, _ value: Int) {
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
public final class UnsynchronizedCache: CacheStrategy, @unchecked Sendable {
    public static let name = "unsynchronized (child)"
    public static let id = "unsynchronized"
    public static let kind = StrategyKind.reference
    public static let summary = "no synchronization (the crashing cache); runs in a child process only"

    private var storage: [Int: Int]

    public init(keyCount: Int) { storage = prefilledCache(keyCount: keyCount) }

    @inline(__always)
    public func read(_ key: Int) -> Int? { storage[key] }

    @inline(__always)
    public func write(_ key: Int, _ value: Int) { storage[key] = value }
}
