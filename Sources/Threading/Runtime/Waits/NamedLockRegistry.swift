// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import CThreading

/// Where a registered lock's holder is read: the word that holds the owner's thread id.
///
/// The pointers stay valid while the lock is registered: a lock unregisters in its `deinit`, under the registry's
/// lock, before it frees its state.
enum LockOwnerWord {
    case futex(UnsafeMutablePointer<cthr_lock_t>)
    case spin(UnsafeMutablePointer<cthr_spin_t>)
    case readWrite(UnsafeMutablePointer<cthr_rwlock_t>)
    /// A lock whose owner the library cannot read (a priority-inheriting `pthread_mutex_t`).
    case unknown

    /// The holder's kernel thread id now, 0 when free or unknown (a relaxed load: a snapshot).
    var owner: UInt32 {
        switch self {
        case .futex(let word): cthr_lock_owner(word)
        case .spin(let word): cthr_spin_owner(word)
        case .readWrite(let word): cthr_rwlock_writer(word)
        case .unknown: 0
        }
    }
}

/// The named locks alive now (``MutexLock``, ``RecursiveLock``, ``SpinLock``, ``ReadWriteLock`` created with a
/// name), for the held locks of a snapshot. A lock registers in its initializer and unregisters in its `deinit`;
/// unnamed locks never do, so they cost nothing.
enum NamedLockRegistry {
    /// One registered lock: its description (made once, at registration) and where its owner is read.
    struct Entry {
        let description: String
        let word: LockOwnerWord
    }

    private static let lock = RuntimeLock.make()
    nonisolated(unsafe) private static var entries: [ObjectIdentifier: Entry] = [:]

    /// Registers `object` (a lock with a name) with its description and owner word.
    static func register(_ object: AnyObject, _ description: String, _ word: LockOwnerWord) {
        let entry = Entry(description: description, word: word)
        lock.withLock { entries[ObjectIdentifier(object)] = entry }
    }

    /// Unregisters `object` (from its `deinit`, before its state is freed).
    static func unregister(_ object: AnyObject) {
        lock.withLock { _ = entries.removeValue(forKey: ObjectIdentifier(object)) }
    }

    /// The registered locks that are held now: identity, description and holder (read under the registry's lock,
    /// so no lock's state is freed meanwhile).
    static func held() -> [(id: ObjectIdentifier, description: String, holder: Int32)] {
        lock.withLock {
            entries.compactMap { id, entry in
                let owner = entry.word.owner
                return owner == 0 ? nil : (id, entry.description, Int32(bitPattern: owner))
            }
        }
    }

    /// Takes the registry's lock for `fork()` (``ThreadRegistry``'s prepare handler).
    static func lockForFork() { lock.lock() }

    /// Gives it back after `fork()`, in the parent and in the child.
    static func unlockAfterFork() { lock.unlock() }

    /// How many registered locks have a description containing `text` (for tests).
    static func count(containing text: String) -> Int {
        lock.withLock { entries.values.filter { $0.description.contains(text) }.count }
    }
}
