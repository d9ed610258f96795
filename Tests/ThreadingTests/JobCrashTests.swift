// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

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
}
