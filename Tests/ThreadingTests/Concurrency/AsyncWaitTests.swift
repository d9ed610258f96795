// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import Testing

@testable import Threading

/// The async forms of the waits: they complete, they suspend instead of blocking, and cancellation ends them.
@Suite(.serialized) struct AsyncWaitTests {
    @Test func runReturnsTheBodysResultFromTheQueue() async throws {
        let queue = SerialQueue(label: "conc.run")
        let (value, onQueue) = try await withDeadline { try await queue.run { (42, queue.isCurrent) } }
        #expect(value == 42 && onQueue)
        let concurrent = ConcurrentQueue(label: "conc.run.concurrent")
        #expect(try await withDeadline { try await concurrent.run { concurrent.isCurrent } })
    }

    @Test func runPassesNonSendableValuesBothWays() async throws {
        final class Counter { var value = 0 }  // not Sendable
        let queue = SerialQueue(label: "conc.run.sending")
        let counter = Counter()
        let total = try await queue.run {  // captures a non-Sendable value the caller gives up
            counter.value += 1
            return counter.value
        }
        #expect(total == 1)
        let made = try await queue.run {  // returns a non-Sendable value made on the queue
            let fresh = Counter()
            fresh.value = 5
            return fresh
        }
        #expect(made.value == 5)
    }

    @Test func runRethrowsTheBodysError() async throws {
        struct Failure: Error {}
        let queue = SerialQueue(label: "conc.run.throws")
        await #expect(throws: Failure.self) { try await queue.run { throw Failure() } }
    }

    /// The task is cancelled while its body waits in the suspended queue: its continuation is installed (the body
    /// is queued only after that), so the cancellation resumes the suspended task and the body never runs.
    @Test func runCancelledBeforeTheBodyStartsNeverRunsIt() async throws {
        let queue = SerialQueue(label: "conc.run.cancel")
        let ran = LockedValue(false)
        queue.suspend()
        let waiter = WatchedTask { try await queue.run { ran.withLock { $0 = true } } }
        try #require(await suspendUntil { queue.queueCore.pendingTaskCount == 1 })
        waiter.cancel()
        let outcome = try #require(await waiter.result(), "the cancelled run did not end")
        #expect(throws: CancellationError.self) { try outcome.get() }
        queue.resume()
        _ = try await withDeadline { try await queue.run { 0 } }
        #expect(ran.withLock { $0 } == false)
    }

