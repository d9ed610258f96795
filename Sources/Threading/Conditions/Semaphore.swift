// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import CThreading

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A counting semaphore: ``wait()-7yygf`` takes one unit (blocking while there is none), ``signal()`` returns one.
///
/// Built on CThreading's futex semaphore (`cthr_sem_t`, glibc's `sem_t` protocol: the value and the number of
/// waiters in one 64-bit word): when a unit is available, ``wait()-7yygf`` is one inlined compare-exchange, and when
/// nobody waits, ``signal()`` is one inlined compare-exchange, with no system call either way. A wait that finds no
/// unit tries a few more times (pausing, then yielding the CPU) before it sleeps on the futex, so a unit that comes
/// back soon is taken without a sleep; timed waits sleep with a deadline on the monotonic clock. Use it to limit concurrency
/// (initial value N), or as a one-shot hand-off (initial value 0). The count must stay within
/// 0...``maximumValue``.
///
/// ```swift
/// let slots = Semaphore(value: 2)
/// slots.wait()
/// defer { slots.signal() }
/// print("one of at most 2 threads here")
/// ```
///
/// Traps: a negative initial value or one above ``maximumValue`` (a programming error, like
/// `DispatchSemaphore(value: -1)`: there is nothing to recover), and ``signal()`` beyond ``maximumValue``.
///
/// On a pool worker of the worker pools, a wait that has to block gives the worker's slot up meanwhile (so the pool
/// grows and queued work keeps running), like the pool's own waits.
///
/// A reference type and `Sendable`: its only state is the C semaphore word, changed only by atomic operations.
public final class Semaphore: @unchecked Sendable {
    @usableFromInline
    let sem: UnsafeMutablePointer<cthr_sem_t>
    /// Tasks suspended in the async ``wait()-7yygf`` (see Semaphore+Async.swift), each registered as a waiter in the
    /// C word while it waits, so that ``signal()`` takes its slow path, which resumes them. Guarded by `asyncLock`;
    /// reached as `asyncWaiters`.
    let waiterList: UnsafeMutablePointer<AsyncWaitList>
    /// Guards ``waiterList``. Its word is on the semaphore's line.
    let asyncLock: RuntimeLock
    /// The C word, the lock's word and the list, on one cache line of their own: a wait and the signal that ends it
    /// touch all three, so they move between cores as one line.
    private let line: UnsafeMutablePointer<Line>

    private struct Line {
        var sem = cthr_sem_t()
        var lock = cthr_lock_t()
        var asyncWaiters = AsyncWaitList()
    }

    /// The largest count a semaphore can hold (`SEM_VALUE_MAX`).
    public static var maximumValue: Int { Int(cthr_sem_value_max()) }

    /// Creates a semaphore holding `value` units.
    ///
    /// - Parameter value: The initial count, in 0...``maximumValue`` (traps otherwise, naming the value).
    ///
    /// The corresponding C function is `sem_init` (here `cthr_sem_init`).
    public init(value: Int = 0) {
        require(
            value >= 0,
            "Semaphore(value: \(value)): the initial value must not be negative (a semaphore counts available units)"
        )
        require(
            value <= Semaphore.maximumValue,
            "Semaphore(value: \(value)): the initial value exceeds SEM_VALUE_MAX (\(Semaphore.maximumValue))"
        )
        let line = allocateLockState(Line())  // on a cache line of its own, as every lock's word
        self.line = line
        sem = line.pointer(to: \.sem)!
        asyncLock = RuntimeLock.make(at: line.pointer(to: \.lock)!)
        waiterList = line.pointer(to: \.asyncWaiters)!
        // Cannot fail: `sem` is not NULL and `value` was checked against SEM_VALUE_MAX above.
        _ = cthr_sem_init(sem, UInt32(value))
    }

    deinit {
        _ = cthr_sem_destroy(sem)
        line.deinitialize(count: 1)
        UnsafeMutableRawPointer(line).deallocate()
    }

