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
/// Built on CThreading's futex reader-writer lock (`cthr_rwlock_t`), with inlined fast paths for both sides.
/// Readers are biased (BRAVO, USENIX ATC 2019): while no writer is around, a reader increments a counter on a cache
/// line of its own (one of a per-lock table of stripes, as many as CPUs) instead of a shared one, so readers on
/// different cores write nothing in common and read-mostly work scales; a writer revokes the bias, waits for the
/// stripes to drain, and restores the bias when it leaves. Without a bias, or for a write, the lock is one word:
/// the write lock is one compare-exchange and the writer's thread id sits in the word, so the owner is known for
/// free. Each thread's read holds are kept in a small thread-local table (no shared counter), which diagnoses
/// misuse in every build and makes a nested read of a lock the thread already reads a count in that table.
///
/// By default readers are preferred: a writer waits until no reader holds the lock, so a stream of readers can
/// starve it. `preferWriters: true` makes a waiting writer block new readers. Either way a thread may take a read
/// hold it already holds (nested reads never wait), except beyond eight distinct locks read at once by one thread,
/// where the extra holds are counted centrally and a nested one waits behind a waiting writer (preferring writers).
///
/// <!-- sample-context
/// nonisolated(unsafe) var table: [String: Int] = [:]  // guarded by `rw`
/// let path = "/users"
/// let handler = 1
/// -->
/// ```swift
/// let rw = ReadWriteLock(name: "routes")
/// let route = rw.withReadLock { table[path] }
/// rw.withWriteLock { table[path] = handler }
/// ```
///
/// Traps (each message names the lock), in release builds too: a write or read acquisition by the thread holding
/// the write hold; a write acquisition by a thread holding a read hold (an upgrade, which would wait for itself;
/// `tryWriteLock()` returns `false` instead); `unlock()` by a thread that holds neither a read nor the write hold
/// (another thread's write hold included); deinitialization while held.
///
/// A reference type and `Sendable`: its state is the C lock word and stripes, changed only by atomic operations,
/// and the per-thread table, which only its own thread touches.
///
/// - Complexity: Memory: one 64-byte line per stripe (the CPU count rounded up to a power of two, 8 to 64) besides
///   the lock word. A write on a biased lock reads every stripe.
public final class ReadWriteLock: DiagnosedLock, @unchecked Sendable {
    /// The name used in diagnostics, if any.
    public let name: String?

    /// Whether a waiting writer blocks new readers.
    public let prefersWriters: Bool

    @usableFromInline
    let rwlock: UnsafeMutablePointer<cthr_rwlock_t>

    let recorder = LockStatisticsRecorder()

    /// Creates a free reader-writer lock.
    ///
    /// - Parameters:
    ///   - name: A name for diagnostics and statistics.
    ///   - preferWriters: Whether a waiting writer blocks new readers (default `false`, readers preferred).
    ///
    /// The corresponding C function is `pthread_rwlock_init`; here `cthr_rwlock_init`, which fails only when the
    /// stripes cannot be allocated (a trap).
    public init(name: String? = nil, preferWriters: Bool = false) {
        self.name = name
        self.prefersWriters = preferWriters
        self.rwlock = allocateLockState(cthr_rwlock_t())
        let kind = preferWriters ? CTHR_RWLOCK_PREFER_WRITER : CTHR_RWLOCK_PREFER_READER
        let code = cthr_rwlock_init(rwlock, Int32(kind.rawValue))
        require(code == 0, "ReadWriteLock: cthr_rwlock_init failed with \(errnoName(code))")
        if name != nil { NamedLockRegistry.register(self, describe(), .readWrite(rwlock)) }
    }

    deinit {
        if name != nil { NamedLockRegistry.unregister(self) }
        let code = cthr_rwlock_destroy(rwlock)
        require(code != EBUSY, "\(describe()): deinitialized while held")
        UnsafeMutableRawPointer(rwlock).deallocate()
    }

    /// Takes a shared (read) hold, waiting while a writer holds the lock (a nested hold never waits).
    ///
    /// - Precondition: The calling thread does not hold the write hold (traps).
    /// - Complexity: When no writer is around, one atomic increment on a line of the thread's own and one load.
    ///
    /// The corresponding C function is `pthread_rwlock_rdlock`.
    @inlinable
    public func readLock() {
        if _fastPath(cthr_rwlock_fast_rdlock(rwlock)) { return }
        readLockSlow()
    }

