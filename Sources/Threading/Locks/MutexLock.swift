// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import CThreading

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A mutual-exclusion lock that diagnoses misuse: relocking it on the owning thread, unlocking it from another
/// thread and destroying it while held all trap with a message naming the lock.
///
/// The normal and error-checking kinds run on CThreading's futex lock (`cthr_lock_t`): the lock word holds the
/// owner's kernel thread id; when uncontended, `lock()` is one inlined compare-exchange and `unlock()` one
/// compare-exchange plus a load, with no system call and nothing that touches other cores (see <doc:Locks> for
/// the opt-in `membarrier` unlock, ``usesMembarrier``); a contended `lock()` spins briefly (unless threads already sleep on the
/// lock) and then sleeps on the futex, and an unlock wakes one sleeper, which spins for the lock while the others
/// stay asleep, so under heavy contention one thread at a time competes with the holder. Because the owner is in
/// the word, the ownership checks cost nothing on the fast path, so both kinds check (the error-checking kind
/// states the guarantee; the normal kind gets it for free). The priority-inheriting kind is a `pthread_mutex_t` with `PTHREAD_PRIO_INHERIT`:
/// a thread holding it runs at the priority of its highest-priority waiter.
///
/// ```swift
/// let lock = MutexLock(name: "cache")
/// var hits = 0
/// lock.withLock { hits += 1 }
/// ```
///
/// Traps (each message names the lock and the thread):
/// - `lock()` or `lock(timeout:)` by the thread that already holds the lock (a self-deadlock; `NSLock` hangs);
///   `tryLock()` returns `false` instead.
/// - `unlock()` by a thread that does not hold the lock.
/// - deinitialization while the lock is held.
///
/// `MutexLock` is a reference type (copies of the reference share one lock) and `Sendable`: all of its state is
/// the C lock word, changed only by atomic operations, and immutable configuration.
public final class MutexLock: DiagnosedLock, @unchecked Sendable {
    /// Whether this process unlocks in `membarrier` mode (the opt-in) rather than the default mode.
    ///
    /// Default: an unlock is a compare-exchange (an atomic read-modify-write, as glibc's and the standard library's
    /// mutexes do) and a thread going to sleep on a contended lock only fences: nothing reaches other cores or
    /// processes. Membarrier mode, chosen by starting the process with `THREADING_LOCK_MEMBARRIER=1` in its
    /// environment: an unlock is a plain store (cheaper uncontended), and every thread that goes to sleep on a
    /// contended lock calls `membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED)`, which interrupts every CPU running a
    /// thread of the process and takes a host-wide kernel lock. Choose it only after measuring it on the target
    /// host (`bench locks` reports both modes and the calls per second); see <doc:Locks>.
    ///
    /// The corresponding C function is `cthr_lock_uses_membarrier`.
    public static var usesMembarrier: Bool { cthr_lock_uses_membarrier() != 0 }

    /// How many `membarrier` calls the locks of this process made so far (always 0 in the default mode).
    ///
    /// The corresponding C function is `cthr_lock_membarrier_calls`.
    public static var membarrierCalls: UInt64 { cthr_lock_membarrier_calls() }

    /// The behaviour of a ``MutexLock``.
    public enum Kind: Sendable, Hashable, CustomStringConvertible {
        /// The fast futex lock; misuse is diagnosed because the owner is known for free.
        case normal
        /// The futex lock with its misuse diagnostics guaranteed (the behaviour of `PTHREAD_MUTEX_ERRORCHECK`,
        /// reported by a trap instead of an error code).
        case errorChecking
        /// A `pthread_mutex_t` with `PTHREAD_PRIO_INHERIT` (error-checking): the owner inherits the priority of
        /// its highest-priority waiter, against priority inversion. Slower than the other kinds.
        case priorityInheriting

        /// The kind's name.
        public var description: String {
            switch self {
            case .normal: return "normal"
            case .errorChecking: return "errorChecking"
            case .priorityInheriting: return "priorityInheriting"
            }
        }
    }

    /// The name used in diagnostics, if any.
    public let name: String?

    /// The lock's kind.
    public let kind: Kind

    @usableFromInline
    let word: UnsafeMutablePointer<cthr_lock_t>

    let pthreadMutex: UnsafeMutablePointer<cthr_mutex_t>?

    let recorder = LockStatisticsRecorder()

    /// Creates a free lock of the normal kind.
    ///
    /// - Parameter name: A name for diagnostics and statistics.
    public init(name: String? = nil) {
        self.name = name
        self.kind = .normal
        self.word = allocateLockState(cthr_lock_t())
        self.pthreadMutex = nil
        if name != nil { NamedLockRegistry.register(self, describe(), .futex(word)) }
    }

