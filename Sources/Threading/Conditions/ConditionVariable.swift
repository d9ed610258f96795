// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import CThreading

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A condition variable used with a ``MutexLock``: wait until another thread signals, then retest your predicate.
///
/// Built on CThreading's futex condition (`cthr_lock_cond_t`: a sequence number and a sleeper count), which works
/// with every ``MutexLock`` kind. A waiter watches for a signal for a few microseconds before it sleeps, so a
/// signal that comes soon (a hand-off between two running threads) costs neither side a system call;
/// ``signal()`` and ``broadcast()`` make no system call when nobody sleeps. As with
/// every condition variable, wake-ups can be spurious and a signal sent while nobody waits is not remembered:
/// always wait in a loop on a predicate guarded by the lock (or use ``Monitor``, which does this for you).
///
/// ```swift
/// let lock = MutexLock()
/// let condition = ConditionVariable()
/// var queue: [Int] = []  // guarded by `lock`; a producer appends under it, then calls `condition.signal()`
///
/// lock.lock()
/// while queue.isEmpty { condition.wait(lock) }
/// let item = queue.removeFirst()
/// lock.unlock()
/// ```
///
/// Traps: waiting with a lock the calling thread does not hold.
///
/// A reference type and `Sendable`: its state is two C words changed only by atomic operations.
public final class ConditionVariable: @unchecked Sendable {
    let cond: UnsafeMutablePointer<cthr_lock_cond_t>

    /// Creates a condition variable.
    public init() {
        // On a cache line of its own, as every lock's word: waiters watch the sequence while they spin.
        cond = allocateLockState(cthr_lock_cond_t())
    }

    deinit {
        UnsafeMutableRawPointer(cond).deallocate()
    }

    /// Releases `lock`, waits for a signal, and reacquires `lock` before returning.
    ///
    /// May return spuriously: recheck the predicate.
    ///
    /// - Parameter lock: A lock the calling thread holds (traps otherwise).
    ///
    /// The corresponding C function is `pthread_cond_wait`.
    public func wait(_ lock: MutexLock) {
        _ = wait(lock, deadline: .max, operation: "wait(_:)")
    }

    /// Releases `lock`, waits for a signal or at most `timeout`, and reacquires `lock` before returning.
    ///
    /// - Parameters:
    ///   - lock: A lock the calling thread holds (traps otherwise).
    ///   - timeout: The longest time to wait on the monotonic clock (zero or negative: no wait; huge: forever).
    /// - Returns: `true` when woken (by a signal, a broadcast or spuriously), `false` when the timeout expired.
    ///
    /// The corresponding C function is `pthread_cond_clockwait` with `CLOCK_MONOTONIC`.
    public func wait(_ lock: MutexLock, timeout: Duration) -> Bool {
        wait(lock, deadline: monotonicDeadline(after: timeout), operation: "wait(_:timeout:)")
    }

    /// Waits until `predicate` holds, releasing `lock` while waiting.
    ///
    /// - Parameters:
    ///   - lock: A lock the calling thread holds (traps otherwise); `predicate` runs while it is held.
    ///   - predicate: The condition to wait for.
    /// - Throws: What `predicate` throws (the lock is held again then).
    public func wait<Failure: Error>(_ lock: MutexLock, until predicate: () throws(Failure) -> Bool) throws(Failure) {
        while try !predicate() { wait(lock) }
    }

    /// Wakes at least one waiting thread, if any.
    ///
    /// The corresponding C function is `pthread_cond_signal`.
    public func signal() {
        _ = cthr_lock_cond_signal(cond)
    }

    /// Wakes every waiting thread.
    ///
    /// The corresponding C function is `pthread_cond_broadcast`.
    public func broadcast() {
        _ = cthr_lock_cond_broadcast(cond)
    }

    /// Waits on the condition until `deadline` (`UInt64.max`: forever); the lock is held on entry and on return.
    @usableFromInline
    func wait(_ lock: MutexLock, deadline: UInt64, operation: String) -> Bool {
        if let held = lock.isHeldByCurrentThread {
            require(
                held,
                "ConditionVariable.\(operation): \(lock.describe()) is not held by thread \(currentThreadID)"
            )
        }
        let sequence = cthr_lock_cond_begin(cond)
        lock.unlock()
        // A signal that comes within a few microseconds ends the wait here, with no sleep and no wake-up call;
        // otherwise sleep, and a pool worker gives its slot up meanwhile (see `WorkerPool.withBlockingRegion`).
        let code =
            cthr_lock_cond_spin(cond, sequence, deadline)
            ? 0
            : BlockingHook.around {
                WaitRecording.recording(.condition, on: self, deadline: deadline) {
                    cthr_lock_cond_wait(cond, sequence, deadline)
                }
            }
        lock.lock()
        return code == 0
    }
}
