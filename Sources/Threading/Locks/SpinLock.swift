// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import CThreading

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A spin lock for very short critical sections: a waiting thread spins with `pause`, backs off, then yields.
///
/// Built on CThreading's test-and-test-and-set lock (`cthr_spin_t`), whose word holds the owner's kernel thread id,
/// as ``MutexLock``'s does: when uncontended, `lock()` is one inlined compare-exchange and `unlock()` one load
/// (is the word this thread's id?) and one release store, so the ownership checks cost nothing extra. A waiting
/// thread yields the processor after a bounded spin, so the lock stays usable when threads outnumber cores; still,
/// a thread preempted while holding it makes others burn CPU, and a spin lock is not fair (a releasing thread can
/// take it back at once), so prefer ``MutexLock`` unless measurements say otherwise.
///
/// ```swift
/// let spin = SpinLock(name: "counter")
/// var counter = 0  // guarded by `spin`
/// spin.withLock { counter += 1 }
/// ```
///
/// Traps (each message names the lock): `lock()` by the thread that holds it; `unlock()` by a thread that does
/// not hold it; deinitialization while held.
///
/// A reference type and `Sendable`: its state is the C lock word, changed only by atomic operations.
public final class SpinLock: DiagnosedLock, @unchecked Sendable {
    /// The name used in diagnostics, if any.
    public let name: String?

    @usableFromInline
    let spin: UnsafeMutablePointer<cthr_spin_t>
    let recorder = LockStatisticsRecorder()

    /// Creates a free spin lock.
    ///
    /// - Parameter name: A name for diagnostics and statistics.
    public init(name: String? = nil) {
        self.name = name
        self.spin = allocateLockState(cthr_spin_t())
        if name != nil { NamedLockRegistry.register(self, describe(), .spin(spin)) }
    }

    deinit {
        if name != nil { NamedLockRegistry.unregister(self) }
        requireFreeAtDeinit(owner: cthr_spin_owner(spin))
        UnsafeMutableRawPointer(spin).deallocate()
    }

    /// Acquires the lock, spinning (then yielding) while it is held.
    ///
    /// - Precondition: The calling thread does not hold the lock (traps: it would spin forever).
    /// - Complexity: One compare-exchange when the lock is free.
    ///
    /// The corresponding C function is `pthread_spin_lock` (here `cthr_spin_fast_lock`/`cthr_spin_lock`, with
    /// backoff).
    @inlinable
    public func lock() {
        if _fastPath(cthr_spin_fast_lock(spin)) { return }
        lockSlow()
    }

    /// Acquires the lock if it is free.
    ///
    /// - Returns: `true` when acquired, `false` when held (by another thread or the caller).
    ///
    /// The corresponding C function is `pthread_spin_trylock` (here `cthr_spin_trylock`).
    @inlinable
    public func tryLock() -> Bool {
        if _fastPath(cthr_spin_fast_lock(spin)) { return true }
        return tryLockSlow()
    }

    /// Releases the lock.
    ///
    /// - Precondition: The calling thread holds the lock (traps otherwise).
    /// - Complexity: One load and one release store.
    ///
    /// The corresponding C function is `pthread_spin_unlock` (here `cthr_spin_fast_unlock`/`cthr_spin_unlock`).
    @inlinable
    public func unlock() {
        if _fastPath(cthr_spin_fast_unlock(spin)) { return }
        unlockSlow()
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

    /// Whether contention statistics are being counted (off by default).
    ///
    /// Turning them on makes every acquisition take the slow path, which counts; turning them off restores the
    /// one-instruction fast path. Setting it briefly takes the lock (it may also be set while holding it).
    public var statisticsEnabled: Bool {
        get { recorder.isEnabled }
        set {
            // Only the owner may change the SLOW bit: take the lock (uncounted) unless this thread holds it.
            let alreadyHeld = cthr_spin_owner(spin) == currentThreadID
            if !alreadyHeld && !cthr_spin_fast_lock(spin) {
                requireStatisticsToggle(cthr_spin_lock(spin))
            }
            recorder.enabled.store(newValue, ordering: .relaxed)
            _ = cthr_spin_set_slow(spin, newValue)
            if !alreadyHeld { unlock() }
        }
    }

    /// The counters collected while ``statisticsEnabled`` was on.
    public var statistics: LockStatistics { recorder.snapshot }

    /// Sets every counter of ``statistics`` back to zero.
    public func resetStatistics() { recorder.reset() }

    static var typeName: String { "SpinLock" }

    @usableFromInline
    func lockSlow() {
        let code = acquireCounting(
            attempt: { cthr_spin_trylock(spin) },
            wait: {
                WaitRecording.recording(.lock, on: self) { cthr_spin_lock(spin) }
            }
        )
        switch code {
        case 0: return
        case EDEADLK: failHeldByCaller("lock()", "this would spin forever")
        default: failUnexpected("lock()", code)
        }
    }

    @usableFromInline
    func tryLockSlow() -> Bool {
        tryAcquireCounting(cthr_spin_trylock(spin))
    }

    @usableFromInline
    func unlockSlow() {
        let code = cthr_spin_unlock(spin)
        switch code {
        case 0: return
        case EPERM: failNotHeld("unlock()", owner: cthr_spin_owner(spin))
        default: failUnexpected("unlock()", code)
        }
    }
}