    /// Takes the exclusive (write) hold, waiting while anyone holds the lock.
    ///
    /// - Precondition: The calling thread holds neither the write hold nor a read hold (traps).
    /// - Complexity: One compare-exchange when the lock is free and unbiased; a biased lock also reads its stripes.
    ///
    /// The corresponding C function is `pthread_rwlock_wrlock`.
    @inlinable
    public func writeLock() {
        if _fastPath(cthr_rwlock_fast_wrlock(rwlock)) { return }
        writeLockSlow()
    }

    /// Takes a read hold if that is possible without waiting.
    ///
    /// - Returns: `true` when acquired; `false` when a writer holds the lock (or, preferring writers, waits for it).
    ///
    /// The corresponding C function is `pthread_rwlock_tryrdlock`.
    @inlinable
    public func tryReadLock() -> Bool {
        if _fastPath(cthr_rwlock_fast_rdlock(rwlock)) { return true }
        return tryReadLockSlow()
    }

    /// Takes the write hold if the lock is free.
    ///
    /// - Returns: `true` when acquired, `false` when anyone holds the lock (the caller's own read hold included).
    ///
    /// The corresponding C function is `pthread_rwlock_trywrlock`.
    @inlinable
    public func tryWriteLock() -> Bool {
        if _fastPath(cthr_rwlock_fast_wrlock(rwlock)) { return true }
        return tryWriteLockSlow()
    }

    /// Takes a read hold, waiting at most `timeout` on the monotonic clock.
    ///
    /// A zero or negative timeout has already expired but still takes an available hold; a huge one waits forever.
    ///
    /// - Parameter timeout: The longest time to wait.
    /// - Returns: `true` when acquired, `false` when the timeout expired first.
    ///
    /// The corresponding C function is `pthread_rwlock_clockrdlock` with `CLOCK_MONOTONIC`.
    @inlinable
    public func readLock(timeout: Duration) -> Bool {
        if _fastPath(cthr_rwlock_fast_rdlock(rwlock)) { return true }
        return readLockSlow(deadline: monotonicDeadline(after: timeout))
    }

    /// Takes the write hold, waiting at most `timeout` on the monotonic clock.
    ///
    /// - Parameter timeout: The longest time to wait (zero or negative: one attempt; huge: forever).
    /// - Returns: `true` when acquired, `false` when the timeout expired first.
    ///
    /// The corresponding C function is `pthread_rwlock_clockwrlock` with `CLOCK_MONOTONIC`.
    @inlinable
    public func writeLock(timeout: Duration) -> Bool {
        if _fastPath(cthr_rwlock_fast_wrlock(rwlock)) { return true }
        return writeLockSlow(deadline: monotonicDeadline(after: timeout))
    }