    /// A normal lock whose word is followed, in the same allocation, by uninitialized room for one `Payload`, for
    /// `LockedValue`: the value it guards then shares the lock word's cache line (when it is small), so a contended
    /// acquisition moves one line between cores, not two. The caller initializes and deinitializes the payload
    /// (``payload(_:)``); the allocation goes with the lock.
    init<Payload>(name: String?, payload: Payload.Type) {
        self.name = name
        self.kind = .normal
        let raw = allocateLockState(
            byteCount: Self.payloadOffset(Payload.self) + MemoryLayout<Payload>.size,
            alignment: max(MemoryLayout<cthr_lock_t>.alignment, MemoryLayout<Payload>.alignment)
        )
        self.word = raw.initializeMemory(as: cthr_lock_t.self, repeating: cthr_lock_t(), count: 1)
        self.pthreadMutex = nil
        if name != nil { NamedLockRegistry.register(self, describe(), .futex(word)) }
    }

    /// Where a `Payload` starts after the word: the word's size rounded up to the payload's alignment.
    static func payloadOffset<Payload>(_: Payload.Type) -> Int {
        let alignment = MemoryLayout<Payload>.alignment
        return (MemoryLayout<cthr_lock_t>.size + alignment - 1) / alignment * alignment
    }

    /// The room for a `Payload` of a lock made with ``init(name:payload:)``.
    func payload<Payload>(_: Payload.Type) -> UnsafeMutablePointer<Payload> {
        (UnsafeMutableRawPointer(word) + Self.payloadOffset(Payload.self)).bindMemory(to: Payload.self, capacity: 1)
    }

    /// Creates a free lock of the given kind.
    ///
    /// - Parameters:
    ///   - kind: The lock's behaviour.
    ///   - name: A name for diagnostics and statistics.
    /// - Throws: ``ThreadingError/notSupported`` when the system has no priority-inheriting mutexes, or the error
    ///   of `pthread_mutex_init`. The corresponding C function is `pthread_mutex_init` (priority-inheriting kind).
    public init(kind: Kind, name: String? = nil) throws(ThreadingError) {
        self.name = name
        self.kind = kind
        if kind == .priorityInheriting {
            let mutex = UnsafeMutablePointer<cthr_mutex_t>.allocate(capacity: 1)
            let code = cthr_mutex_init(mutex, Int32(CTHR_MUTEX_PRIO_INHERIT.rawValue))
            if code != 0 {
                mutex.deallocate()
                throw ThreadingError(code: code, operation: "pthread_mutex_init", detail: "priority-inheriting mutex")
            }
            // The SLOW bit sends every lock operation to the slow path, which uses the pthread mutex.
            self.word = allocateLockState(
                cthr_lock_t(
                    word: cthr_atomic_u32_t(value: CTHR_LOCK_SLOW),
                    woken_at: cthr_atomic_u32_t(),
                    sleepers: cthr_atomic_u64_t(),
                    handoff_at: cthr_atomic_u32_t(),
                    spinner: cthr_atomic_u32_t()
                )
            )
            self.pthreadMutex = mutex
        } else {
            self.word = allocateLockState(cthr_lock_t())
            self.pthreadMutex = nil
        }
        if name != nil { NamedLockRegistry.register(self, describe(), pthreadMutex == nil ? .futex(word) : .unknown) }
    }

    deinit {
        if name != nil { NamedLockRegistry.unregister(self) }
        if let pthreadMutex {
            let code = cthr_mutex_destroy(pthreadMutex)
            require(
                code != EBUSY,
                "\(describe()): deinitialized while held (pthread_mutex_destroy returned EBUSY)"
            )
            pthreadMutex.deallocate()
        } else {
            requireFreeAtDeinit(owner: cthr_lock_owner(word))
        }
        UnsafeMutableRawPointer(word).deallocate()  // the word, and the payload room of init(name:payload:)
    }

    /// Acquires the lock, waiting as long as needed.
    ///
    /// - Precondition: The calling thread does not hold the lock (traps: relocking would deadlock).
    /// - Complexity: One compare-exchange when the lock is free.
    ///
    /// The corresponding C function is `pthread_mutex_lock` (here `cthr_lock_fast_lock`/`cthr_lock_lock_slow`).
    @inlinable
    public func lock() {
        if _fastPath(cthr_lock_fast_lock(word)) { return }
        lockSlow()
    }

    /// Releases the lock.
    ///
    /// - Precondition: The calling thread holds the lock (traps otherwise).
    /// - Complexity: A load, one fetch-and-subtract and one more load when nobody waits.
    ///
    /// The corresponding C function is `pthread_mutex_unlock`.
    @inlinable
    public func unlock() {
        if _fastPath(cthr_lock_fast_unlock(word)) { return }
        unlockSlow()
    }

