// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import CThreading
import Glibc
import Synchronization
import Testing

@testable import Threading

/// ``WorkerPool/installAsGlobalConcurrentExecutor()``: each case runs in a child process (the takeover is for the
/// life of a process), installs the executor there, runs its scenario and exits with 0, or with another status after
/// writing what went wrong on stderr. An alarm ends a child that hangs.
@Suite struct GlobalExecutorTests {
    /// The first install succeeds, the second throws `busy`; the default executor is ours from then on.
    @Test func installingTwiceThrowsBusy() async {
        let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
            alarm(30)
            guard !WorkerPool.isGlobalConcurrentExecutor else { exitWith("installed before install", 1) }
            do { try WorkerPool.installAsGlobalConcurrentExecutor() } catch { exitWith("first install: \(error)", 2) }
            guard WorkerPool.isGlobalConcurrentExecutor else { exitWith("not installed after install", 3) }
            do {
                try WorkerPool.installAsGlobalConcurrentExecutor()
                exitWith("the second install did not throw", 4)
            } catch ThreadingError.busy {
            } catch {
                exitWith("second install threw \(error)", 5)
            }
            exit(0)
        }
        expectQuiet(result)
    }

    /// Jobs of a task with no preference run on workers of ``WorkerPool/shared``, before and after a suspension.
    @Test func tasksRunOnTheSharedPool() async {
        let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
            await runInstalled {
                let before = await Task.detached { isOnPool(.shared) }.value
                guard before else { return "a detached task did not run on WorkerPool.shared" }
                let after = await Task.detached {
                    await Task.yield()
                    return isOnPool(.shared)
                }.value
                return after ? nil : "a task did not resume on WorkerPool.shared after a yield"
            }
        }
        expectQuiet(result)
    }

    /// A control without the takeover: the same check fails there (tasks run on the runtime's own threads).
    @Test func withoutTheTakeoverTasksRunElsewhere() async {
        await #expect(processExitsWith: .success) {
            alarm(30)
            let onPool = await Task.detached { isOnPool(.shared) }.value
            exit(onPool ? 1 : 0)
        }
    }

    /// `Task.sleep` waits on the library's timer (at least the duration) and resumes on the pool.
    @Test func aSleepingTaskResumesOnThePoolAfterItsDuration() async {
        let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
            await runInstalled {
                let clock = ContinuousClock()
                let start = clock.now
                let timed = { GlobalPoolExecutor.delayedJobs.load(ordering: .relaxed) }
                let before = timed()
                try? await Task.sleep(for: .milliseconds(50))
                let elapsed = clock.now - start
                guard elapsed >= .milliseconds(50) else { return "slept only \(elapsed)" }
                guard isOnPool(.shared) else { return "resumed off the pool after Task.sleep(for:)" }
                guard timed() == before + 1 else { return "Task.sleep(for:) did not wait on the library's timer" }
                try? await Task.sleep(nanoseconds: 10_000_000)
                guard isOnPool(.shared) else { return "resumed off the pool after Task.sleep(nanoseconds:)" }
                guard timed() == before + 2 else { return "Task.sleep(nanoseconds:) did not wait on our timer" }
                try? await Task.sleep(until: .now + .milliseconds(10), clock: .suspending)
                guard isOnPool(.shared) else { return "resumed off the pool after a SuspendingClock sleep" }
                guard timed() == before + 3 else { return "a SuspendingClock sleep did not wait on our timer" }
                return nil
            }
        }
        expectQuiet(result)
    }

    /// A task sleeping for a minute that is cancelled ends at once with `CancellationError`.
    @Test func cancellingASleepingTaskEndsItsSleep() async {
        let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
            await runInstalled {
                let clock = ContinuousClock()
                let start = clock.now
                let sleeper = Task.detached { () -> Bool in
                    do {
                        try await Task.sleep(for: .seconds(60))
                        return false
                    } catch {
                        return error is CancellationError && isOnPool(.shared)
                    }
                }
                try? await Task.sleep(for: .milliseconds(20))
                sleeper.cancel()
                let cancelled = await sleeper.value
                let elapsed = clock.now - start
                guard cancelled else { return "the sleep did not end with CancellationError on the pool" }
                return elapsed < .seconds(10) ? nil : "the cancelled sleep took \(elapsed)"
            }
        }
        expectQuiet(result)
    }

    /// Task-local values reach child tasks and survive suspensions.
    @Test func taskLocalsFollowTheirTasks() async {
        let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
            await runInstalled {
                await GlobalExecutorTestLocals.$request.withValue(42) {
                    try? await Task.sleep(for: .milliseconds(1))
                    let inChildren = await withTaskGroup(of: Int.self) { group in
                        for _ in 0..<8 { group.addTask { GlobalExecutorTestLocals.request } }
                        return await group.reduce(0, +)
                    }
                    let detached = await Task.detached { GlobalExecutorTestLocals.request }.value
                    if inChildren != 42 * 8 { return "child tasks saw \(inChildren / 8), not 42" }
                    if GlobalExecutorTestLocals.request != 42 { return "the value was lost after a sleep" }
                    return detached == 0 ? nil : "a detached task inherited the value"
                }
            }
        }
        expectQuiet(result)
    }

    /// A task's priority picks the pool lane, and the running unit records it (the watchdog and snapshot name it).
    @Test func taskPrioritiesMapToLanes() async {
        let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
            await runInstalled {
                let cases: [(TaskPriority, String, QoS)] = [
                    (.high, "high", .userInitiated), (.medium, "medium", .default), (.low, "low", .utility),
                    (.background, "background", .background),
                ]
                for (priority, name, lane) in cases {
                    let seen = await Task.detached(priority: priority) { () -> String? in
                        SchedulerThread.current.pointee.worker?.takeUnretainedValue().activity.origin.description
                    }.value
                    guard let seen, seen.contains("a Swift task of priority \(name) ") else {
                        return "a task of priority \(name) ran as \(seen ?? "nothing")"
                    }
                    if QoS(taskPriority: priority) != lane { return "\(name) maps to \(QoS(taskPriority: priority))" }
                }
                return nil
            }
        }
        expectQuiet(result)
    }

    /// A task group of 10,000 children: every child runs once.
    @Test func aTaskGroupOfTenThousandChildren() async {
        let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
            await runInstalled {
                let sum = await withTaskGroup(of: Int.self) { group in
                    for index in 0..<10_000 { group.addTask { isOnPool(.shared) ? index : -1_000_000 } }
                    return await group.reduce(0, +)
                }
                return sum == 49_995_000 ? nil : "the children's sum is \(sum)"
            }
        }
        expectQuiet(result)
    }

    /// A hop to a default actor and to an actor on a ``SerialQueue``: the queue actor runs on its queue, the task
    /// comes back to the pool, and a task preferring another pool runs there.
    @Test func actorHopsAndExecutorPreferenceKeepTheirMeaning() async {
        let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
            await runInstalled {
                let counter = GlobalExecutorTestCounter()
                for _ in 0..<100 { await counter.increment() }
                guard await counter.value == 100 else { return "the default actor lost increments" }
                let queueActor = QueueActor(queue: SerialQueue(label: "global.actor"))
                for _ in 0..<100 {
                    guard await queueActor.isOnQueue() else { return "the queue actor ran off its queue" }
                }
                guard isOnPool(.shared) else { return "did not come back to the pool after the hops" }
                let other = WorkerPool(label: "global.preferred", threads: 1)
                let onOther = await withTaskExecutorPreference(other) { isOnPool(other) }
                await other.shutdownGracefully()
                return onOther ? nil : "a task preferring another pool did not run there"
            }
        }
        expectQuiet(result)
    }

    /// The main actor keeps the runtime's main executor (Dispatch's main queue): `MainActor.run` runs there, isolated
    /// to the main actor and off the pool, and the task comes back to the pool afterwards. (In an async `main` on
    /// Linux, `dispatch_main` has the initial thread exit, so Dispatch runs the main queue on a thread of its own:
    /// the thread is not checked, with or without the takeover.)
    @Test func theMainActorKeepsItsExecutor() async {
        let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
            await runInstalled {
                for _ in 0..<20 {
                    let offPool = await MainActor.run {
                        MainActor.preconditionIsolated()
                        return !isOnPool(.shared)
                    }
                    guard offPool else { return "MainActor.run ran on the pool" }
                    guard isOnPool(.shared) else { return "did not come back to the pool after the main actor" }
                }
                return nil
            }
        }
        expectQuiet(result)
    }

    /// Tasks blocked in a call the pool cannot see (`usleep`), one per pool slot and more, do not stop the others:
    /// the monitor adds workers, and a short task still finishes while they block.
    @Test func aTaskThatBlocksDoesNotStarveTheOthers() async {
        let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
            await runInstalled {
                let latency = await blockedPoolLatency(blockers: WorkerPool.shared.threadCount + 1)
                return latency < .milliseconds(500) ? nil : "a short task waited \(latency) behind blocked tasks"
            }
        }
        expectQuiet(result)
    }

    /// Many tasks that each block briefly (5 ms in `usleep`, a synchronous call in every request handler) keep
    /// finishing units, yet the pool adds workers for the sleeping ones: 100 such tasks per pool slot take well under
    /// the `100 × 5 ms` that the slots alone would need, on at least twice as many threads as slots.
    @Test func tasksThatBlockBrieflyAndOftenAreCompensated() async {
        let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
            await runInstalled {
                let count = 100 * WorkerPool.shared.threadCount
                let clock = ContinuousClock()
                let start = clock.now
                await withTaskGroup(of: Void.self) { group in
                    for _ in 0..<count { group.addTask { usleep(5_000) } }
                }
                let elapsed = clock.now - start
                let threads = WorkerPool.shared.statistics.peakThreads
                let cores = WorkerPool.shared.threadCount
                // ThreadSanitizer slows every task down too much for the time bound; the threads still tell.
                let inTime = elapsed < .milliseconds(300) || faultForkBlockedBySanitizer
                return threads >= 2 * cores && inTime
                    ? nil
                    : "\(count) tasks of 5 ms took \(elapsed) with at most \(threads) threads for \(cores) slots "
                        + "(uncompensated: 500 ms, \(cores) threads)"
            }
        }
        expectQuiet(result)
    }

    /// The control: on the runtime's default executor, as many blocked tasks as it has threads stop a short task
    /// until they return (what the takeover fixes).
    @Test func withoutTheTakeoverABlockedTaskStarvesTheOthers() async {
        await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
            alarm(30)
            let latency = await blockedPoolLatency(blockers: Int(sysconf(Int32(_SC_NPROCESSORS_ONLN))))
            if latency < .milliseconds(700) { exitWith("the default executor did not starve: \(latency)", 1) }
            exit(0)
        }
    }

    /// A task that blocks longer than the stall threshold is reported by the watchdog, with its priority, and listed
    /// by the runtime snapshot while it runs.
    @Test func theWatchdogAndTheSnapshotNameABlockedTask() async {
        let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
            alarm(30)
            do { try WorkerPool.installAsGlobalConcurrentExecutor() } catch { exitWith("install: \(error)", 2) }
            WorkerPool.shared.stallThreshold = .milliseconds(100)
            let started = GlobalExecutorTestFlag()
            let blocked = Task.detached(priority: .low) {
                started.value.store(1, ordering: .releasing)
                usleep(600_000)
            }
            while started.value.load(ordering: .acquiring) == 0 { usleep(1_000) }
            usleep(300_000)
            let runners = RuntimeSnapshot.capture().pools.first { $0.label == WorkerPool.shared.label }?.runners ?? []
            await blocked.value
            let listed = runners.contains { $0.work.contains("a Swift task of priority low") }
            if !listed { exitWith("the snapshot did not list the task: \(runners.map(\.work))", 3) }
            usleep(200_000)
            exit(0)
        }
        let text = exitTestText(result)
        #expect(text.contains("stall: worker pool 'threading.pool'"), "\(text)")
        #expect(
            text.contains("has been running a Swift task of priority low on the global concurrent executor"),
            "\(text)"
        )
    }

    /// `exit` from a task while tasks run, sleep and wait in the pool: the process exits with that status.
    @Test func exitWhileTasksRunSleepAndWait() async {
        await #expect(processExitsWith: .exitCode(7)) {
            alarm(30)
            do { try WorkerPool.installAsGlobalConcurrentExecutor() } catch { exit(2) }
            for _ in 0..<64 { Task.detached { while true { await Task.yield() } } }
            for _ in 0..<64 { Task.detached { try? await Task.sleep(for: .milliseconds(3)) } }
            for _ in 0..<4 { Task.detached { usleep(1_000) } }
            try? await Task.sleep(for: .milliseconds(30))
            Task.detached { exit(7) }
            while true { usleep(100_000) }
        }
    }

    /// After `fork()`, the child runs tasks on its own (new, empty) shared pool: its global executor works there,
    /// which the runtime's Dispatch pool does not promise.
    @Test(.disabled(if: faultForkBlockedBySanitizer, "TSan does not support multi-threaded fork children"))
    func aForkedChildRunsTasks() async {
        let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
            alarm(60)
            do { try WorkerPool.installAsGlobalConcurrentExecutor() } catch { exitWith("install: \(error)", 2) }
            for _ in 0..<16 { Task.detached { try? await Task.sleep(for: .milliseconds(1)) } }
            _ = await Task.detached { 1 }.value
            let status = faultRunForked {
                let done = GlobalExecutorTestFlag()
                Task.detached {
                    let sum = await withTaskGroup(of: Int.self) { group in
                        for index in 0..<100 { group.addTask { index } }
                        return await group.reduce(0, +)
                    }
                    try? await Task.sleep(for: .milliseconds(5))
                    done.value.store(sum == 4_950 && isOnPool(.shared) ? 1 : 2, ordering: .releasing)
                }
                let deadline = cthr_clock_now_ns() + 20_000_000_000
                while done.value.load(ordering: .acquiring) == 0 && cthr_clock_now_ns() < deadline { usleep(1_000) }
                let value = done.value.load(ordering: .acquiring)
                if value != 1 { faultLog("fork: the child's task \(value == 0 ? "never finished" : "went wrong")\n") }
                return value == 1 ? 0 : 1
            }
            if status != 0 { exitWith("the forked child exited with \(status)", 3) }
            exit(0)
        }
        expectQuiet(result)
    }
}

