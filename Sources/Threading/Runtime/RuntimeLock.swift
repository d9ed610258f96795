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
/// One allocation: its object's tail holds the lock's word (and the companion word, ``make(companionWord:)``), so a
/// lock operation finds the word in the object it already reached (the header's pointer leads 16 bytes on, to the tail,
/// 32 bytes after the object's start: usually the same cache line), and an object that makes a lock makes one
/// allocation for it, not two (a plain one, from the allocator's per-thread cache: a group or an item is made per piece
/// of work). A ``make(at:)`` lock's word lives in its owner's memory instead (the tail is then empty).
///
/// Internal on purpose (the public lock types belong to the primitives). Misuse (unlocking a lock the thread does
/// not hold, relocking) traps. A reference (a value holding its object: a copy is the same lock). `@unchecked
/// Sendable`: the lock word is only touched through `cthr_lock_*`, whose operations are atomic, and the object's
/// header is written once, when the lock is made (a `ManagedBuffer` subclass cannot be `Sendable` itself).
struct RuntimeLock: @unchecked Sendable {
    /// The lock's object: its header says where the words are; its tail holds them (raw 8-byte units, bound to their
    /// types when the lock is made), except for ``make(at:)``.
    final class Storage: ManagedBuffer<Words, UInt64> {}

    private let storage: Storage

    /// Where the lock's words are.
    struct Words {
        let lock: UnsafeMutablePointer<cthr_lock_t>
        let companion: UnsafeMutablePointer<Atomic<UInt32>>?
    }

    /// The tail's units for the lock's word.
    private static var lockUnits: Int {
        (MemoryLayout<cthr_lock_t>.stride + MemoryLayout<UInt64>.stride - 1) / MemoryLayout<UInt64>.stride
    }

    /// A free lock.
    static func make() -> RuntimeLock { make(companion: nil) }

    /// A free lock whose allocation also holds a futex word (``companionWord``, initially `value`), beside the
    /// lock's word: for an object whose lock guards what threads sleep on (a ``WorkGroup``'s count, a
    /// ``WorkItem``'s end), which the wait and the wake-up that ends it touch together. The owner reaches the word
    /// through ``FutexWord/init(at:)`` and must not use it after the lock is gone (keep both in the same object).
    static func make(companionWord value: UInt32) -> RuntimeLock { make(companion: value) }

    /// A free lock in the tail, followed by a companion word initially `companion` unless that is nil.
    private static func make(companion: UInt32?) -> RuntimeLock {
        RuntimeLock(
            Storage.create(minimumCapacity: lockUnits + (companion == nil ? 0 : 1)) { buffer in
                buffer.withUnsafeMutablePointerToElements { tail in
                    let raw = UnsafeMutableRawPointer(tail)
                    let word = raw.initializeMemory(as: cthr_lock_t.self, repeating: cthr_lock_t(), count: 1)
                    guard let companion else { return Words(lock: word, companion: nil) }
                    let companionWord = (raw + lockUnits * MemoryLayout<UInt64>.stride)
                        .bindMemory(to: Atomic<UInt32>.self, capacity: 1)
                    companionWord.initialize(to: Atomic(companion))
                    return Words(lock: word, companion: companionWord)
                }
            }
        )
    }

    /// A lock whose word lives at `word`, in memory its owner allocated, initialized and keeps (and frees after the
    /// lock): a word that shares a cache line with the data it guards moves between cores together with it.
    static func make(at word: UnsafeMutablePointer<cthr_lock_t>) -> RuntimeLock {
        RuntimeLock(Storage.create(minimumCapacity: 0) { _ in Words(lock: word, companion: nil) })
    }

    /// `buffer` is made by `Storage.create`, so it is a `Storage`.
    private init(_ buffer: ManagedBuffer<Words, UInt64>) {
        storage = unsafeDowncast(buffer, to: Storage.self)
    }

    // Nothing to deinitialize when the object goes: the tail's words are of trivial types (and the lock is free
    // then); a `make(at:)` word is its owner's.

    /// The lock's word.
    private var word: UnsafeMutablePointer<cthr_lock_t> {
        // Through the header's pointer: `header` is a stored `var` of a class, whose reads are checked for
        // exclusivity at run time.
        @inline(__always) get { storage.withUnsafeMutablePointerToHeader { $0.pointee.lock } }
    }

    /// The futex word made beside the lock's word by ``make(companionWord:)``, else nil.
    var companionWord: UnsafeMutablePointer<Atomic<UInt32>>? {
        storage.withUnsafeMutablePointerToHeader { $0.pointee.companion }
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
