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
    /// - Complexity: O(1): one compare-exchange when a unit is free; else a lock round trip and one suspension, and
    ///   one allocation when other tasks wait already (the task's node in the waiters' list). The ``signal()`` that
    ///   wakes the task hands its unit over directly (no `sem_post`, no futex wake, nothing allocated).
    public func wait() async throws {
        if cthr_sem_fast_trywait(sem) { return }
        try await AsyncResumeOnce.wait(on: self, guardedBy: asyncLock) { semaphore in
            // The registration is a sequentially consistent read-modify-write of the semaphore's word; a `signal()`
            // posts with such an operation and then takes this lock (``resumeAsyncWaiters()``). Either the post comes
            // first, and the retry below sees its unit, or this critical section does, and the signal finds the task.
            cthr_sem_register_waiter(semaphore.sem)
            if cthr_sem_fast_trywait(semaphore.sem) {
                cthr_sem_unregister_waiter(semaphore.sem)
                return false
            }
            return true
        } left: { semaphore in
            cthr_sem_unregister_waiter(semaphore.sem)
        }
    }

    /// The number of tasks suspended in the async ``wait()-7yygf`` (a snapshot, for tests).
    var asyncWaiterCount: Int { asyncLock.withLock { waiterList.pointee.count } }

    /// Takes the longest-waiting task out of the list if `acquire` (under the lock) takes a unit for it: resume it
    /// outside the lock.
    private func takeAsyncWaiter(_ acquire: () -> Bool) -> AsyncWaitList.Continuation? {
        asyncLock.lock()
        guard !waiterList.pointee.isEmpty, acquire(), let waiter = waiterList.pointee.takeFirst() else {
            asyncLock.unlock()
            return nil
        }
        cthr_sem_unregister_waiter(sem)
        asyncLock.unlock()
        return waiter
    }

    /// Before a `sem_post` that found a waiter registered: hands the unit straight to the longest-waiting task, so
    /// the post, the futex wake it would make for the registered waiter and the task's retry are all saved.
    ///
    /// Tasks therefore come before threads blocked in the synchronous `wait()` for the units a ``signal()`` hands
    /// out while both wait.
    ///
    /// - Returns: true when a task took the unit; false (nothing changed) when no task waits.
    func handOffToAsyncWaiter() -> Bool {
        guard let waiter = takeAsyncWaiter({ true }) else { return false }
        waiter.resume()
        return true
    }

    /// After a `sem_post`: hands units to suspended tasks, if any wait.
    ///
    /// The post comes before this lock is taken, and a waiter registers and retries `sem_trywait` under it (see
    /// ``wait()-7yygf``): either the waiter's retry sees the unit or this sees the waiter (no unit stays in the
    /// semaphore while a task sleeps).
    func resumeAsyncWaiters() {
        while let waiter = takeAsyncWaiter({ cthr_sem_fast_trywait(sem) }) { waiter.resume() }
    }
}

extension Semaphore: AsyncWaitOwner {
    /// The list in the semaphore's line (``waiterList``), guarded by `asyncLock`.
    var asyncWaiters: AsyncWaitList {
        _read { yield waiterList.pointee }
        _modify { yield &waiterList.pointee }
    }
}