    /// Acquires the lock if it is free, without waiting.
    ///
    /// - Returns: `true` when the lock was acquired; `false` when it is held (by another thread or by the caller).
    ///
    /// The corresponding C function is `pthread_mutex_trylock`.
    @inlinable
    public func tryLock() -> Bool {
        if _fastPath(cthr_lock_fast_lock(word)) { return true }
        return tryLockSlow()
    }

    /// Acquires the lock, waiting at most `timeout` on the monotonic clock.
    ///
    /// A zero or negative timeout has already expired, but a free lock is still taken; a timeout too large to
    /// represent waits forever.
    ///
    /// - Parameter timeout: The longest time to wait.
    /// - Returns: `true` when the lock was acquired, `false` when the timeout expired first.
    /// - Precondition: The calling thread does not hold the lock (traps).
    ///
    /// The corresponding C function is `pthread_mutex_clocklock` with `CLOCK_MONOTONIC`.
    @inlinable
    public func lock(timeout: Duration) -> Bool {
        if _fastPath(cthr_lock_fast_lock(word)) { return true }
        return lockSlow(deadline: monotonicDeadline(after: timeout))
    }

    /// Acquires the lock, waiting at most until `deadline` (nanoseconds on `CLOCK_MONOTONIC`; `.max`: forever; a
    /// deadline already passed: one attempt). For callers that share one deadline among several waits.
    @inlinable
    func lock(deadline: UInt64) -> Bool {
        if _fastPath(cthr_lock_fast_lock(word)) { return true }
        return lockSlow(deadline: deadline)
    }

    /// Runs `body` while holding the lock.
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
    /// Turning them on makes every acquisition take the slow path, which counts; turning them off restores the
    /// one-instruction fast path. Setting it briefly takes the lock (it may also be set while holding it).
    /// Counters are kept across toggles; ``resetStatistics()`` clears them.
    public var statisticsEnabled: Bool {
        get { recorder.isEnabled }
        set {
            guard pthreadMutex == nil else {
                recorder.enabled.store(newValue, ordering: .relaxed)
                return
            }
            // Only the owner may change the SLOW bit: take the lock (uncounted) unless this thread holds it.
            let alreadyHeld = cthr_lock_held_by_caller(word)
            if !alreadyHeld && !cthr_lock_fast_lock(word) {
                requireStatisticsToggle(cthr_lock_lock_slow(word, .max))
            }
            recorder.enabled.store(newValue, ordering: .relaxed)
            _ = cthr_lock_set_slow(word, newValue)
            if !alreadyHeld { unlock() }
        }
    }

    /// The counters collected while ``statisticsEnabled`` was on.
    public var statistics: LockStatistics { recorder.snapshot }

    /// Sets every counter of ``statistics`` back to zero.
    public func resetStatistics() { recorder.reset() }

    /// Whether the calling thread holds the lock, or `nil` for the priority-inheriting kind (whose owner is kept
    /// inside the pthread mutex).
    var isHeldByCurrentThread: Bool? {
        pthreadMutex == nil ? cthr_lock_held_by_caller(word) : nil
    }

    static var typeName: String { "MutexLock" }

    @usableFromInline
    func lockSlow() {
        _ = lockSlow(deadline: .max)
    }

    @usableFromInline
    func lockSlow(deadline: UInt64) -> Bool {
        let operation: StaticString = deadline == .max ? "lock()" : "lock(timeout:)"
        let code: CInt
        if let pthreadMutex {
            code = acquireCounting(
                attempt: { cthr_mutex_trylock(pthreadMutex) },
                wait: {
                    WaitRecording.recordingCycleChecked(.lock, on: self, owner: 0, deadline: deadline) {
                        cthr_mutex_timedlock(pthreadMutex, $0)
                    }
                }
            )
        } else {
            code = acquireCounting(
                attempt: { cthr_lock_trylock(word) },
                wait: { waitForFutexLock(word, deadline: deadline) }
            )
        }
        switch code {
        case 0: return true
        case ETIMEDOUT: return false
        case EDEADLK: failHeldByCaller(operation, "this would deadlock; use RecursiveLock for reentrant locking")
        default: failUnexpected(operation, code)
        }
    }

    @usableFromInline
    func unlockSlow() {
        let code = pthreadMutex.map { cthr_mutex_unlock($0) } ?? cthr_lock_unlock_slow(word)
        switch code {
        case 0: return
        case EPERM: failNotHeld("unlock()", owner: pthreadMutex == nil ? cthr_lock_owner(word) : 0)
        default: failUnexpected("unlock()", code)
        }
    }

    @usableFromInline
    func tryLockSlow() -> Bool {
        tryAcquireCounting(pthreadMutex.map { cthr_mutex_trylock($0) } ?? cthr_lock_trylock(word))
    }
}
