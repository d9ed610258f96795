// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import CThreading
import Synchronization

/// The queue engine's own lock: a futex word (Drepper's three-state mutex) that spins briefly before sleeping.
///
/// The engine's critical sections are a handful of instructions (append to or pop from a ring), held by producers
/// and drainers that run at the same time; a plain `pthread_mutex_t` (`CTHR_MUTEX_NORMAL`) sleeps on the first
/// conflict, which made every async enqueue a system call under contention. States: 0 free, 1 held, 2 held with
/// sleepers. Internal on purpose (the public lock types belong to the primitives). `@unchecked Sendable`: the word
/// is atomic.
final class EngineLock: @unchecked Sendable {
    private let word = EngineWord.allocate()

    init() {}

    @inline(__always)
    func lock() {
        if word.weakCompareExchange(0, 1).exchanged { return }
        lockSlow()
    }

    @inline(never)
    private func lockSlow() {
        for round in 0..<64 {
            let state = word.loadRelaxed()
            if state == 0 && word.weakCompareExchange(0, 1).exchanged { return }
            if state == 2 { break }
            if round >= 48 { _ = cthr_thread_yield() }
        }
        while word.exchange(2) != 0 {
            word.wait(expected: 2)
        }
    }

    @inline(__always)
    func unlock() {
        if word.exchange(0) == 2 { word.wake(1) }
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
/// The storage is a `Synchronization.Atomic<UInt32>` (the standard library's atomics, used by the whole engine),
/// allocated once; ``address`` hands the same bytes to `cthr_futex_wait`/`cthr_futex_wake`. The word owns that
/// storage, so it is `~Copyable` and frees it in `deinit`: it cannot be copied, nor freed twice. `@unchecked
/// Sendable`: every access is atomic.
struct EngineWord: ~Copyable, @unchecked Sendable {
    let pointer: UnsafeMutablePointer<Atomic<UInt32>>

    init(_ value: UInt32 = 0) {
        pointer = .allocate(capacity: 1)
        pointer.initialize(to: Atomic(value))
    }

    static func allocate(_ value: UInt32 = 0) -> EngineWord {
        EngineWord(value)
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

extension EngineWord {
    /// Sleeps until the word holds a nonzero value or `deadline` (CLOCK_MONOTONIC ns, `UInt64.max` = forever)
    /// passed, telling the engine that the calling thread blocks (so that a pool worker is replaced meanwhile).
    /// Returns whether the word is nonzero.
    func blockingWaitUntilNonzero(deadline: UInt64) -> Bool {
        let context = EngineThread.current
        Engine.willBlock(context)
        defer { Engine.didUnblock(context) }
        while load() == 0 {
            if !wait(expected: 0, deadline: deadline) || cthr_clock_now_ns() >= deadline {
                return load() != 0
            }
        }
        return true
    }
}
