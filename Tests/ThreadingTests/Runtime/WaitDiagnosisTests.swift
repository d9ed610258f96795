// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import CTestSupport
import CThreading
import Glibc
import Synchronization
import Testing

@testable import Threading

/// Waits that look like deadlocks but can end: they are not stopped, and the ones that stall are reported.
@Suite struct WaitDiagnosisTests {
    /// A job waits for a job it added to its own queue: with a free slot the added job runs, and the wait returns.
    @Test func jobWaitingForAJobOfItsQueueWithAFreeSlotFinishes() {
        let queue = JobQueue(name: "wide", maxConcurrentJobs: 2)
        let ran = LockedValue(false)
        let outer = queue.addJob(name: "outer") { _ in
            let inner = queue.addJob(name: "inner") { _ in ran.withLock { $0 = true } }
            _ = inner.waitUntilFinished()
        }
        #expect(outer.waitUntilFinished(timeout: .seconds(20)))
        #expect(ran.withLock { $0 })
    }

    /// A job of a serial queue waits for a job of another queue, and an asynchronous job waits for itself while
    /// another thread finishes it: both end.
    @Test func jobWaitsThatOtherThreadsEndFinish() {
        let serial = JobQueue(name: "serial", maxConcurrentJobs: 1)
        let other = JobQueue(name: "other", maxConcurrentJobs: 1)
        let outer = serial.addJob(name: "outer") { _ in
            _ = other.addJob(name: "elsewhere") { _ in }.waitUntilFinished()
        }
        #expect(outer.waitUntilFinished(timeout: .seconds(20)))
        let finished = AsyncJob(name: "async.self") { job in
            let finisher = try! PosixThread {
                PosixThread.sleep(for: .milliseconds(10))
                job.finish()
            }
            finisher.detach()
            _ = job.waitUntilFinished()
        }
        serial.addJob(finished)
        #expect(finished.waitUntilFinished(timeout: .seconds(20)))
        #expect(finished.state == .finished)
    }

    /// A wait with a timeout for the job itself, its group or its item is a value: it times out.
    @Test func timedSelfWaitsTimeOut() {
        let queue = ConcurrentQueue(label: "misuse.timedSelf")
        let outcomes = LockedValue<[Bool]>([])
        let job = Job(name: "timed") { job in
            let ended = job.waitUntilFinished(timeout: .milliseconds(10))
            outcomes.withLock { $0.append(ended) }
        }
        JobQueue(name: "timed").addJob(job)
        #expect(job.waitUntilFinished(timeout: .seconds(20)))
        let group = WorkGroup()
        queue.async(group: group) {
            let ended = group.wait(timeout: .milliseconds(10))
            outcomes.withLock { $0.append(ended) }
        }
        #expect(group.wait(timeout: .seconds(20)))
        let slot = LockedValue<WorkItem?>(nil)
        let item = WorkItem {
            let ended = slot.withLock { $0 }!.wait(timeout: .milliseconds(10))
            outcomes.withLock { $0.append(ended) }
        }
        slot.withLock { $0 = item }
        queue.async(execute: item)
        #expect(item.wait(timeout: .seconds(20)))
        #expect(outcomes.withLock { $0 } == [false, false, false])
    }

    /// A task of one group waits (no deadline) for another group, and an item's closure for another item: both end.
    @Test func groupAndItemWaitsOnOtherWorkFinish() {
        let queue = ConcurrentQueue(label: "misuse.otherGroup")
        let first = WorkGroup()
        let second = WorkGroup()
        queue.async(group: second) { PosixThread.sleep(for: .milliseconds(5)) }
        queue.async(group: first) { _ = second.wait() }
        #expect(first.wait(timeout: .seconds(20)))
        let other = WorkItem { PosixThread.sleep(for: .milliseconds(5)) }
        let waiting = WorkItem { _ = other.wait() }
        queue.async(execute: waiting)
        queue.async(execute: other)
        #expect(waiting.wait(timeout: .seconds(20)))
    }

    /// A thread suspends a queue, then syncs onto it: not stopped, because another thread may resume the queue (or
    /// release its last handle), which ends the wait; here one does, well before the one-second report.
    @Test func syncOntoAQueueThisThreadSuspendedEndsWhenAnotherThreadResumes() throws {
        let queue = SerialQueue(label: "misuse.suspendedSync")
        let suspended = Semaphore()
        let done = Semaphore()
        let syncer = try PosixThread {
            queue.suspend()
            suspended.signal()
            queue.sync {}
            done.signal()
        }
        #expect(suspended.wait(timeout: .seconds(20)))
        PosixThread.sleep(for: .milliseconds(20))
        queue.resume()
        let finished = done.wait(timeout: .seconds(20))
        #expect(finished)
        if finished { syncer.join() } else { syncer.detach() }
    }

