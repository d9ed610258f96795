// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import CThreading
import Synchronization
import Testing

@testable import Threading

/// The one resume-once helper under every async wait and offload: a task is resumed exactly once, whichever of the
/// event, its cancellation (before it suspended or while suspended) and a refusal comes first; a cancelled wait
/// leaves nothing behind; the waiters' order holds.
@Suite(.serialized) struct AsyncResumeOnceTests {
    /// The waits a task can make, each on a fresh object whose event has not come.
    enum Wait: String, CaseIterable, Sendable {
        case semaphore, group, item, job, queueRun, poolRun
    }

    /// A task cancelled before it waits throws at once: it never registers with the object, and an offloaded body
    /// never runs.
    @Test(arguments: Wait.allCases)
    func aTaskCancelledBeforeItWaitsThrowsWithoutRegistering(_ wait: Wait) async throws {
        let semaphore = Semaphore(value: 0)
        let group = WorkGroup()
        group.enter()
        let item = WorkItem {}
        let job = Job(name: "never")
        let queue = SerialQueue(label: "conc.once.early")
        let ran = LockedValue(false)
        let task = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            switch wait {
            case .semaphore: try await semaphore.wait()
            case .group: try await group.wait()
            case .item: try await item.wait()
            case .job: try await job.waitUntilFinished()
            case .queueRun: try await queue.run { ran.withLock { $0 = true } }
            case .poolRun: try await WorkerPool.blocking.run { ran.withLock { $0 = true } }
            }
        }
        let outcome = try await withDeadline { await task.result }
        #expect(throws: CancellationError.self) { try outcome.get() }
        #expect(semaphore.asyncWaiterCount == 0)
        #expect(cthr_sem_waiter_count(semaphore.sem) == 0)
        #expect(group.registeredNotificationCount == 0)
        #expect(item.registeredNotificationCount == 0)
        #expect(JobGraph.lock.withLock { job.asyncWaiters.count } == 0)
        _ = try await withDeadline { try await queue.run { 0 } }  // the queue is idle: a queued body would have run
        #expect(!ran.withLock { $0 })
        group.leave()
    }

    /// A wait cancelled while suspended unlinks itself at once: the object holds nothing for it before its event
    /// comes (a group that never reaches zero does not collect cancelled waits).
    @Test(arguments: [Wait.semaphore, .group, .item, .job])
    func aWaitCancelledWhileSuspendedLeavesNothingBehind(_ wait: Wait) async throws {
        let semaphore = Semaphore(value: 0)
        let group = WorkGroup()
        group.enter()
        let item = WorkItem {}
        let job = Job(name: "never")
        let registered: @Sendable () -> Int = {
            switch wait {
            case .semaphore: semaphore.asyncWaiterCount
            case .group: group.registeredNotificationCount
            case .item: item.registeredNotificationCount
            default: JobGraph.lock.withLock { job.asyncWaiters.count }
            }
        }
        let waiter = WatchedTask {
            switch wait {
            case .semaphore: try await semaphore.wait()
            case .group: try await group.wait()
            case .item: try await item.wait()
            default: try await job.waitUntilFinished()
            }
        }
        try #require(await suspendUntil { registered() == 1 })
        waiter.cancel()
        let outcome = try #require(await waiter.result(), "the cancelled wait did not end")
        #expect(throws: CancellationError.self) { try outcome.get() }
        #expect(registered() == 0)
        #expect(cthr_sem_waiter_count(semaphore.sem) == 0)
        // The event after the cancellation resumes nobody and loses nothing.
        semaphore.signal()
        #expect(semaphore.value == 1)
        group.leave()
        item.cancel()
        job.cancel()
        #expect(registered() == 0)
    }

    /// Cancelling the middle one of three suspended tasks removes it from the list: the others keep their order, and
    /// the signals go to them only.
    @Test func aCancelledWaiterInTheMiddleKeepsTheOthersInOrder() async throws {
        let semaphore = Semaphore(value: 0)
        let order = LockedValue<[Int]>([])
        var waiters: [WatchedTask<Void>] = []
        for index in 0..<3 {
            waiters.append(
                WatchedTask {
                    try await semaphore.wait()
                    order.withLock { $0.append(index) }
                }
            )
            try #require(await suspendUntil { semaphore.asyncWaiterCount == index + 1 })
        }
        waiters[1].cancel()
        let cancelled = try #require(await waiters[1].result(), "the cancelled wait did not end")
        #expect(throws: CancellationError.self) { try cancelled.get() }
        #expect(semaphore.asyncWaiterCount == 2)
        semaphore.signal()
        _ = try #require(await waiters[0].result(), "the first waiter was not resumed")
        semaphore.signal()
        _ = try #require(await waiters[2].result(), "the last waiter was not resumed")
        #expect(order.withLock { $0 } == [0, 2])
        #expect(semaphore.value == 0)
    }

    /// The first task waits in the list with no node, the later ones in nodes behind it: the order holds across the
    /// two, when the first is served while others wait and a newcomer queues behind them, and when the first is
    /// cancelled (the next one takes its place; a task that comes to an empty list again waits with no node).
    @Test func theFirstWaiterWithoutANodeKeepsItsPlaceInTheOrder() async throws {
        let semaphore = Semaphore(value: 0)
        let order = LockedValue<[Int]>([])
        func waiter(_ index: Int) -> WatchedTask<Void> {
            WatchedTask {
                try await semaphore.wait()
                order.withLock { $0.append(index) }
            }
        }
        var waiters = [waiter(0)]
        try #require(await suspendUntil { semaphore.asyncWaiterCount == 1 })
        for index in 1...2 {
            waiters.append(waiter(index))
            try #require(await suspendUntil { semaphore.asyncWaiterCount == index + 1 })
        }
        semaphore.signal()  // serves 0, the one without a node
        _ = try #require(await waiters[0].result(), "the first waiter was not resumed")
        waiters.append(waiter(3))  // queues behind 1 and 2, in a node
        try #require(await suspendUntil { semaphore.asyncWaiterCount == 3 })
        for index in 1...3 {
            semaphore.signal()
            _ = try #require(await waiters[index].result(), "waiter \(index) was not resumed")
        }
        #expect(order.withLock { $0 } == [0, 1, 2, 3])

        // The first one cancelled while another waits behind it: the one behind is next.
        waiters = [waiter(4)]
        try #require(await suspendUntil { semaphore.asyncWaiterCount == 1 })
        waiters.append(waiter(5))
        try #require(await suspendUntil { semaphore.asyncWaiterCount == 2 })
        waiters[0].cancel()
        let cancelled = try #require(await waiters[0].result(), "the cancelled wait did not end")
        #expect(throws: CancellationError.self) { try cancelled.get() }
        #expect(semaphore.asyncWaiterCount == 1)
        // Alone again (no node), then a newcomer behind it, then both served in order.
        semaphore.signal()
        _ = try #require(await waiters[1].result(), "the waiter behind the cancelled one was not resumed")
        waiters = [waiter(6)]
        try #require(await suspendUntil { semaphore.asyncWaiterCount == 1 })
        waiters.append(waiter(7))
        try #require(await suspendUntil { semaphore.asyncWaiterCount == 2 })
        semaphore.signal()
        semaphore.signal()
        for waiter in waiters { _ = try #require(await waiter.result(), "a waiter was not resumed") }
        #expect(order.withLock { $0 } == [0, 1, 2, 3, 5, 6, 7])
        #expect(semaphore.value == 0)
        #expect(cthr_sem_waiter_count(semaphore.sem) == 0)
    }

    /// The cancellation of a task that was served (taken out of the list and resumed, but not yet running again, so
    /// its cancellation handler is still in place) must not take out the task that came to the emptied list after it
    /// and waits in its place with no node: the served wait returns, and the other one keeps waiting for its unit.
    @Test func aLateCancellationLeavesTheNextFirstWaiterAlone() async throws {
        let semaphore = Semaphore(value: 0)
        let held = HeldExecutor()
        let first = Task(executorPreference: held) { try await semaphore.wait() }
        try blockingCall { try held.runHeld() }  // `first` runs until it waits
        try #require(semaphore.asyncWaiterCount == 1)
        semaphore.signal()  // serves `first`, which cannot run again until the executor runs it
        try #require(held.heldCount == 1)
        let second = WatchedTask { try await semaphore.wait() }
        try #require(await suspendUntil { semaphore.asyncWaiterCount == 1 })
        first.cancel()  // runs `first`'s handler now
        #expect(semaphore.asyncWaiterCount == 1, "the late cancellation took out the task that waits now")
        try blockingCall { try held.runHeld() }
        let served = try await withDeadline { await first.result }
        #expect(throws: Never.self) { try served.get() }
        semaphore.signal()
        let outcome = try #require(await second.result(), "the second wait did not end")
        #expect(throws: Never.self) { try outcome.get() }
        #expect(semaphore.value == 0)
        #expect(cthr_sem_waiter_count(semaphore.sem) == 0)
    }

    /// Two suspended tasks and a thread blocked in the synchronous wait: the signals serve the tasks first, in the
    /// order they started waiting, then the thread; no unit is lost or left over.
    @Test func signalsServeSuspendedTasksInOrderThenTheBlockedThread() async throws {
        let semaphore = Semaphore(value: 0)
        let order = LockedValue<[String]>([])
        let thread = try PosixThread {
            if semaphore.wait(timeout: .seconds(20)) { order.withLock { $0.append("thread") } }
        }
        try #require(await suspendUntil { cthr_sem_waiter_count(semaphore.sem) == 1 })
        var tasks: [WatchedTask<Void>] = []
        for index in 0..<2 {
            tasks.append(
                WatchedTask {
                    try await semaphore.wait()
                    order.withLock { $0.append("task \(index)") }
                }
            )
            try #require(await suspendUntil { semaphore.asyncWaiterCount == index + 1 })
        }
        semaphore.signal()
        _ = try #require(await tasks[0].result(), "the first task was not resumed")
        semaphore.signal()
        _ = try #require(await tasks[1].result(), "the second task was not resumed")
        semaphore.signal()
        await thread.join()
        #expect(order.withLock { $0 } == ["task 0", "task 1", "thread"])
        #expect(semaphore.value == 0)
        #expect(cthr_sem_waiter_count(semaphore.sem) == 0)
    }

    /// The cancellation of a suspended semaphore wait races the signal that would resume it: the task is resumed
    /// once, and the unit goes to it (the wait returns) or stays in the semaphore (the wait throws), never both and
    /// never neither.
    @Test func cancellationRacingASignalResumesOnceAndKeepsTheUnit() async throws {
        for _ in 0..<100 {
            let semaphore = Semaphore(value: 0)
            let waiter = WatchedTask { try await semaphore.wait() }
            try #require(await suspendUntil { semaphore.asyncWaiterCount == 1 })
            try #require(blockingCall { runTogether(2) { $0 == 0 ? waiter.cancel() : semaphore.signal() } })
            let outcome = try #require(await waiter.result(), "the wait did not end")
            switch outcome {
            case .success: #expect(semaphore.value == 0)
            case .failure(let error):
                #expect(error is CancellationError)
                #expect(semaphore.value == 1)
            }
            #expect(semaphore.asyncWaiterCount == 0)
            #expect(cthr_sem_waiter_count(semaphore.sem) == 0)
        }
    }

    /// The cancellation of a suspended group wait races the last `leave()`: the task is resumed once, with either
    /// outcome, and the group holds nothing afterwards.
    @Test func cancellationRacingTheLastLeaveResumesOnce() async throws {
        for _ in 0..<100 {
            let group = WorkGroup()
            group.enter()
            let waiter = WatchedTask { try await group.wait() }
            try #require(await suspendUntil { group.registeredNotificationCount == 1 })
            try #require(blockingCall { runTogether(2) { $0 == 0 ? waiter.cancel() : group.leave() } })
            let outcome = try #require(await waiter.result(), "the wait did not end")
            if case .failure(let error) = outcome { #expect(error is CancellationError) }
            #expect(group.registeredNotificationCount == 0)
        }
    }

    /// The lock-free claim of a callback wait: a callback on another thread races the task's cancellation, before or
    /// after the task installed its continuation. Exactly one outcome reaches the task.
    @Test func aCallbackRacingTheCancellationResumesOnce() async throws {
        let queue = ConcurrentQueue(label: "conc.once.callback")
        var values = 0
        var cancellations = 0
        for round in 0..<200 {
            let task = Task {
                try await AsyncResumeOnce<Int>.wait { node in
                    queue.async { node.resume(returning: round) }
                }
            }
            if round % 2 == 0 { task.cancel() } else { queue.async { task.cancel() } }
            switch try await withDeadline({ await task.result }) {
            case .success(let value):
                #expect(value == round)
                values += 1
            case .failure(let error):
                #expect(error is CancellationError)
                cancellations += 1
            }
        }
        #expect(values + cancellations == 200)
    }

    /// A task resumed from another thread before it suspended (the callback came while its `start` ran) goes on at
    /// once, with the value. The Swift runtime does not tell ThreadSanitizer about this ordering (it does when the
    /// task was suspended): in a ThreadSanitizer build this test also checks that the wait tells it, since TSan then
    /// reported the resume's read of the continuation against the task's next use of its frame. The flag below is
    /// relaxed on purpose: it orders nothing for TSan.
    @Test func aTaskResumedBeforeItSuspendsGoesOnWithTheValue() async throws {
        final class Flag: Sendable {
            let value = Atomic<Bool>(false)
        }
        for round in 0..<300 {
            let resumed = Flag()
            var resumer: PosixThread<Void>?
            let value = try await AsyncResumeOnce<Int>.wait { node in
                resumer = try? PosixThread(name: "conc.once.early") {
                    node.resume(returning: round)
                    resumed.value.store(true, ordering: .relaxed)
                }
                while resumer != nil && !resumed.value.load(ordering: .relaxed) { cthr_cpu_relax() }
            }
            #expect(value == round)
            try #require(resumer != nil)
            await resumer?.join()
        }
    }
}

/// A task executor that holds the jobs it gets until ``runHeld()`` runs them, on a thread of its own: it keeps a
/// resumed task from running again for as long as a test needs.
private final class HeldExecutor: TaskExecutor {
    private let jobs = LockedValue<[UnownedJob]>([])

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        jobs.withLock { $0.append(job) }
    }

    /// The jobs held now.
    var heldCount: Int { jobs.withLock { $0.count } }

    /// Runs the held jobs (and those they enqueue meanwhile) on a new thread, and waits for it.
    func runHeld() throws {
        let thread = try PosixThread(name: "conc.once.held") {
            while let job = self.jobs.withLock({ $0.isEmpty ? nil : $0.removeFirst() }) {
                job.runSynchronously(on: self.asUnownedTaskExecutor())
            }
        }
        thread.join()
    }
}