    /// Releases the caller's read or write hold.
    ///
    /// - Precondition: The calling thread holds the lock (traps otherwise).
    ///
    /// The corresponding C function is `pthread_rwlock_unlock`.
    @inlinable
    public func unlock() {
        if _fastPath(cthr_rwlock_fast_unlock(rwlock)) { return }
        unlockSlow()
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

    /// Whether contention statistics are being counted (off by default).
    ///
    /// Turning them on sends every acquisition to the slow path, which counts; turning them off restores the
    /// inlined fast paths.
    public var statisticsEnabled: Bool {
        get { recorder.isEnabled }
        set {
            recorder.enabled.store(newValue, ordering: .relaxed)
            _ = cthr_rwlock_set_slow(rwlock, newValue)
        }
    }

    /// The counters collected while ``statisticsEnabled`` was on (read and write acquisitions together).
    public var statistics: LockStatistics { recorder.snapshot }

    /// Sets every counter of ``statistics`` back to zero.
    public func resetStatistics() { recorder.reset() }

    static var typeName: String { "ReadWriteLock" }

    @usableFromInline
    func readLockSlow() { _ = lockSlow(.read, deadline: .max) }

    @usableFromInline
    func readLockSlow(deadline: UInt64) -> Bool { lockSlow(.read, deadline: deadline) }

    @usableFromInline
    func writeLockSlow() { _ = lockSlow(.write, deadline: .max) }

    @usableFromInline
    func writeLockSlow(deadline: UInt64) -> Bool { lockSlow(.write, deadline: deadline) }

    /// The two sides of the lock, for the slow path they share: each one's trylock, the two halves of its timed lock,
    /// its wait kind and names.
    private enum Side {
        case read, write

        var tryLock: (UnsafeMutablePointer<cthr_rwlock_t>) -> CInt {
            self == .read ? { cthr_rwlock_tryrdlock($0) } : { cthr_rwlock_trywrlock($0) }
        }

        /// The timed lock up to where it would sleep: `EBUSY` (nothing held: `sleepLock` goes on) or, writing,
        /// `EINPROGRESS` (the claim held, readers still in: `cthr_rwlock_wrlock_drain` goes on).
        var spinLock: (UnsafeMutablePointer<cthr_rwlock_t>, UInt64) -> CInt {
            self == .read ? { cthr_rwlock_spinrdlock($0, $1) } : { cthr_rwlock_spinwrlock($0, $1) }
        }

        /// The timed lock without its spin, after `spinLock` returned `EBUSY`.
        var sleepLock: (UnsafeMutablePointer<cthr_rwlock_t>, UInt64) -> CInt {
            self == .read ? { cthr_rwlock_rdlock_sleep($0, $1) } : { cthr_rwlock_wrlock_sleep($0, $1) }
        }

        var waitKind: WaitKind { self == .read ? .readLock : .writeLock }

        func operation(timed: Bool) -> StaticString {
            switch (self, timed) {
            case (.read, false): "readLock()"
            case (.read, true): "readLock(timeout:)"
            case (.write, false): "writeLock()"
            case (.write, true): "writeLock(timeout:)"
            }
        }
    }

    /// The slow path of a read or write acquisition: the side's trylock and, when busy, its spin, and only when
    /// that would sleep, the wait record (what the dump and the cycle finder read) and the sleeping rest.
    private func lockSlow(_ side: Side, deadline: UInt64) -> Bool {
        let code = acquireCounting(
            attempt: { side.tryLock(rwlock) },
            wait: {
                let spun = side.spinLock(rwlock, deadline)
                if spun != EBUSY && spun != EINPROGRESS { return spun }
                // Draining, the caller holds the claim: it waits for readers, whose ids the lock does not keep.
                return WaitRecording.recordingCycleChecked(
                    side.waitKind,
                    on: self,
                    owner: spun == EINPROGRESS ? 0 : cthr_rwlock_writer(rwlock),
                    deadline: deadline
                ) { spun == EINPROGRESS ? cthr_rwlock_wrlock_drain(rwlock, $0) : side.sleepLock(rwlock, $0) }
            }
        )
        let operation = side.operation(timed: deadline != .max)
        if code == ETIMEDOUT { return false }
        check(code, operation)
        return true
    }

    @usableFromInline
    func tryReadLockSlow() -> Bool {
        // Any refusal is `false`: busy, the caller's own write hold (EDEADLK), too many readers (EAGAIN).
        tryAcquireCounting(cthr_rwlock_tryrdlock(rwlock))
    }

    @usableFromInline
    func tryWriteLockSlow() -> Bool {
        // Any refusal is `false`: busy, or the caller's own read hold (an upgrade) or write hold (EDEADLK).
        tryAcquireCounting(cthr_rwlock_trywrlock(rwlock))
    }

    @usableFromInline
    func unlockSlow() {
        let code = cthr_rwlock_unlock(rwlock)
        guard code != 0 else { return }
        let me = currentThreadID
        let writer = cthr_rwlock_writer(rwlock)
        if code == EPERM && writer != 0 && writer != me {
            threadingFatal(
                "\(describe()): unlock() on thread \(me), which does not hold it (thread \(writer) holds the write lock)"
            )
        }
        if code == EPERM {
            threadingFatal("\(describe()): unlock() on thread \(me), which does not hold it (no read or write hold)")
        }
        check(code, "unlock()")
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
            threadingFatal(
                "\(describe()): \(operation) on thread \(currentThreadID), which already holds the write lock "
                    + "(this would deadlock)"
            )
        case EAGAIN:
            threadingFatal("\(describe()): \(operation): too many readers or nested read holds (EAGAIN)")
        case EPERM:
            threadingFatal("\(describe()): \(operation) on thread \(currentThreadID), which does not hold it")
        default:
            failUnexpected(operation, code)
        }
    }
}
