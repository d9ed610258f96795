// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import CTestSupport
import CThreading
import Glibc
import Synchronization
import Testing

@testable import Threading

/// Bad input and misuse of jobs whose outcome is a value or a thrown error (the object stays usable);
/// the table in <doc:Misuse> lists each case.
@Suite struct JobMisuseTests {
    @Test func negativeWaitsOnJobsAndQueues() {
        let queue = JobQueue(name: "misuse.jobs")
        let gate = Semaphore()
        let job = queue.addJob { _ in _ = gate.wait(timeout: .seconds(20)) }
        #expect(!job.waitUntilFinished(timeout: .seconds(-1)))
        #expect(!queue.waitUntilAllFinished(timeout: .nanoseconds(-1)))
        gate.signal()
        #expect(job.waitUntilFinished(timeout: hugeDuration))
        #expect(queue.waitUntilAllFinished(timeout: .seconds(20)))
    }

    @Test func cancelTwiceAndCancelAfterFinishAreNoOps() {
        let queue = JobQueue(name: "misuse.cancel")
        let job = queue.addJob { _ in }
        #expect(job.waitUntilFinished(timeout: .seconds(20)))
        job.cancel()
        job.cancel()
        #expect(job.state == .finished)
        let early = Job { _ in }
        early.cancel()
        early.cancel()
        queue.addJob(early)  // an already-cancelled job is not run
        #expect(early.state == .cancelled)
        #expect(queue.waitUntilAllFinished(timeout: .seconds(20)))
    }

    @Test func asyncJobFinishTwiceIsIgnored() {
        let queue = JobQueue(name: "misuse.asyncjob")
        let job = AsyncJob { job in
            job.finish()
            job.finish(throwing: CancellationError())
            job.finish()
        }
        queue.addJob(job)
        #expect(job.waitUntilFinished(timeout: .seconds(20)))
        #expect(job.state == .finished)
        #expect(job.error == nil)
    }

    @Test func inputOfAMissingTypeThrowsInvalidArgument() throws {
        let queue = JobQueue(name: "misuse.input")
        let producer = ResultJob<Int> { _ in 1 }
        let outcome = LockedValue<(any Error)?>(nil)
        let consumer = Job { job in
            do {
                _ = try job.input(String.self)
            } catch {
                outcome.withLock { $0 = error }
            }
        }
        try consumer.addDependency(producer)
        queue.addJobs([consumer, producer], waitUntilFinished: false)
        #expect(queue.waitUntilAllFinished(timeout: .seconds(20)))
        #expect(outcome.withLock { $0 as? ThreadingError } == ThreadingError.invalidArgument)
    }

    @Test func duplicateDependencyIsIgnored() throws {
        let a = Job { _ in }
        let b = Job { _ in }
        try b.addDependency(a)
        try b.addDependency(a)
        #expect(b.dependencies.count == 1)
        b.removeDependency(a)
        b.removeDependency(a)  // removing a missing dependency: no effect
        #expect(b.dependencies.isEmpty)
    }

    @Test func disposingAScheduledActionTwiceIsANoOp() {
        let scheduler = CurrentThreadScheduler()
        var ran = 0
        _ = scheduler.schedule {
            let later = scheduler.schedule { ran += 10 }
            later.dispose()
            later.dispose()
            #expect(later.isDisposed)
            ran += 1
        }
        #expect(ran == 1)
    }
}
