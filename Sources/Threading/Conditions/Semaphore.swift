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
/// Built on a process-private POSIX `sem_t`; timed waits use the monotonic clock. Use it to limit concurrency
/// (initial value N), or as a one-shot hand-off (initial value 0). The count must stay within
/// 0...``maximumValue``.
///
/// ```swift
/// let slots = Semaphore(value: 2)
/// slots.wait()
/// defer { slots.signal() }
/// ```
///
/// Traps: a negative initial value or one above ``maximumValue`` (a programming error, like
/// `DispatchSemaphore(value: -1)`: there is nothing to recover), and ``signal()`` beyond ``maximumValue``.
///
/// On a pool worker of the queue engine, a wait that has to block gives the worker's slot up meanwhile (so the pool
/// grows and queued work keeps running), like the engine's own waits.
///
/// A reference type and `Sendable`: `sem_t` synchronizes itself.
public final class Semaphore: @unchecked Sendable {
    let sem: UnsafeMutablePointer<cthr_sem_t>
    /// Tasks suspended in the async ``wait()`` (see Semaphore+Async.swift).
    let asyncWaiters = AsyncWaitList()

    /// The largest count a semaphore can hold (`SEM_VALUE_MAX`).
    public static var maximumValue: Int { Int(cthr_sem_value_max()) }

    /// Creates a semaphore holding `value` units.
    ///
    /// - Parameter value: The initial count, in 0...``maximumValue`` (traps otherwise, naming the value).
    ///
    /// The corresponding C function is `sem_init`.
    public init(value: Int = 0) {
        require(
            value >= 0,
            "Semaphore(value: \(value)): the initial value must not be negative (a semaphore counts available units)"
        )
        require(
            value <= Semaphore.maximumValue,
            "Semaphore(value: \(value)): the initial value exceeds SEM_VALUE_MAX (\(Semaphore.maximumValue))"
        )
        sem = .allocate(capacity: 1)
        let code = cthr_sem_init(sem, UInt32(value))
        require(code == 0, "Semaphore(value: \(value)): sem_init failed with \(errnoName(code))")
    }

    deinit {
        _ = cthr_sem_destroy(sem)
        sem.deallocate()
    }

    /// Takes one unit, waiting while the count is 0.
    ///
    /// The corresponding C function is `sem_wait`.
    @available(*, noasync, message: "wait() blocks the thread; use `try await semaphore.wait()`")
    public func wait() {
        if cthr_sem_trywait(sem) == 0 { return }
        let code = Engine.blocking { cthr_sem_wait(sem) }
        require(code == 0, "Semaphore.wait(): sem_wait failed with \(errnoName(code))")
    }

    /// Takes one unit, waiting at most `timeout` on the monotonic clock.
    ///
    /// Like ``wait()-7yygf``, a unit taken here orders everything the thread that returned it did before its ``signal()``
    /// before what this thread does next, and ThreadSanitizer sees that too: it does not intercept `sem_clockwait`,
    /// so the C layer annotates the hand-off for it.
    ///
    /// - Parameter timeout: The longest time to wait (zero or negative: one attempt; huge: forever).
    /// - Returns: `true` when a unit was taken, `false` when the timeout expired first.
    ///
    /// The corresponding C function is `sem_clockwait` with `CLOCK_MONOTONIC`.
    @available(*, noasync, message: "wait(timeout:) blocks the thread; use `try await semaphore.wait()`")
    public func wait(timeout: Duration) -> Bool {
        if cthr_sem_trywait(sem) == 0 { return true }
        let deadline = monotonicDeadline(after: timeout)
        let code = Engine.blocking { cthr_sem_timedwait(sem, deadline) }
        if code == ETIMEDOUT { return false }
        require(code == 0, "Semaphore.wait(timeout:): sem_clockwait failed with \(errnoName(code))")
        return true
    }

    /// Takes one unit if the count is above 0.
    ///
    /// - Returns: `true` when a unit was taken.
    ///
    /// The corresponding C function is `sem_trywait`.
    public func tryWait() -> Bool {
        cthr_sem_trywait(sem) == 0
    }

    /// Returns one unit, waking one waiter if any (a thread blocked in ``wait()-7yygf`` or a task suspended in the async
    /// ``wait()-7yygf``).
    ///
    /// - Precondition: The count is below ``maximumValue`` (traps with `EOVERFLOW`).
    ///
    /// The corresponding C function is `sem_post`.
    public func signal() {
        let code = cthr_sem_post(sem)
        require(code == 0, "Semaphore.signal(): sem_post failed with \(errnoName(code))")
        resumeAsyncWaiters()
    }

    /// The current count (a snapshot that may be stale by the time it is used).
    ///
    /// The corresponding C function is `sem_getvalue`.
    public var value: Int {
        var out: CInt = 0
        _ = cthr_sem_getvalue(sem, &out)
        return Int(out)
    }
}
