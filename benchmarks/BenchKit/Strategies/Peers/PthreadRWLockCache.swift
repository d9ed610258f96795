// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import Glibc

/// Peer: the cache guarded by a raw `pthread_rwlock_t` (read lock for reads, write lock for writes).
///
/// The lock lives in its own heap allocation so it never moves. `@unchecked Sendable`: `storage` is read under the
/// read lock and written under the write lock.
public final class PthreadRWLockCache: CacheStrategy, @unchecked Sendable {
    public static let name = "pthread_rwlock"
    public static let id = "pthread-rwlock"
    public static let kind = StrategyKind.peer
    public static let summary = "raw pthread_rwlock_t (rdlock for reads, wrlock for writes) around a [Int: Int]"

    private let rwlock: UnsafeMutablePointer<pthread_rwlock_t>
    private let storage: DictionaryCell

    public init(keyCount: Int) {
        rwlock = .allocate(capacity: 1)
        rwlock.initialize(to: pthread_rwlock_t())
        let code = pthread_rwlock_init(rwlock, nil)
        precondition(code == 0, "pthread_rwlock_init failed with code \(code)")
        storage = DictionaryCell(keyCount: keyCount)
    }

    deinit {
        storage.destroy()
        pthread_rwlock_destroy(rwlock)
        rwlock.deallocate()
    }

    @inline(__always)
    public func read(_ key: Int) -> Int? {
        pthread_rwlock_rdlock(rwlock)
        defer { pthread_rwlock_unlock(rwlock) }
        return storage.get(key)
    }

    @inline(__always)
    public func write(_ key: Int, _ value: Int) {
        pthread_rwlock_wrlock(rwlock)
        defer { pthread_rwlock_unlock(rwlock) }
        storage.set(key, value)
    }
}