// MARK: Support

enum GlobalExecutorTestLocals {
    @TaskLocal static var request = 0
}

final class GlobalExecutorTestFlag: Sendable {
    let value = Atomic<Int>(0)
}

actor GlobalExecutorTestCounter {
    var value = 0
    func increment() { value += 1 }
}

/// Writes `message` on stderr and exits with `status` (child processes only).
private func exitWith(_ message: String, _ status: Int32) -> Never {
    faultLog("global executor: \(message)\n")
    exit(status)
}

/// In a child process: installs the executor, runs `scenario` in a task, and exits 0 when it returns nil (its
/// message on stderr and status 1 otherwise).
private func runInstalled(_ scenario: @escaping @Sendable () async -> String?) async -> Never {
    alarm(60)
    do { try WorkerPool.installAsGlobalConcurrentExecutor() } catch { exitWith("install: \(error)", 2) }
    if let failure = await Task.detached(operation: scenario).value { exitWith(failure, 1) }
    exit(0)
}

/// The child reported no failure on stderr.
private func expectQuiet(_ result: ExitTest.Result?, sourceLocation: SourceLocation = #_sourceLocation) {
    let text = exitTestText(result)
    #expect(!text.contains("global executor:"), "\(text)", sourceLocation: sourceLocation)
}

/// Starts `blockers` tasks that each block their thread for a second in `usleep` (a call no pool sees), then
/// measures how long a short task takes to run.
private func blockedPoolLatency(blockers: Int) async -> Duration {
    var tasks: [Task<Void, Never>] = []
    for _ in 0..<blockers {
        tasks.append(
            Task.detached {
                usleep(1_000_000)
            }
        )
    }
    // Give them time to occupy the threads (they need not all start: a starving executor may not start them).
    usleep(100_000)
    let clock = ContinuousClock()
    let start = clock.now
    await Task.detached {}.value
    let latency = clock.now - start
    for task in tasks { await task.value }
    return latency
}
