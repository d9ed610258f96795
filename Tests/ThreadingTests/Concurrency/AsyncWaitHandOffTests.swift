// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import CThreading
import Testing

@testable import Threading

/// How the async waits are resumed: a semaphore's unit goes straight to a suspended task, a group or an item resumes
/// its waiter from the thread that ends it.
@Suite(.serialized) struct AsyncWaitHandOffTests {
    /// A signal hands its unit to the suspended task, not to a thread blocked in the synchronous wait at the same
    /// time; the next signal goes to the thread. Nothing is left in the semaphore.
    @Test func aSignalGoesToTheWaitingTaskBeforeABlockedThread() async throws {
        let semaphore = Semaphore(value: 0)
        let threadGotUnit = LockedValue(false)
        let thread = try PosixThread {
            let got = semaphore.wait(timeout: .seconds(20))
            threadGotUnit.withLock { $0 = got }
        }
        try #require(await suspendUntil { cthr_sem_waiter_count(semaphore.sem) == 1 })
        let task = Task { try await semaphore.wait() }
        try #require(await suspendUntil { semaphore.asyncWaiterCount == 1 })
        semaphore.signal()
        // The task has the unit: it completes although the thread waited first.
        try await withDeadline { try await task.value }
        #expect(!threadGotUnit.withLock { $0 })
        #expect(semaphore.value == 0)
        semaphore.signal()
        await thread.join()
        #expect(threadGotUnit.withLock { $0 })
        #expect(semaphore.value == 0)
        #expect(semaphore.asyncWaiterCount == 0)
    }

    /// A signal that finds no task takes the ordinary path: the unit stays in the semaphore for the next wait.
    @Test func aSignalWithNoTaskWaitingKeepsTheUnit() async throws {
        let semaphore = Semaphore(value: 0)
        semaphore.signal()
        #expect(semaphore.value == 1)
        try await withDeadline { try await semaphore.wait() }
        #expect(semaphore.value == 0)
    }

    /// The last `leave()` resumes the waiting task itself, also when it comes from a thread of no pool.
    @Test func groupWaitIsResumedByTheLastLeave() async throws {
        let group = WorkGroup()
        group.enter()
        let resumed = LockedValue(false)
        let task = Task {
            try await group.wait()
            resumed.withLock { $0 = true }
        }
        // The task's wait is registered with the group before the leave, so the leave is what resumes it.
        try #require(await suspendUntil { group.registeredNotificationCount == 1 })
        let leaver = try PosixThread { group.leave() }
        await leaver.join()
        try await withDeadline { try await task.value }
        #expect(resumed.withLock { $0 })
    }

    /// An item's waiter is resumed by whoever finishes it: here `cancel()` of an item that never started.
    @Test func itemWaitIsResumedByTheCancellingThread() async throws {
        let item = WorkItem {}
        let task = Task { try await item.wait() }
        // The task's wait is registered with the item before the cancel, so the cancel is what resumes it.
        try #require(await suspendUntil { item.registeredNotificationCount == 1 })
        item.cancel()
        try await withDeadline { try await task.value }
        #expect(item.isCancelled)
    }
}
