// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import CThreading
import Synchronization

/// A 32-bit word for atomics and futexes at a fixed heap address (it never moves, so the kernel may sleep on it).
///
/// The storage is a `Synchronization.Atomic<UInt32>` (the standard library's atomics, used by the whole pool),
/// allocated once; ``address`` hands the same bytes to `cthr_futex_wait`/`cthr_futex_wake`. The word owns that
/// storage, so it is `~Copyable` and frees it in `deinit`: it cannot be copied, nor freed twice. `@unchecked
/// Sendable`: every access is atomic.
struct FutexWord: ~Copyable, @unchecked Sendable {
    let pointer: UnsafeMutablePointer<Atomic<UInt32>>
    /// Whether `pointer` is this word's own allocation (else its owner's, see ``init(at:)``).
    private let ownsWord: Bool

    init(_ value: UInt32 = 0) {
        pointer = .allocate(capacity: 1)
        pointer.initialize(to: Atomic(value))
        ownsWord = true
    }

    /// The word at `pointer`, in memory its owner initialized and keeps for as long as this word is used (a
    /// ``RuntimeLock/companionWord``): nothing is freed when this word goes.
    init(at pointer: UnsafeMutablePointer<Atomic<UInt32>>) {
        self.pointer = pointer
        ownsWord = false
    }

    static func allocate(_ value: UInt32 = 0) -> FutexWord {
        FutexWord(value)
    }

    deinit {
        if ownsWord {
            pointer.deinitialize(count: 1)
            pointer.deallocate()
        }
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
