// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import CThreading

/// What the futex lock under ``MutexLock``, ``RecursiveLock``, ``LockedValue`` and the runtime's own locks did on
/// its contended paths, counted per thread while the process counts.
///
/// These are the protocol's own costs, the figures that carry from a small machine to a large one: atomic
/// read-modify-writes on the lock's cache line per contended acquisition, futex system calls, futex waits that
/// returned at once, time spent spinning, fair hand-offs. `bench locks --counters` prints them per strategy and
/// thread count. Counting is process-wide and off by default; while off, the contended paths pay one relaxed load
/// of a flag and the fast paths nothing. Each thread counts into its own storage, so counting adds no shared cache
/// line: read a thread's figures from that thread (``currentThread``) and add them up.
///
/// Unlike ``LockStatistics`` (per lock, opt-in per lock, for production), these counters are for measuring the
/// lock itself. A value type of integers, so it is `Sendable`.
public struct LockProtocolCounters: Sendable, Hashable {
    /// Acquisitions that took the contended path (the lock was held, or reserved, when the thread arrived).
    public var contendedAcquisitions: UInt64
    /// Atomic read-modify-writes on the lock's words made for those acquisitions and for the wake-ups they caused,
    /// failed compare-exchanges included; the release counts one, and so does a fast path's compare-exchange that
    /// failed (the fast path reads the word first, so a thread that finds the lock held makes none).
    public var readModifyWrites: UInt64
    /// Futex waits (a thread about to sleep on the lock).
    public var futexWaits: UInt64
    /// Futex waits that returned at once because the value had already changed (`EAGAIN`).
    public var futexWaitsReturnedAtOnce: UInt64
    /// Futex wake calls.
    public var futexWakes: UInt64
    /// CPU time spent spinning for a lock, in nanoseconds (time a spinner spent descheduled in a yield is not
    /// spinning, and is not counted).
    public var spinNanoseconds: UInt64
    /// Fair hand-offs received (the lock passed directly to a thread that had waited too long).
    public var handoffs: UInt64

    /// Creates counters from their fields (all zero by default).
    ///
    /// - Parameters:
    ///   - contendedAcquisitions: Acquisitions that took the contended path.
    ///   - readModifyWrites: Atomic read-modify-writes for them.
    ///   - futexWaits: Futex waits.
    ///   - futexWaitsReturnedAtOnce: Futex waits that returned at once.
    ///   - futexWakes: Futex wake calls.
    ///   - spinNanoseconds: CPU time spent spinning.
    ///   - handoffs: Fair hand-offs received.
    public init(
        contendedAcquisitions: UInt64 = 0,
        readModifyWrites: UInt64 = 0,
        futexWaits: UInt64 = 0,
        futexWaitsReturnedAtOnce: UInt64 = 0,
        futexWakes: UInt64 = 0,
        spinNanoseconds: UInt64 = 0,
        handoffs: UInt64 = 0
    ) {
        self.contendedAcquisitions = contendedAcquisitions
        self.readModifyWrites = readModifyWrites
        self.futexWaits = futexWaits
        self.futexWaitsReturnedAtOnce = futexWaitsReturnedAtOnce
        self.futexWakes = futexWakes
        self.spinNanoseconds = spinNanoseconds
        self.handoffs = handoffs
    }

    /// Whether the process counts (off by default; `THREADING_LOCK_COUNTERS=1` in the environment turns it on before
    /// `main`). Turning it on or off is immediate for every thread; each thread's counters are kept across toggles.
    ///
    /// The corresponding C functions are `cthr_lock_set_counting` and `cthr_lock_counting`.
    public static var isCounting: Bool {
        get { cthr_lock_counting() }
        set { cthr_lock_set_counting(newValue) }
    }

    /// The calling thread's counters since it started or last called ``resetCurrentThread()``.
    ///
    /// The corresponding C function is `cthr_lock_thread_counters`.
    public static var currentThread: LockProtocolCounters {
        var raw = cthr_lock_counters_t()
        cthr_lock_thread_counters(&raw)
        return LockProtocolCounters(
            contendedAcquisitions: raw.contended,
            readModifyWrites: raw.rmw,
            futexWaits: raw.futex_waits,
            futexWaitsReturnedAtOnce: raw.futex_eagain,
            futexWakes: raw.futex_wakes,
            spinNanoseconds: raw.spin_ns,
            handoffs: raw.handoffs
        )
    }

    /// Sets the calling thread's counters back to zero.
    ///
    /// The corresponding C function is `cthr_lock_reset_thread_counters`.
    public static func resetCurrentThread() { cthr_lock_reset_thread_counters() }

    /// The sum of two threads' (or two runs') counters, field by field.
    ///
    /// - Parameters:
    ///   - lhs: One set of counters.
    ///   - rhs: The other.
    /// - Returns: Their field-by-field sum (wrapping).
    public static func + (lhs: LockProtocolCounters, rhs: LockProtocolCounters) -> LockProtocolCounters {
        LockProtocolCounters(
            contendedAcquisitions: lhs.contendedAcquisitions &+ rhs.contendedAcquisitions,
            readModifyWrites: lhs.readModifyWrites &+ rhs.readModifyWrites,
            futexWaits: lhs.futexWaits &+ rhs.futexWaits,
            futexWaitsReturnedAtOnce: lhs.futexWaitsReturnedAtOnce &+ rhs.futexWaitsReturnedAtOnce,
            futexWakes: lhs.futexWakes &+ rhs.futexWakes,
            spinNanoseconds: lhs.spinNanoseconds &+ rhs.spinNanoseconds,
            handoffs: lhs.handoffs &+ rhs.handoffs
        )
    }
}
