// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import CThreading
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A reader-writer lock: many readers at once, or one writer.
///
/// Built on `pthread_rwlock_t`. By default readers are preferred (glibc's default: a stream of readers can starve a
/// writer); `preferWriters: true` makes a waiting writer block new readers
/// (`PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP`), so a thread must then never take a read hold it already holds.
/// The writer's thread id is recorded (relaxed atomic) and each thread's read holds are tracked in a small
/// thread-local table (no shared counter, so readers on different cores still write nothing in common) to diagnose
/// misuse in every build.
///
/// ```swift
/// let rw = ReadWriteLock(name: "routes")
/// let route = rw.withReadLock { table[path] }
/// rw.withWriteLock { table[path] = handler }
/// ```
///
/// Traps (each message names the lock), in release builds too: a write or read acquisition by the thread holding
/// the write hold; a write acquisition by a thread holding a read hold (an upgrade, which would wait for itself;
/// `tryWriteLock()` returns `false` instead); `unlock()` by a thread other than the writer while a writer holds it;
/// `unlock()` by a thread that holds neither a read nor the write hold; deinitialization while held.
///
/// A reference type and `Sendable`: its state is the pthread lock and an `Atomic` writer id.
public final class ReadWriteLock: @unchecked Sendable {
    /// The name used in diagnostics, if any.
    public let name: String?

    /// Whether a waiting writer blocks new readers.
    public let prefersWriters: Bool

    let rwlock: UnsafeMutablePointer<cthr_rwlock_t>
    let writer = Atomic<UInt32>(0)
    let recorder = LockStatisticsRecorder()

    /// Creates a free reader-writer lock.
    ///
    /// - Parameters:
    ///   - name: A name for diagnostics and statistics.
    ///   - preferWriters: Whether a waiting writer blocks new readers (default `false`, readers preferred).
    ///
    /// The corresponding C function is `pthread_rwlock_init`; it cannot fail on Linux (a failure traps).
    public init(name: String? = nil, preferWriters: Bool = false) {
        self.name = name
        self.prefersWriters = preferWriters
        self.rwlock = .allocate(capacity: 1)
        let kind = preferWriters ? CTHR_RWLOCK_PREFER_WRITER : CTHR_RWLOCK_PREFER_READER
        let code = cthr_rwlock_init(rwlock, Int32(kind.rawValue))
        require(code == 0, "ReadWriteLock: pthread_rwlock_init failed with \(errnoName(code))")
    }

    deinit {
        let code = cthr_rwlock_destroy(rwlock)
        require(code != EBUSY, "\(describe()): deinitialized while held (pthread_rwlock_destroy returned EBUSY)")
        rwlock.deallocate()
    }

    /// Takes a shared (read) hold, waiting while a writer holds the lock.
    ///
    /// - Precondition: The calling thread does not hold the write hold (traps).
    ///
    /// The corresponding C function is `pthread_rwlock_rdlock`.
    public func readLock() {
        checkNotWriter("readLock()")
        let code =
            recorder.isEnabled
            ? recorder.acquire(attempt: { cthr_rwlock_tryrdlock(rwlock) }, wait: { cthr_rwlock_rdlock(rwlock) })
            : cthr_rwlock_rdlock(rwlock)
        check(code, "readLock()")
    }

    /// Takes the exclusive (write) hold, waiting while anyone holds the lock.
    ///
    /// - Precondition: The calling thread does not hold the write hold (traps).
    ///
    /// The corresponding C function is `pthread_rwlock_wrlock`.
    public func writeLock() {
        checkNotWriter("writeLock()")
        let code =
            recorder.isEnabled
            ? recorder.acquire(attempt: { cthr_rwlock_trywrlock(rwlock) }, wait: { cthr_rwlock_wrlock(rwlock) })
            : cthr_rwlock_wrlock(rwlock)
        check(code, "writeLock()")
        writer.store(currentThreadID, ordering: .relaxed)
    }

    /// Takes a read hold if that is possible without waiting.
    ///
    /// - Returns: `true` when acquired; `false` when a writer holds the lock (or, preferring writers, waits for it).
    ///
    /// The corresponding C function is `pthread_rwlock_tryrdlock`.
    public func tryReadLock() -> Bool {
        let code = cthr_rwlock_tryrdlock(rwlock)
        guard code == 0 else { return false }
        if recorder.isEnabled { recorder.recordUncontended() }
        return true
    }

    /// Takes the write hold if the lock is free.
    ///
    /// - Returns: `true` when acquired, `false` when anyone holds the lock.
    ///
    /// The corresponding C function is `pthread_rwlock_trywrlock`.
    public func tryWriteLock() -> Bool {
        guard cthr_rwlock_trywrlock(rwlock) == 0 else { return false }
        writer.store(currentThreadID, ordering: .relaxed)
        if recorder.isEnabled { recorder.recordUncontended() }
        return true
    }

