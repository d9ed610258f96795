// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import Glibc
import Testing

@testable import Threading

/// Job misuse that traps, checked in a child process together with the message it prints.
@Suite("Job misuse traps")
struct JobCrashTests {
    @Test("adding a job to a second queue traps, naming the job and the queue")
    func addToTwoQueues() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let first = JobQueue(name: "first")
            let second = JobQueue(name: "second")
            first.suspend()
            let job = Job(name: "twice") { _ in }
            first.addJob(job)
            second.addJob(job)
        }
        let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(message.contains("JobQueue \"second\".addJob(_:): cannot add Job \"twice\""), "\(message)")
        #expect(message.contains("already belongs to JobQueue \"first\""), "\(message)")
    }

    @Test("a batch holding the same job twice traps on the second, naming the job and addJobs")
    func batchWithAJobTwice() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let queue = JobQueue(name: "batch")
            let job = Job(name: "twice") { _ in }
            queue.addJobs([job, job], waitUntilFinished: false)
        }
        let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(
            message.contains("JobQueue \"batch\".addJobs(_:waitUntilFinished:): cannot add Job \"twice\""),
            "\(message)"
        )
        #expect(message.contains("already belongs to JobQueue \"batch\""), "\(message)")
    }

    @Test("start() on a job that waits for a dependency traps")
    func startWaiting() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let job = Job(name: "early") { _ in }
            try? job.addDependency(Job(name: "first") { _ in })
            job.start()
        }
        let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(message.contains("Job.start(): Job \"early\" cannot start because its state is waiting"), "\(message)")
    }

    @Test("maxConcurrentJobs below 1 traps")
    func zeroWidth() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = JobQueue(name: "empty", maxConcurrentJobs: 0)
        }
        let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(message.contains("maxConcurrentJobs must be ≥ 1"), "\(message)")
    }

    // MARK: Waits that could never end (each child waits with a deadline: without the diagnosis it exits
    // successfully after it, which fails the test)

    @Test("a job that waits for itself from its body traps, naming the job and the thread")
    func jobWaitingForItselfTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let queue = JobQueue(name: "self.wait")
            let job = Job(name: "selfish") { job in _ = job.waitUntilFinished() }
            queue.addJob(job)
            _ = blockingCall { job.waitUntilFinished(timeout: .seconds(20)) }
        }
        let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(
            message.contains("Threading: deadlock: Job \"selfish\".waitUntilFinished() on thread 'threading."),
            "\(message)"
        )
        #expect(message.contains("which is running the body of Job \"selfish\""), "\(message)")
        #expect(message.contains("Job \"selfish\" ends only when its body returns"), "\(message)")
        #expect(message.contains("so the program stops instead of hanging"), "\(message)")
    }

    @Test("a job of a serial queue that adds a job to its queue and waits for it traps (the OperationQueue deadlock)")
    func serialQueueJobWaitingForAJobItAddedTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let queue = JobQueue(name: "serial", maxConcurrentJobs: 1)
            let outer = Job(name: "outer") { _ in
                queue.addJobs([Job(name: "inner") { _ in }], waitUntilFinished: true)
            }
            queue.addJob(outer)
            _ = blockingCall { outer.waitUntilFinished(timeout: .seconds(20)) }
        }
        let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(message.contains("Threading: deadlock: Job \"inner\".waitUntilFinished() on thread"), "\(message)")
        #expect(message.contains("which is running the body of Job \"outer\""), "\(message)")
        #expect(
            message.contains(
                "Job \"inner\" has not started and belongs to JobQueue \"serial\", whose maxConcurrentJobs slot(s) "
                    + "(1) are all held by the job(s) this thread is running"
            ),
            "\(message)"
        )
    }

    @Test("a job that waits for a job depending on it traps, naming the dependency")
    func jobWaitingForItsDependentTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let queue = JobQueue(name: "pair")
            let later = LockedValue<Job?>(nil)
            let first = Job(name: "first") { _ in _ = later.withLock { $0 }!.waitUntilFinished() }
            let second = Job(name: "second") { _ in }
            try! second.addDependency(first)
            later.withLock { $0 = second }
            queue.addJobs([first, second], waitUntilFinished: false)
            _ = blockingCall { first.waitUntilFinished(timeout: .seconds(20)) }
        }
        let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(message.contains("Threading: deadlock: Job \"second\".waitUntilFinished()"), "\(message)")
        #expect(
            message.contains(
                "Job \"second\" depends on Job \"first\": Job \"first\", whose body this thread is running"
            ),
            "\(message)"
        )
    }

    @Test("waitUntilAllFinished() from a job of the same queue traps, naming the queue and the job")
    func waitUntilAllFinishedFromAJobOfTheQueueTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let queue = JobQueue(name: "own")
            let job = queue.addJob(name: "inside") { _ in _ = queue.waitUntilAllFinished() }
            _ = blockingCall { job.waitUntilFinished(timeout: .seconds(20)) }
        }
        let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(
            message.contains("Threading: deadlock: JobQueue \"own\".waitUntilAllFinished() on thread"),
            "\(message)"
        )
        #expect(
            message.contains("JobQueue \"own\" holds Job \"inside\", whose body this thread is running"),
            "\(message)"
        )
    }
}
