// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import CThreading
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A spin lock for very short critical sections: a waiting thread spins with `pause`, backs off, then yields.
///
/// Built on CThreading's test-and-test-and-set lock (`cthr_spin_t`), which yields the processor after a bounded
/// spin, so it stays usable when threads outnumber cores; still, a thread preempted while holding it makes others
/// burn CPU, so prefer ``MutexLock`` unless measurements say otherwise. The owner's thread id is recorded next to
/// the lock word (relaxed stores) so misuse is diagnosed.
///
/// ```swift
/// let spin = SpinLock(name: "counter")
/// spin.withLock { counter += 1 }
/// ```
///
/// Traps (each message names the lock): `lock()` by the thread that holds it; `unlock()` by a thread that does
/// not hold it; deinitialization while held.
///
/// A reference type and `Sendable`: its state is the C lock word and an `Atomic` owner id.
public final class SpinLock: @unchecked Sendable {
    /// The name used in diagnostics, if any.
    public let name: String?

    let spin: UnsafeMutablePointer<cthr_spin_t>
    let owner = Atomic<UInt32>(0)
    let recorder = LockStatisticsRecorder()

    /// Creates a free spin lock.
    ///
    /// - Parameter name: A name for diagnostics and statistics.
    public init(name: String? = nil) {
        self.name = name
        self.spin = .allocate(capacity: 1)
        spin.initialize(to: cthr_spin_t(state: 0))
    }

    deinit {
        let holder = owner.load(ordering: .relaxed)
        require(holder == 0, "\(describe()): deinitialized while held by thread \(holder)")
        spin.deallocate()
    }

    /// Acquires the lock, spinning (then yielding) while it is held.
    ///
    /// - Precondition: The calling thread does not hold the lock (traps: it would spin forever).
    ///
    /// The corresponding C function is `cthr_spin_lock` (like `pthread_spin_lock`, with backoff).
    public func lock() {
        let me = currentThreadID
        if cthr_spin_trylock(spin) == 0 {
            if recorder.isEnabled { recorder.recordUncontended() }
        } else {
            require(
                owner.load(ordering: .relaxed) != me,
                "\(describe()): lock() on thread \(me), which already holds it (this would spin forever)"
            )
            let start = recorder.isEnabled ? cthr_clock_now_ns() : 0
            _ = cthr_spin_lock(spin)
            if start != 0 { recorder.recordContended(since: start) }
        }
        owner.store(me, ordering: .relaxed)
    }

    /// Acquires the lock if it is free.
    ///
    /// - Returns: `true` when acquired, `false` when held (by another thread or the caller).
    ///
    /// The corresponding C function is `cthr_spin_trylock`.
    public func tryLock() -> Bool {
        guard cthr_spin_trylock(spin) == 0 else { return false }
        owner.store(currentThreadID, ordering: .relaxed)
        if recorder.isEnabled { recorder.recordUncontended() }
        return true
    }

    /// Releases the lock.
    ///
    /// - Precondition: The calling thread holds the lock (traps otherwise).
    ///
    /// The corresponding C function is `cthr_spin_unlock`.
    public func unlock() {
        let me = currentThreadID
        let holder = owner.load(ordering: .relaxed)
        require(
            holder == me,
            "\(describe()): unlock() on thread \(me), which does not hold it ("
                + (holder == 0 ? "it is not locked)" : "it is held by thread \(holder))")
        )
        owner.store(0, ordering: .relaxed)
        let code = cthr_spin_unlock(spin)
        require(code == 0, "\(describe()): unlock() failed with \(errnoName(code))")
    }

    /// Runs `body` while holding the lock.
    ///
    /// - Parameter body: The critical section; keep it short.
    /// - Returns: What `body` returns.
    /// - Throws: What `body` throws (the lock is released either way).
    @inlinable
    public func withLock<Result, Failure: Error>(_ body: () throws(Failure) -> Result) throws(Failure) -> Result {
        lock()
        defer { unlock() }
        return try body()
    }

    /// Whether contention statistics are being counted (off by default; a flag checked on each acquisition).
    public var statisticsEnabled: Bool {
        get { recorder.isEnabled }
        set { recorder.enabled.store(newValue, ordering: .relaxed) }
    }

    /// The counters collected while ``statisticsEnabled`` was on.
    public var statistics: LockStatistics { recorder.snapshot }

    /// Sets every counter of ``statistics`` back to zero.
    public func resetStatistics() { recorder.reset() }

    func describe() -> String { lockDescription("SpinLock", name, self) }
}