    /// The same sync, left waiting longer than a second (through a target chain): one `stalled wait` line names the
    /// queues and the thread, and the sync still runs once another thread resumes the queue.
    @Test func syncOntoASuspendedQueueIsReportedAfterASecondAndRunsOnResume() async {
        let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
            startExitTestWatchdog()
            let root = SerialQueue(label: "misuse.stalled.root")
            let child = SerialQueue(label: "misuse.stalled.child", target: root)
            root.suspend()
            let rescuer = try! PosixThread {
                PosixThread.sleep(for: .seconds(3))
                root.resume()
            }
            let ran = blockingCall { child.sync { true } }
            blockingCall { rescuer.join() }
            exit(ran ? 0 : 1)
        }
        let text = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(
            text.contains(
                "Threading: stalled wait: sync onto queue 'misuse.stalled.child' (which targets queue "
                    + "'misuse.stalled.root') on thread"
            ),
            "\(text)"
        )
        #expect(
            text.contains(
                "has not started after a second: queue 'misuse.stalled.root' is suspended (suspend() not yet "
                    + "balanced by resume()); the sync starts only once a thread resumes it or releases its last handle"
            ),
            "\(text)"
        )
        #expect(text.split(separator: "stalled wait", omittingEmptySubsequences: false).count == 2, "one line: \(text)")
    }

    /// `MainQueue.drain(until:)` and `runUntilIdle()` from a main-queue task return false without running a task
    /// (the task holds the main queue); unlike `run()` they end, so they are not stopped.
    @Test func mainQueueDrainFromAMainQueueTaskReturnsWithoutRunningATask() async {
        await #expect(processExitsWith: .success) {
            RuntimeThread.designateMainForTesting()
            let outcome = LockedValue<[Bool]?>(nil)
            let later = LockedValue(false)
            MainQueue.shared.async {
                MainQueue.shared.async { later.withLock { $0 = true } }
                let idle = MainQueue.runUntilIdle()
                let drained = MainQueue.drain(until: .now + .milliseconds(20))
                outcome.withLock { $0 = [idle, drained, later.withLock { $0 }] }
            }
            let deadline = ContinuousClock.now + .seconds(20)
            while !later.withLock({ $0 }) && ContinuousClock.now < deadline { MainQueue.runUntilIdle() }
            guard outcome.withLock({ $0 }) == [false, false, false], later.withLock({ $0 }) else { exit(1) }
            exit(0)
        }
    }

    /// A queue's job needs a dependency that was never added to a queue: not provably a deadlock (another thread may
    /// add, start or cancel it), so the wait is not stopped, but after a second it prints one `stalled wait` line
    /// naming the jobs and the thread; here a thread cancels the dependency after 3 s and the wait ends.
    @Test func waitOnANeverAddedDependencyIsReportedAndEndsWhenItIsCancelled() async {
        let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
            startExitTestWatchdog()
            let queue = JobQueue(name: "pipeline")
            let load = Job(name: "load") { _ in }
            let decode = Job(name: "decode") { _ in }
            try! decode.addDependency(load)
            queue.addJob(decode)
            let rescuer = try! PosixThread {
                PosixThread.sleep(for: .seconds(3))
                load.cancel()
            }
            guard blockingCall({ queue.waitUntilAllFinished() }), decode.state == .finished else { exit(1) }
            blockingCall { rescuer.join() }
            exit(0)
        }
        let text = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(
            text.contains("Threading: stalled wait: JobQueue \"pipeline\".waitUntilAllFinished() on thread"),
            "\(text)"
        )
        #expect(
            text.contains(
                "is waiting for Job \"load\", which belongs to no queue and has not started (Job \"decode\" depends "
                    + "on Job \"load\"); it runs only once a thread adds it to a JobQueue, starts or cancels it"
            ),
            "\(text)"
        )
        #expect(text.split(separator: "stalled wait", omittingEmptySubsequences: false).count == 2, "one line: \(text)")
    }

    /// A job waited on while its queue is suspended: the same `stalled wait` line after a second, naming the queue;
    /// the wait ends when another thread resumes the queue.
    @Test func waitOnAJobOfASuspendedQueueIsReportedAndEndsOnResume() async {
        let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
            startExitTestWatchdog()
            let queue = JobQueue(name: "paused")
            queue.suspend()
            let job = queue.addJob(name: "held") { _ in }
            let rescuer = try! PosixThread {
                PosixThread.sleep(for: .seconds(3))
                queue.resume()
            }
            guard blockingCall({ job.waitUntilFinished() }), job.state == .finished else { exit(1) }
            blockingCall { rescuer.join() }
            exit(0)
        }
        let text = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(text.contains("Threading: stalled wait: Job \"held\".waitUntilFinished() on thread"), "\(text)")
        #expect(
            text.contains(
                "is waiting for Job \"held\", which has not started and belongs to JobQueue \"paused\", which is "
                    + "suspended; it starts only once a thread resumes that queue (or releases its last handle) or "
                    + "cancels it, so this wait cannot end before then"
            ),
            "\(text)"
        )
    }
}