    /// Takes a read hold, waiting at most `timeout` on the monotonic clock.
    ///
    /// A zero or negative timeout has already expired but still takes an available hold; a huge one waits forever.
    ///
    /// - Parameter timeout: The longest time to wait.
    /// - Returns: `true` when acquired, `false` when the timeout expired first.
    ///
    /// The corresponding C function is `pthread_rwlock_clockrdlock` with `CLOCK_MONOTONIC`.
    public func readLock(timeout: Duration) -> Bool {
        checkNotWriter("readLock(timeout:)")
        let deadline = monotonicDeadline(after: timeout)
        let code =
            recorder.isEnabled
            ? recorder.acquire(
                attempt: { cthr_rwlock_tryrdlock(rwlock) },
                wait: { cthr_rwlock_timedrdlock(rwlock, deadline) }
            )
            : cthr_rwlock_timedrdlock(rwlock, deadline)
        if code == ETIMEDOUT { return false }
        check(code, "readLock(timeout:)")
        return true
    }

    /// Takes the write hold, waiting at most `timeout` on the monotonic clock.
    ///
    /// - Parameter timeout: The longest time to wait (zero or negative: one attempt; huge: forever).
    /// - Returns: `true` when acquired, `false` when the timeout expired first.
    ///
    /// The corresponding C function is `pthread_rwlock_clockwrlock` with `CLOCK_MONOTONIC`.
    public func writeLock(timeout: Duration) -> Bool {
        checkNotWriter("writeLock(timeout:)")
        let deadline = monotonicDeadline(after: timeout)
        let code =
            recorder.isEnabled
            ? recorder.acquire(
                attempt: { cthr_rwlock_trywrlock(rwlock) },
                wait: { cthr_rwlock_timedwrlock(rwlock, deadline) }
            )
            : cthr_rwlock_timedwrlock(rwlock, deadline)
        if code == ETIMEDOUT { return false }
        check(code, "writeLock(timeout:)")
        writer.store(currentThreadID, ordering: .relaxed)
        return true
    }

    /// Releases the caller's read or write hold.
    ///
    /// - Precondition: The calling thread holds the lock (traps when detected).
    ///
    /// The corresponding C function is `pthread_rwlock_unlock`.
    public func unlock() {
        let me = currentThreadID
        let holder = writer.load(ordering: .relaxed)
        if holder == me {
            writer.store(0, ordering: .relaxed)
        } else {
            require(
                holder == 0,
                "\(describe()): unlock() on thread \(me), which does not hold it (thread \(holder) holds the write lock)"
            )
            // A read unlock: the C layer checks, per thread, that this thread holds a read hold (in every build).
            let code = cthr_rwlock_rdunlock(rwlock)
            if code == EPERM {
                threadingFatal(
                    "\(describe()): unlock() on thread \(me), which does not hold it (no read or write hold)"
                )
            }
            check(code, "unlock()")
            return
        }
        check(cthr_rwlock_unlock(rwlock), "unlock()")
    }

    /// Runs `body` while holding a read hold.
    ///
    /// - Parameter body: The reading critical section.
    /// - Returns: What `body` returns.
    /// - Throws: What `body` throws (the hold is released either way).
    @inlinable
    public func withReadLock<Result, Failure: Error>(_ body: () throws(Failure) -> Result) throws(Failure) -> Result {
        readLock()
        defer { unlock() }
        return try body()
    }

    /// Runs `body` while holding the write hold.
    ///
    /// - Parameter body: The writing critical section.
    /// - Returns: What `body` returns.
    /// - Throws: What `body` throws (the hold is released either way).
    @inlinable
    public func withWriteLock<Result, Failure: Error>(_ body: () throws(Failure) -> Result) throws(Failure) -> Result {
        writeLock()
        defer { unlock() }
        return try body()
    }

    /// Whether contention statistics are being counted (off by default; a flag checked on each acquisition).
    public var statisticsEnabled: Bool {
        get { recorder.isEnabled }
        set { recorder.enabled.store(newValue, ordering: .relaxed) }
    }

    /// The counters collected while ``statisticsEnabled`` was on (read and write acquisitions together).
    public var statistics: LockStatistics { recorder.snapshot }

    /// Sets every counter of ``statistics`` back to zero.
    public func resetStatistics() { recorder.reset() }

    func describe() -> String { lockDescription("ReadWriteLock", name, self) }

    @inline(__always)
    private func checkNotWriter(_ operation: StaticString) {
        let me = currentThreadID
        require(
            writer.load(ordering: .relaxed) != me,
            "\(describe()): \(operation) on thread \(me), which already holds the write lock (this would deadlock)"
        )
    }

    /// Traps unless `code` is 0 (the test is inlined; the message is built only on failure).
    @inline(__always)
    private func check(_ code: CInt, _ operation: StaticString) {
        if _slowPath(code != 0) { fail(code, operation) }
    }

    @inline(never)
    private func fail(_ code: CInt, _ operation: StaticString) -> Never {
        switch code {
        case EDEADLK where cthr_rwlock_read_holds(rwlock) > 0:
            threadingFatal(
                "\(describe()): \(operation) on thread \(currentThreadID), which holds a read lock on it: a read-to-write "
                    + "upgrade would wait for itself (release the read lock first)"
            )
        case EDEADLK:
            threadingFatal("\(describe()): \(operation) on thread \(currentThreadID) would deadlock (EDEADLK)")
        case EPERM:
            threadingFatal("\(describe()): \(operation) on thread \(currentThreadID), which does not hold it")
        default:
            threadingFatal("\(describe()): \(operation) failed with \(errnoName(code))")
        }
    }
}