    // The noasync advice below is one string literal (an attribute takes no concatenation).
    // swift-format-ignore
    /// Takes one unit, waiting while the count is 0.
    ///
    /// - Complexity: One compare-exchange when a unit is available.
    ///
    /// The corresponding C function is `sem_wait` (here `cthr_sem_fast_trywait`/`cthr_sem_wait`).
    @available(*, noasync, message: "wait() blocks the thread; use `try await semaphore.wait()` (top-level code, where the blocking overload wins: `try await { try await semaphore.wait() }()`)")
    @inlinable
    public func wait() {
        if _fastPath(cthr_sem_fast_trywait(sem)) { return }
        waitSlow()
    }

    @usableFromInline
    func waitSlow() {
        let code = BlockingHook.around { WaitRecording.recording(.semaphore, on: self) { cthr_sem_wait(sem) } }
        require(code == 0, "Semaphore.wait(): cthr_sem_wait failed with \(errnoName(code))")
    }

    // The noasync advice below is one string literal (an attribute takes no concatenation).
    // swift-format-ignore
    /// Takes one unit, waiting at most `timeout` on the monotonic clock.
    ///
    /// Like ``wait()-7yygf``, a unit taken here orders everything the thread that returned it did before its ``signal()``
    /// before what this thread does next, and ThreadSanitizer sees that too: the wait is a futex wait with an
    /// absolute deadline (not `sem_clockwait`, which ThreadSanitizer does not intercept), and the C layer annotates
    /// the hand-off for it.
    ///
    /// - Parameter timeout: The longest time to wait (zero or negative: one attempt; huge: forever).
    /// - Returns: `true` when a unit was taken, `false` when the timeout expired first.
    ///
    /// The corresponding C function is `sem_clockwait` with `CLOCK_MONOTONIC` (here `cthr_sem_timedwait`).
    @available(*, noasync, message: "wait(timeout:) blocks the thread; use `try await semaphore.wait()` (top-level code, where the blocking overload wins: `try await { try await semaphore.wait() }()`)")
    @inlinable
    public func wait(timeout: Duration) -> Bool {
        if _fastPath(cthr_sem_fast_trywait(sem)) { return true }
        return waitSlow(timeout: timeout)
    }

    @usableFromInline
    func waitSlow(timeout: Duration) -> Bool {
        let deadline = monotonicDeadline(after: timeout)
        let code = BlockingHook.around {
            WaitRecording.recording(.semaphore, on: self, deadline: deadline) { cthr_sem_timedwait(sem, deadline) }
        }
        if code == ETIMEDOUT { return false }
        require(code == 0, "Semaphore.wait(timeout:): cthr_sem_timedwait failed with \(errnoName(code))")
        return true
    }

    /// Takes one unit if the count is above 0.
    ///
    /// - Returns: `true` when a unit was taken.
    ///
    /// The corresponding C function is `sem_trywait` (here `cthr_sem_fast_trywait`).
    @inlinable
    public func tryWait() -> Bool {
        cthr_sem_fast_trywait(sem)
    }

    /// Returns one unit, waking one waiter if any (a thread blocked in ``wait()-7yygf`` or a task suspended in the async
    /// ``wait()-7yygf``).
    ///
    /// - Precondition: The count is below ``maximumValue`` (traps with `EOVERFLOW`).
    /// - Complexity: One compare-exchange when nobody waits.
    ///
    /// The corresponding C function is `sem_post` (here `cthr_sem_fast_post`/`cthr_sem_post`).
    @inlinable
    public func signal() {
        if _fastPath(cthr_sem_fast_post(sem)) { return }
        signalSlow()
    }

    @usableFromInline
    func signalSlow() {
        if handOffToAsyncWaiter() { return }
        let code = cthr_sem_post(sem)
        require(code == 0, "Semaphore.signal(): sem_post failed with \(errnoName(code))")
        resumeAsyncWaiters()
    }

    /// The current count (a snapshot that may be stale by the time it is used).
    ///
    /// The corresponding C function is `sem_getvalue` (here `cthr_sem_getvalue`).
    public var value: Int {
        var out: CInt = 0
        _ = cthr_sem_getvalue(sem, &out)
        return Int(out)
    }
}
