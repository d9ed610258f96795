// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import CThreading
import Synchronization

/// The runtime's own lock: the C futex lock `cthr_lock_t` (the lock under ``MutexLock``), on the heap.
///
/// The pool's critical sections are a handful of instructions (append to or pop from a ring), held by producers
/// and drainers that run at the same time; a plain `pthread_mutex_t` (`CTHR_MUTEX_NORMAL`) sleeps on the first
/// conflict, which made every async enqueue a system call under contention. `cthr_lock_t` spins briefly before it
/// sleeps, wakes one sleeper at a time and bounds starvation (see `cthr_lock.h`); its uncontended lock and unlock
/// are one compare-exchange each, inlined from the header. One futex lock serves the whole library.
///
/// Measured against the Swift three-state futex mutex it replaced (`bench queues --threads 1,4`, release, the two
/// binaries run interleaved six times each on the 2-core CI box under load; medians of SerialQueue Mops/s, old →
/// new): sync 1 thread 26.8 → 25.0, sync 4 threads 22.6 → 25.1, async 1 thread 4.6 → 6.0, async 4 threads
/// 5.6 → 5.3, ping-pong 3.1 → 3.3. Every difference is inside the run-to-run spread (sync 1 thread ranged 7 to 40
/// on the same binary), so the C lock is not slower on the pool and is kept.
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

    init() {
        word = .allocate(capacity: 1)
        word.initialize(to: cthr_lock_t())
        ownsWord = true
    }

    /// A lock whose word lives at `word`, in memory its owner allocated, initialized and keeps (and frees after the
    /// lock): a word that shares a cache line with the data it guards moves between cores together with it.
    init(at word: UnsafeMutablePointer<cthr_lock_t>) {
        self.word = word
        ownsWord = false
    }

    deinit {
        if ownsWord {
            word.deinitialize(count: 1)
            word.deallocate()
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

    @inline(__always)
    func withLock<R>(_ body: () throws -> R) rethrows -> R {
        lock()
        defer { unlock() }
        return try body()
    }
}

/// A 32-bit word for atomics and futexes at a fixed heap address (it never moves, so the kernel may sleep on it).
///
/// The storage is a `Synchronization.Atomic<UInt32>` (the standard library's atomics, used by the whole pool),
/// allocated once; ``address`` hands the same bytes to `cthr_futex_wait`/`cthr_futex_wake`. The word owns that
/// storage, so it is `~Copyable` and frees it in `deinit`: it cannot be copied, nor freed twice. `@unchecked
/// Sendable`: every access is atomic.
struct FutexWord: ~Copyable, @unchecked Sendable {
    let pointer: UnsafeMutablePointer<Atomic<UInt32>>

    init(_ value: UInt32 = 0) {
        pointer = .allocate(capacity: 1)
        pointer.initialize(to: Atomic(value))
    }

    static func allocate(_ value: UInt32 = 0) -> FutexWord {
        FutexWord(value)
    }

    deinit {
        pointer.deinitialize(count: 1)
        pointer.deallocate()
    }

    @inline(__always)
    var address: UnsafeMutablePointer<UInt32> {
        UnsafeMutableRawPointer(pointer).assumingMemoryBound(to: UInt32.self)
    }

    @inline(__always)
    func load() -> UInt32 {
        pointer.pointee.load(ordering: .acquiring)
    }

    @inline(__always)
    func loadRelaxed() -> UInt32 {
        pointer.pointee.load(ordering: .relaxed)
    }

    @inline(__always)
    func store(_ value: UInt32) {
        pointer.pointee.store(value, ordering: .releasing)
    }

    @inline(__always)
    func storeRelaxed(_ value: UInt32) {
        pointer.pointee.store(value, ordering: .relaxed)
    }

    @inline(__always)
    func compareExchange(_ expected: UInt32, _ desired: UInt32) -> (exchanged: Bool, original: UInt32) {
        pointer.pointee.compareExchange(
            expected: expected,
            desired: desired,
            successOrdering: .acquiringAndReleasing,
            failureOrdering: .acquiring
        )
    }

    @inline(__always)
    func weakCompareExchange(_ expected: UInt32, _ desired: UInt32) -> (exchanged: Bool, original: UInt32) {
        pointer.pointee.weakCompareExchange(
            expected: expected,
            desired: desired,
            successOrdering: .acquiringAndReleasing,
            failureOrdering: .acquiring
        )
    }

    @inline(__always)
    @discardableResult
    func bitOr(_ bits: UInt32) -> UInt32 {
        pointer.pointee.bitwiseOr(bits, ordering: .acquiringAndReleasing).oldValue
    }

    @inline(__always)
    @discardableResult
    func bitAnd(_ bits: UInt32) -> UInt32 {
        pointer.pointee.bitwiseAnd(bits, ordering: .acquiringAndReleasing).oldValue
    }

    @inline(__always)
    @discardableResult
    func add(_ value: UInt32) -> UInt32 {
        pointer.pointee.add(value, ordering: .acquiringAndReleasing).oldValue
    }

    @inline(__always)
    @discardableResult
    func subtract(_ value: UInt32) -> UInt32 {
        pointer.pointee.subtract(value, ordering: .acquiringAndReleasing).oldValue
    }

    @inline(__always)
    func exchange(_ value: UInt32) -> UInt32 {
        pointer.pointee.exchange(value, ordering: .acquiringAndReleasing)
    }

    /// Sleeps while the word equals `expected`, until woken or `deadline` (CLOCK_MONOTONIC ns, `UInt64.max` =
    /// forever). Returns false only on timeout.
    @inline(__always)
    @discardableResult
    func wait(expected: UInt32, deadline: UInt64 = .max) -> Bool {
        cthr_futex_wait(address, expected, deadline) != ETIMEDOUT_VALUE
    }

    @inline(__always)
    func wake(_ count: Int32 = 1) {
        _ = cthr_futex_wake(address, count, nil)
    }
}

#if canImport(Glibc)
import Glibc
let ETIMEDOUT_VALUE: Int32 = ETIMEDOUT
#elseif canImport(Musl)
import Musl
let ETIMEDOUT_VALUE: Int32 = ETIMEDOUT
#endif

/// A flag on a futex word that threads can sleep on until it is set (an item's or a job's end, a job queue gone
/// idle): bit 0 is the flag, bit 1 says that a thread sleeps (or is about to) until it is set, so that setting it
/// makes the wake system call only when one does. A completion with nobody blocked in a wait costs no system call.
extension FutexWord {
    /// Bit 0: the flag.
    static let flagSet: UInt32 = 1
    /// Bit 1: a thread sleeps, or is about to, until the flag is set.
    static let flagSleeper: UInt32 = 2

    /// Whether the flag is set (acquire: what the setter did before ``setFlag()`` is visible).
    @inline(__always)
    var isFlagSet: Bool { load() & FutexWord.flagSet != 0 }

    /// Sets the flag; whether a thread sleeps on it. The caller then wakes them with `wake(Int32.max)`, possibly
    /// after giving back a lock under which it set the flag.
    @inline(__always)
    func setFlagFindingSleepers() -> Bool {
        exchange(FutexWord.flagSet) & FutexWord.flagSleeper != 0
    }

    /// Sets the flag and wakes every thread sleeping on it; no system call when none does.
    @inline(__always)
    func setFlag() {
        if setFlagFindingSleepers() { wake(Int32.max) }
    }

    /// Clears the flag (the thing it stands for is pending again). Nobody sleeps on a set flag, so there is no
    /// sleeper bit to keep.
    @inline(__always)
    func clearFlag() { store(0) }

    /// Sleeps until the flag is set or `deadline` (CLOCK_MONOTONIC ns, `UInt64.max` = forever) passed, telling the
    /// blocking hook (``BlockingHook``) that the calling thread blocks (so that a pool worker is replaced meanwhile).
    /// Returns whether the flag is set.
    func blockingWaitUntilFlagSet(deadline: UInt64) -> Bool {
        BlockingHook.willBlock()
        defer { BlockingHook.didUnblock() }
        return sleepUntil(marking: FutexWord.flagSleeper, deadline: deadline) { $0 & FutexWord.flagSet != 0 }
    }

    /// Sleeps until `isDone` holds for the word's value or `deadline` (CLOCK_MONOTONIC ns, `UInt64.max` = forever)
    /// passed; whether it is done. Before each sleep it sets `sleeperBit` in the word (compare-exchange), so that the
    /// side that makes the word done wakes only when that bit was set, and clears it then (a flag's ``setFlag()``, a
    /// ``WorkGroup``'s last `leave()`). The caller tells the blocking hook.
    func sleepUntil(marking sleeperBit: UInt32, deadline: UInt64, _ isDone: (UInt32) -> Bool) -> Bool {
        var value = load()
        while !isDone(value) {
            if value & sleeperBit == 0 {
                let (exchanged, original) = compareExchange(value, value | sleeperBit)
                if !exchanged {
                    value = original
                    continue
                }
                value |= sleeperBit
            }
            if !wait(expected: value, deadline: deadline) || cthr_clock_now_ns() >= deadline { return isDone(load()) }
            value = load()
        }
        return true
    }
}
