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
    /// - Complexity: O(1): a `sem_trywait` when a unit is free; else a lock round trip and one suspension. The
    ///   ``signal()`` that wakes the task hands its unit over directly (no `sem_post`, no futex wake, nothing
    ///   allocated).
    public func wait() async throws {
        if cthr_sem_trywait(sem) == 0 { return }
        try await asyncWaiters.wait { cthr_sem_trywait(sem) == 0 }
    }

    /// Before a `sem_post` that found a waiter registered: hands the unit straight to the longest-waiting task, so
    /// the post, the futex wake it would make for the registered waiter and the task's retry are all saved.
    ///
    /// Tasks therefore come before threads blocked in the synchronous `wait()` for the units a ``signal()`` hands
    /// out while both wait.
    ///
    /// - Returns: true when a task took the unit; false (nothing changed) when no task waits.
    func handOffToAsyncWaiter() -> Bool {
        asyncWaiters.count.load(ordering: .sequentiallyConsistent) > 0 && asyncWaiters.resumeFirst()
    }

    /// After a `sem_post`: hands units to suspended tasks, if any wait.
    ///
    /// The post and the read of the waiter count are ordered by a full fence; a waiter raises the count and then
    /// retries `sem_trywait` behind the same kind of fence, so either the waiter sees the unit or this sees the
    /// waiter (no unit stays in the semaphore while a task sleeps).
    func resumeAsyncWaiters() {
        atomicMemoryFence(ordering: .sequentiallyConsistent)
        guard asyncWaiters.count.load(ordering: .sequentiallyConsistent) > 0 else { return }
        asyncWaiters.resumeWhile { cthr_sem_trywait(sem) == 0 }
    }
}
