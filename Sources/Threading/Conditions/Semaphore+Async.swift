// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import CThreading
import Synchronization

extension Semaphore {
    /// Takes one unit, suspending the task (never blocking its thread) while the count is 0.
    ///
    /// Suspended tasks get units in the order they started waiting, and before threads blocked in the synchronous
    /// `wait()` at the same time: a ``signal()`` hands its unit to the longest-waiting task, and a thread gets one
    /// when no task waits. Any number of tasks may wait on any number of threads: 10,000 tasks awaiting one
    /// semaphore on a pool of two threads all complete as units come.
    ///
    /// ```swift
    /// let slots = Semaphore(value: 4)
    /// try await slots.wait()
    /// defer { slots.signal() }
    /// print("one of at most 4 tasks here")
    /// ```
    ///
    /// - Throws: `CancellationError` when the task is cancelled before it got a unit (cancelled while waiting, or
    ///   before the call with the count at 0); no unit is taken then.
    /// - Complexity: O(1): one compare-exchange when a unit is free; else a lock round trip, one allocation (the
    ///   task's node in the waiters' list) and one suspension. The ``signal()`` that wakes the task hands its unit
    ///   over directly (no `sem_post`, no futex wake, nothing allocated).
    public func wait() async throws {
        if cthr_sem_fast_trywait(sem) { return }
        try await AsyncResumeOnce.wait(guardedBy: asyncLock) { node in
            // The registration is a sequentially consistent read-modify-write of the semaphore's word; a `signal()`
            // posts with such an operation and then takes this lock (``resumeAsyncWaiters()``). Either the post comes
            // first, and the retry below sees its unit, or this critical section does, and the signal finds the node.
            cthr_sem_register_waiter(sem)
            if cthr_sem_fast_trywait(sem) {
                cthr_sem_unregister_waiter(sem)
                return false
            }
            asyncWaiters.pointee.append(node)
            return true
        } unregister: { node in
            asyncWaiters.pointee.remove(node)
            cthr_sem_unregister_waiter(sem)
        }
    }

    /// The number of tasks suspended in the async ``wait()-7yygf`` (a snapshot, for tests).
    var asyncWaiterCount: Int { asyncLock.withLock { asyncWaiters.pointee.count } }

    /// Unlinks and claims the longest-waiting task if `acquire` (under the lock) takes a unit for it: resume it with
    /// ``AsyncResumeOnce/deliver(returning:)`` outside the lock.
    private func takeAsyncWaiter(_ acquire: () -> Bool) -> AsyncWaitList.Node? {
        asyncLock.lock()
        guard !asyncWaiters.pointee.isEmpty, acquire(), let node = asyncWaiters.pointee.takeFirst() else {
            asyncLock.unlock()
            return nil
        }
        cthr_sem_unregister_waiter(sem)
        asyncLock.unlock()
        return node
    }

    /// Before a `sem_post` that found a waiter registered: hands the unit straight to the longest-waiting task, so
    /// the post, the futex wake it would make for the registered waiter and the task's retry are all saved.
    ///
    /// Tasks therefore come before threads blocked in the synchronous `wait()` for the units a ``signal()`` hands
    /// out while both wait.
    ///
    /// - Returns: true when a task took the unit; false (nothing changed) when no task waits.
    func handOffToAsyncWaiter() -> Bool {
        guard let node = takeAsyncWaiter({ true }) else { return false }
        node.deliver(returning: ())
        return true
    }

    /// After a `sem_post`: hands units to suspended tasks, if any wait.
    ///
    /// The post comes before this lock is taken, and a waiter registers and retries `sem_trywait` under it (see
    /// ``wait()-7yygf``): either the waiter's retry sees the unit or this sees the waiter (no unit stays in the
    /// semaphore while a task sleeps).
    func resumeAsyncWaiters() {
        while let node = takeAsyncWaiter({ cthr_sem_fast_trywait(sem) }) { node.deliver(returning: ()) }
    }
}
