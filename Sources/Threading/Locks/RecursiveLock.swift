// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import CThreading

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A mutual-exclusion lock that its owner may acquire again: each `lock()` needs a matching `unlock()`.
///
/// Built on CThreading's futex lock (`cthr_rlock_t`): the lock word holds the owner's kernel thread id, as in
/// ``MutexLock``, and the nesting depth is a plain field that only the owner touches, so no acquisition pays an
/// atomic operation beyond the lock's own: the first `lock()` is one inlined compare-exchange, a nested one the
/// failed compare-exchange (which reads the caller's own id) and an increment, a nested `unlock()` a load and a
/// decrement, the last `unlock()` ``MutexLock``'s. A contended `lock()` spins briefly and then sleeps on the futex,
/// exactly like ``MutexLock``. Use it where a critical section can call back into code that takes the same lock
/// (`NSRecursiveLock`, `@synchronized`); prefer ``MutexLock`` otherwise, which catches accidental reentrancy.
///
/// ```swift
/// let lock = RecursiveLock(name: "tree")
/// lock.withLock { lock.withLock { /* nested: fine */ } }
/// ```
///
/// Traps (each message names the lock), in every build: `unlock()` by a thread that does not hold it (another
/// thread's lock, or a free one); deinitialization while held; nesting deeper than 4,294,967,295 levels.
///
/// A reference type and `Sendable`: its state is the C lock word, changed only by atomic operations, and a depth
/// field that only the owning thread reads or writes.
public final class RecursiveLock: DiagnosedLock, @unchecked Sendable {
    /// The name used in diagnostics, if any.
    public let name: String?

    @usableFromInline
    let word: UnsafeMutablePointer<cthr_rlock_t>

    let recorder = LockStatisticsRecorder()

    /// Creates a free recursive lock.
    ///
    /// - Parameter name: A name for diagnostics and statistics.
    public init(name: String? = nil) {
        self.name = name
        self.word = allocateLockState(cthr_rlock_t())
        if name != nil { NamedLockRegistry.register(self, describe(), .futex(futexLock)) }
    }

    deinit {
        if name != nil { NamedLockRegistry.unregister(self) }
        requireFreeAtDeinit(owner: cthr_lock_owner(futexLock))
        UnsafeMutableRawPointer(word).deallocate()
    }

    /// Acquires the lock, or one more level of it if the calling thread already holds it.
    ///
    /// - Complexity: One compare-exchange when the lock is free or held by the caller.
    ///
    /// The corresponding C function is `pthread_mutex_lock` on a recursive mutex (here `cthr_rlock_fast_lock`).
    @inlinable
    public func lock() {
        if _fastPath(cthr_rlock_fast_lock(word)) { return }
        lockSlow()
    }

    /// Releases one level of the lock.
    ///
    /// - Precondition: The calling thread holds the lock (traps otherwise).
    ///
    /// The corresponding C function is `pthread_mutex_unlock`.
    @inlinable
    public func unlock() {
        if _fastPath(cthr_rlock_fast_unlock(word)) { return }
        unlockSlow()
    }

    /// Acquires the lock (or one more level of it) if that is possible without waiting.
    ///
    /// - Returns: `true` when acquired, `false` when another thread holds the lock.
    ///
    /// The corresponding C function is `pthread_mutex_trylock`.
    @inlinable
    public func tryLock() -> Bool {
        if _fastPath(cthr_rlock_fast_lock(word)) { return true }
        return tryLockSlow()
    }

    /// Acquires the lock (or one more level), waiting at most `timeout` on the monotonic clock.
    ///
    /// A zero or negative timeout has already expired but still takes an available lock; a huge one waits forever.
    ///
    /// - Parameter timeout: The longest time to wait.
    /// - Returns: `true` when acquired, `false` when the timeout expired first.
    ///
    /// The corresponding C function is `pthread_mutex_clocklock` with `CLOCK_MONOTONIC`.
    @inlinable
    public func lock(timeout: Duration) -> Bool {
        if _fastPath(cthr_rlock_fast_lock(word)) { return true }
        return lockSlow(deadline: monotonicDeadline(after: timeout))
    }

    /// Runs `body` while holding the lock (reentrant: `body` may take it again).
    ///
    /// - Parameter body: The critical section.
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
    /// Turning them on sends every acquisition to the slow path, which counts (each nested acquisition counts);
    /// turning them off restores the inlined fast path. Setting it briefly takes the lock (it may also be set while
    /// holding it).
    public var statisticsEnabled: Bool {
        get { recorder.isEnabled }
        set {
            // Only the owner may change the SLOW bit: take one level of the lock (uncounted) for the change.
            if !cthr_rlock_fast_lock(word) {
                requireStatisticsToggle(cthr_rlock_lock_slow(word, .max))
            }
            recorder.enabled.store(newValue, ordering: .relaxed)
            _ = cthr_lock_set_slow(futexLock, newValue)
            requireStatisticsToggle(cthr_rlock_unlock_slow(word), "unlocking")
        }
    }

    /// The counters collected while ``statisticsEnabled`` was on (each nested acquisition counts).
    public var statistics: LockStatistics { recorder.snapshot }

    /// Sets every counter of ``statistics`` back to zero.
    public func resetStatistics() { recorder.reset() }

    /// The futex lock inside `word` (its first field).
    var futexLock: UnsafeMutablePointer<cthr_lock_t> {
        UnsafeMutableRawPointer(word).assumingMemoryBound(to: cthr_lock_t.self)
    }

    /// How many levels of the lock the calling thread holds (0 when it does not hold it).
    var heldDepth: Int { Int(cthr_rlock_held_depth(word)) }

    static var typeName: String { "RecursiveLock" }

    @usableFromInline
    func lockSlow() {
        _ = lockSlow(deadline: .max)
    }

    @usableFromInline
    func lockSlow(deadline: UInt64) -> Bool {
        let code = acquireCounting(
            attempt: { cthr_rlock_trylock(word) },
            wait: {
                // Held by the caller (the fast path refused a flagged word): one more level, no wait.
                if cthr_lock_held_by_caller(futexLock) { return cthr_rlock_lock_slow(word, deadline) }
                return waitForFutexLock(futexLock, deadline: deadline)
            }
        )
        switch code {
        case 0: return true
        case ETIMEDOUT: return false
        default: fail(code, deadline == .max ? "lock()" : "lock(timeout:)")
        }
    }

    @usableFromInline
    func unlockSlow() {
        let code = cthr_rlock_unlock_slow(word)
        if code != 0 { fail(code, "unlock()") }
    }

    @usableFromInline
    func tryLockSlow() -> Bool {
        let code = cthr_rlock_trylock(word)
        switch code {
        case 0, EBUSY: return tryAcquireCounting(code)
        default: fail(code, "tryLock()")
        }
    }

    @inline(never)
    private func fail(_ code: CInt, _ operation: StaticString) -> Never {
        switch code {
        case EPERM: failNotHeld(operation, owner: cthr_lock_owner(futexLock))
        case EAGAIN: threadingFatal("\(describe()): \(operation): too many nested acquisitions (EAGAIN)")
        default: failUnexpected(operation, code)
        }
    }
}
