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
/// Built on a `pthread_mutex_t` of kind `PTHREAD_MUTEX_RECURSIVE`. Use it where a critical section can call back
/// into code that takes the same lock (`NSRecursiveLock`, `@synchronized`); prefer ``MutexLock`` otherwise, which
/// is faster and catches accidental reentrancy.
///
/// ```swift
/// let lock = RecursiveLock(name: "tree")
/// lock.withLock { lock.withLock { /* nested: fine */ } }
/// ```
///
/// Traps (each message names the lock): `unlock()` by a thread that does not hold it; deinitialization while
/// held; nesting deeper than the system allows.
///
/// A reference type and `Sendable`: its state is the pthread mutex, which synchronizes itself.
public final class RecursiveLock: @unchecked Sendable {
    /// The name used in diagnostics, if any.
    public let name: String?

    let mutex: UnsafeMutablePointer<cthr_mutex_t>
    let recorder = LockStatisticsRecorder()

    /// Creates a free recursive lock.
    ///
    /// - Parameter name: A name for diagnostics and statistics.
    ///
    /// The corresponding C function is `pthread_mutex_init` with `PTHREAD_MUTEX_RECURSIVE`; it cannot fail for
    /// this kind on Linux (a failure traps).
    public init(name: String? = nil) {
        self.name = name
        self.mutex = .allocate(capacity: 1)
        let code = cthr_mutex_init(mutex, Int32(CTHR_MUTEX_RECURSIVE.rawValue))
        require(code == 0, "RecursiveLock: pthread_mutex_init failed with \(errnoName(code))")
    }

    deinit {
        let code = cthr_mutex_destroy(mutex)
        require(code != EBUSY, "\(describe()): deinitialized while held (pthread_mutex_destroy returned EBUSY)")
        mutex.deallocate()
    }

    /// Acquires the lock, or one more level of it if the calling thread already holds it.
    ///
    /// The corresponding C function is `pthread_mutex_lock`.
    public func lock() {
        let code =
            recorder.isEnabled
            ? recorder.acquire(attempt: { cthr_mutex_trylock(mutex) }, wait: { cthr_mutex_lock(mutex) })
            : cthr_mutex_lock(mutex)
        check(code, "lock()")
    }

    /// Releases one level of the lock.
    ///
    /// - Precondition: The calling thread holds the lock (traps otherwise).
    ///
    /// The corresponding C function is `pthread_mutex_unlock`.
    public func unlock() {
        check(cthr_mutex_unlock(mutex), "unlock()")
    }

    /// Acquires the lock (or one more level of it) if that is possible without waiting.
    ///
    /// - Returns: `true` when acquired, `false` when another thread holds the lock.
    ///
    /// The corresponding C function is `pthread_mutex_trylock`.
    public func tryLock() -> Bool {
        let code = cthr_mutex_trylock(mutex)
        if code == 0, recorder.isEnabled { recorder.recordUncontended() }
        if code == EAGAIN { check(code, "tryLock()") }
        return code == 0
    }

    /// Acquires the lock (or one more level), waiting at most `timeout` on the monotonic clock.
    ///
    /// A zero or negative timeout has already expired but still takes an available lock; a huge one waits forever.
    ///
    /// - Parameter timeout: The longest time to wait.
    /// - Returns: `true` when acquired, `false` when the timeout expired first.
    ///
    /// The corresponding C function is `pthread_mutex_clocklock` with `CLOCK_MONOTONIC`.
    public func lock(timeout: Duration) -> Bool {
        let deadline = monotonicDeadline(after: timeout)
        let code =
            recorder.isEnabled
            ? recorder.acquire(attempt: { cthr_mutex_trylock(mutex) }, wait: { cthr_mutex_timedlock(mutex, deadline) })
            : cthr_mutex_timedlock(mutex, deadline)
        if code == ETIMEDOUT { return false }
        check(code, "lock(timeout:)")
        return true
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

    /// Whether contention statistics are being counted (off by default; a flag checked before each acquisition).
    public var statisticsEnabled: Bool {
        get { recorder.isEnabled }
        set { recorder.enabled.store(newValue, ordering: .relaxed) }
    }

    /// The counters collected while ``statisticsEnabled`` was on (each nested acquisition counts).
    public var statistics: LockStatistics { recorder.snapshot }

    /// Sets every counter of ``statistics`` back to zero.
    public func resetStatistics() { recorder.reset() }

    func describe() -> String { lockDescription("RecursiveLock", name, self) }

    /// Traps unless `code` is 0 (the test is inlined; the message is built only on failure).
    @inline(__always)
    private func check(_ code: CInt, _ operation: StaticString) {
        if _slowPath(code != 0) { fail(code, operation) }
    }

    @inline(never)
    private func fail(_ code: CInt, _ operation: StaticString) -> Never {
        switch code {
        case EPERM:
            threadingFatal("\(describe()): \(operation) on thread \(currentThreadID), which does not hold it")
        case EAGAIN:
            threadingFatal("\(describe()): \(operation): too many nested acquisitions (EAGAIN)")
        default:
            threadingFatal("\(describe()): \(operation) failed with \(errnoName(code))")
        }
    }
}