    /// 10,000 tasks await one semaphore on a pool of exactly two threads: with blocking waits, two tasks would
    /// hold both threads and the rest could never run.
    @Test func tenThousandTasksAwaitOneSemaphoreOnTwoThreads() async throws {
        let pool = WorkerPool(label: "conc.sem2", threads: 2, kind: .blocking)
        let semaphore = Semaphore(value: 0)
        let waiting = LockedValue(0)
        let count = 10_000
        let finished = try await withDeadline(seconds: 60) {
            await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<count {
                    group.addTask(executorPreference: pool) {
                        waiting.withLock { $0 += 1 }
                        try await semaphore.wait()
                    }
                }
                var done = 0
                _ = await suspendUntil { waiting.withLock { $0 } == count }
                for _ in 0..<count { semaphore.signal() }
                while (try? await group.next()) != nil { done += 1 }
                return done
            }
        }
        #expect(finished == count)
        #expect(semaphore.value == 0)
        blockingCall { pool.shutdown(timeout: .seconds(20)) }
    }

    @Test func semaphoreWaitTakesAFreeUnitAtOnce() async throws {
        let semaphore = Semaphore(value: 2)
        try await semaphore.wait()
        try await semaphore.wait()
        #expect(semaphore.value == 0)
    }

    @Test func cancelledSemaphoreWaitThrowsAndTakesNoUnit() async throws {
        let semaphore = Semaphore(value: 0)
        let waiter = WatchedTask { try await semaphore.wait() }
        try #require(await suspendUntil { semaphore.asyncWaiterCount == 1 })
        waiter.cancel()
        let outcome = try #require(await waiter.result(), "the cancelled wait did not end")
        #expect(throws: CancellationError.self) { try outcome.get() }
        #expect(semaphore.asyncWaiterCount == 0)
        semaphore.signal()
        #expect(semaphore.value == 1)
    }

    @Test func semaphoreWaitOfACancelledTaskThrowsWithoutWaiting() async throws {
        let semaphore = Semaphore(value: 0)
        let task = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            try await semaphore.wait()
        }
        let outcome = try await withDeadline { await task.result }
        #expect(throws: CancellationError.self) { try outcome.get() }
    }

    @Test func semaphoreAsyncWaitersAreServedInOrder() async throws {
        let semaphore = Semaphore(value: 0)
        let order = LockedValue<[Int]>([])
        var tasks: [Task<Void, any Error>] = []
        for index in 0..<5 {
            tasks.append(
                Task {
                    try await semaphore.wait()
                    order.withLock { $0.append(index) }
                    semaphore.signal()
                }
            )
            try #require(await suspendUntil { semaphore.asyncWaiterCount == index + 1 })
        }
        semaphore.signal()
        let started = tasks
        try await withDeadline { for task in started { try await task.value } }
        #expect(order.withLock { $0 } == [0, 1, 2, 3, 4])
    }

    @Test func groupWaitResumesAfterTheLastLeave() async throws {
        let group = WorkGroup()
        try await group.wait()  // empty: at once
        group.enter()
        let queue = ConcurrentQueue(label: "conc.group")
        queue.asyncAfter(delay: .milliseconds(5)) { group.leave() }
        try await withDeadline { try await group.wait() }
    }

    /// Cancelled once its wait is registered with the group (so suspended, not refused on entry): it throws, and
    /// the group's later leave resumes nobody twice.
    @Test func cancelledGroupWaitThrows() async throws {
        let group = WorkGroup()
        group.enter()
        let waiter = WatchedTask { try await group.wait() }
        try #require(await suspendUntil { group.registeredNotificationCount == 1 })
        waiter.cancel()
        let outcome = try #require(await waiter.result(), "the cancelled wait did not end")
        #expect(throws: CancellationError.self) { try outcome.get() }
        group.leave()
        #expect(group.registeredNotificationCount == 0)
    }

    @Test func workItemWaitAndCancellation() async throws {
        let queue = SerialQueue(label: "conc.item")
        let item = WorkItem {}
        queue.async(execute: item)
        try await withDeadline { try await item.wait() }
        let held = WorkItem {}
        let waiter = WatchedTask { try await held.wait() }
        // Cancelled once the wait is registered with the item: the suspended wait is the one cancelled.
        try #require(await suspendUntil { held.registeredNotificationCount == 1 })
        waiter.cancel()
        let outcome = try #require(await waiter.result(), "the cancelled wait did not end")
        #expect(throws: CancellationError.self) { try outcome.get() }
        #expect(!held.isCancelled)  // the task's cancellation leaves the item alone
    }

    @Test func jobWaitResultAndCancellation() async throws {
        let queue = JobQueue(name: "conc.jobs")
        let job = ResultJob<Int>(name: "answer") { _ in 42 }
        queue.addJob(job)
        #expect(try await withDeadline { try await job.value } == 42)
        let pending = Job(name: "never")
        let waiter = WatchedTask { try await pending.waitUntilFinished() }
        // Cancelled once the wait is linked in the job's list of waiters: the suspended wait is cancelled.
        try #require(await suspendUntil { JobGraph.lock.withLock { pending.asyncWaiters.count } == 1 })
        waiter.cancel()
        let outcome = try #require(await waiter.result(), "the cancelled wait did not end")
        #expect(throws: CancellationError.self) { try outcome.get() }
        #expect(!pending.isCancelled)  // the task's cancellation leaves the job alone
    }

    @Test func joinOnceAndRCUWaitsComplete() async throws {
        let thread = try PosixThread(name: "conc.join") { 7 }
        #expect(try await withDeadline { await thread.join() } == 7)
        let once = Once()
        let runs = LockedValue(0)
        try await withDeadline {
            await withTaskGroup(of: Void.self) { group in
                for _ in 0..<8 { group.addTask { await once.run { runs.withLock { $0 += 1 } } } }
            }
        }
        #expect(runs.withLock { $0 } == 1 && once.hasRun)
        try await withDeadline { await RCU.synchronize() }
        try await withDeadline { await RCU.barrier() }
    }

    @Test func poolShutdownFromAsyncCodeRunsAcceptedWork() async throws {
        let pool = WorkerPool(label: "conc.shutdown", threads: 2)
        let ran = LockedValue(0)
        let queue = SerialQueue(label: "conc.shutdown.queue", pool: pool)
        for _ in 0..<10 { queue.async { ran.withLock { $0 += 1 } } }
        // Called from a task that runs on the pool itself: it is suspended, so its thread is free to finish.
        try await withDeadline { await withTaskExecutorPreference(pool) { await pool.shutdownGracefully() } }
        #expect(pool.isShutDown)
        #expect(ran.withLock { $0 } == 10)
    }
}
