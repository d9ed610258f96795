// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import CThreading
import Synchronization

/// The runtime's own lock: the C futex lock `cthr_lock_t` (the lock under ``MutexLock``), on the heap.
///
/// The pool's critical sections are a handful of instructions (append to or pop from a ring), held by producers
/// and drainers that run at the same time; a plain `pthread_mutex_t` (`CTHR_MUTEX_NORMAL`) sleeps on the first
/// conflict, which made every async enqueue a system call under contention. `cthr_lock_t` spins briefly before it
/// sleeps, wakes one sleeper at a time and bounds starvation (see `cthr_lock.h`); its uncontended lock is a load and
/// one compare-exchange, its unlock one fetch-and-subtract, inlined from the header. One futex lock serves the whole
/// library.
///
/// It replaced a Swift three-state futex mutex after interleaved `bench queues` runs showed it no slower on the
/// pool (the figures are in BENCHMARKS.md).
///
/// Fork: the pool holds its locks across `fork()` (``ForkRegistry``'s prepare handler takes them, the child's
/// handler releases them). The word holds the owner's kernel thread id and the child's thread has a new one, but
/// `lock.c` counts a word owned by the forking thread's pre-fork id as the child's first thread's, so the child's
/// unlock succeeds (as it would for a pthread mutex).
///
/// Internal on purpose (the public lock types belong to the primitives). Misuse (unlocking a lock the thread does
/// not hold, relocking) traps. `@unchecked Sendable`: the lock word is only touched through `cthr_lock_*`, whose
/// operations are atomic.
final class RuntimeLock: @unchecked Sendable {
    private let word: UnsafeMutablePointer<cthr_lock_t>
    /// Whether `word` is this lock's own allocation (else it lives in its owner's memory, see ``init(at:)``).
    private let ownsWord: Bool
    /// The futex word made beside the lock's word by ``init(companionWord:)``, else nil.
    let companionWord: UnsafeMutablePointer<Atomic<UInt32>>?

    init() {
        word = .allocate(capacity: 1)
        word.initialize(to: cthr_lock_t())
        ownsWord = true
        companionWord = nil
    }

    /// A lock whose allocation also holds a futex word (``companionWord``, initially `value`), beside the lock's
    /// word: for an object whose lock guards what threads sleep on (a ``WorkGroup``'s count, a ``WorkItem``'s end),
    /// which the wait and the wake-up that ends it touch together: the object makes one allocation for both. The
    /// owner reaches the word through ``FutexWord/init(at:)`` and must not use it after the lock is gone (keep both
    /// in the same object).
    init(companionWord value: UInt32) {
        // A plain allocation (the allocator's per-thread cache), not a cache line of its own: a group or an item is
        // made per piece of work, and an aligned allocation takes the allocator's slow path every time.
        let raw = UnsafeMutableRawPointer.allocate(
            byteCount: RuntimeLock.companionOffset + MemoryLayout<Atomic<UInt32>>.size,
            alignment: MemoryLayout<cthr_lock_t>.alignment
        )
        word = raw.initializeMemory(as: cthr_lock_t.self, repeating: cthr_lock_t(), count: 1)
        let companion = (raw + RuntimeLock.companionOffset).bindMemory(to: Atomic<UInt32>.self, capacity: 1)
        companion.initialize(to: Atomic(value))
        companionWord = companion
        ownsWord = true
    }

    /// Where ``companionWord`` lies after the lock's word.
    private static var companionOffset: Int {
        let alignment = MemoryLayout<Atomic<UInt32>>.alignment
        return (MemoryLayout<cthr_lock_t>.size + alignment - 1) / alignment * alignment
    }

    /// A lock whose word lives at `word`, in memory its owner allocated, initialized and keeps (and frees after the
    /// lock): a word that shares a cache line with the data it guards moves between cores together with it.
    init(at word: UnsafeMutablePointer<cthr_lock_t>) {
        self.word = word
        ownsWord = false
        companionWord = nil
    }

    deinit {
        if ownsWord {
            companionWord?.deinitialize(count: 1)
            word.deinitialize(count: 1)
            UnsafeMutableRawPointer(word).deallocate()
        }
    }

    @inline(__always)
    func lock() {
        if cthr_lock_fast_lock(word) { return }
        lockSlow()
    }

    @inline(never)
    private func lockSlow() {
        let code = cthr_lock_lock_slow(word, .max)
        if code != 0 { threadingFatal("RuntimeLock: lock() failed with \(errnoName(code))") }
    }

    @inline(__always)
    func unlock() {
        if cthr_lock_fast_unlock(word) { return }
        unlockSlow()
    }

    @inline(never)
    private func unlockSlow() {
        let code = cthr_lock_unlock_slow(word)
        if code != 0 { threadingFatal("RuntimeLock: unlock() failed with \(errnoName(code))") }
    }

    /// Whether the calling thread holds the lock (a load of the word).
    var isHeldByCurrentThread: Bool { cthr_lock_held_by_caller(word) }

    @inline(__always)
    func withLock<R>(_ body: () throws -> R) rethrows -> R {
        lock()
        defer { unlock() }
        return try body()
    }
}
