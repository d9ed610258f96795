// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import Glibc

/// Peer: the cache guarded by a raw `pthread_rwlock_t` (read lock for reads, write lock for writes).
///
/// The lock lives in its own heap allocation so it never moves. `@unchecked Sendable`: `storage` is read under the
/// read lock and written under the write lock.
public final class PthreadRWLockCache<Shape: CacheShape>: CacheStrategy, @unchecked Sendable {
    public static var name: String { "pthread_rwlock" }
    public static var id: String { "pthread-rwlock" }
    public static var kind: StrategyKind { .peer }
    public static var summary: String {
        "raw pthread_rwlock_t (rdlock for reads, wrlock for writes) around a [Key: Value]"
    }

    private let rwlock: UnsafeMutablePointer<pthread_rwlock_t>
    private let storage: DictionaryCell<Shape>

    public init(keyCount: Int) {
        rwlock = .allocate(capacity: 1)
        rwlock.initialize(to: pthread_rwlock_t())
        let code = pthread_rwlock_init(rwlock, nil)
        precondition(code == 0, "pthread_rwlock_init failed with code \(code)")
        storage = DictionaryCell<Shape>(keyCount: keyCount)
    }

    deinit {
        storage.destroy()
        pthread_rwlock_destroy(rwlock)
        rwlock.deallocate()
    }

    @inline(__always)
    public func read(_ key: Shape.Key) -> Int? {
        pthread_rwlock_rdlock(rwlock)
        defer { pthread_rwlock_unlock(rwlock) }
        return storage.get(key)
    }

    @inline(__always)
    public func write(_ key: Shape.Key, _ value: Shape.Value) {
        pthread_rwlock_wrlock(rwlock)
        defer { pthread_rwlock_unlock(rwlock) }
        storage.set(key, value)
    }
}
