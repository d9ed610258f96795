// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import Glibc
import Testing

@testable import Threading

/// The traps of `WorkerPool` (see the Misuse article): each names the pool and the call.
@Suite struct WorkerPoolCrashTests {
    private func stderr(of result: ExitTest.Result?) -> String {
        String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
    }

    /// `async` on a queue of a pool that was shut down traps, naming the pool and the queue.
    @Test func submissionAfterShutdownTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let pool = WorkerPool(label: "crash.pool")
            let queue = SerialQueue(label: "crash.queue", pool: pool)
            poolTestShutDown(pool)
            queue.async {}
        }
        let text = stderr(of: result)
        #expect(text.contains("worker pool 'crash.pool' is shut down"), "stderr: \(text)")
        #expect(text.contains("async on queue 'crash.queue'"), "stderr: \(text)")
        #expect(text.contains("tryAsync"), "the message names the recoverable form: \(text)")
    }

    /// Registering a notification on a queue of a shut-down pool traps as `async` does.
    @Test func notifyOnAShutDownPoolTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let pool = WorkerPool(label: "crash.notify")
            let queue = SerialQueue(label: "crash.notify.queue", pool: pool)
            poolTestShutDown(pool)
            let group = WorkGroup()
            group.enter()
            group.notify(queue: queue) {}
        }
        let text = stderr(of: result)
        #expect(text.contains("WorkGroup.notify(queue:) on queue 'crash.notify.queue'"), "stderr: \(text)")
        #expect(text.contains("worker pool 'crash.notify' is shut down"), "stderr: \(text)")
    }

    /// Adding a job to a job queue of a shut-down pool traps too.
    @Test func addingAJobAfterShutdownTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let pool = WorkerPool(label: "crash.jobs")
            let jobs = JobQueue(name: "crash.jobqueue", pool: pool)
            poolTestShutDown(pool)
            jobs.addJob(Job { _ in })
        }
        let text = stderr(of: result)
        #expect(text.contains("worker pool 'crash.jobs' is shut down"), "stderr: \(text)")
        #expect(text.contains("crash.jobqueue"), "stderr: \(text)")
    }

    /// The process-wide pools are never shut down.
    @Test func shuttingDownTheSharedPoolTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            poolTestShutDown(WorkerPool.shared)
        }
        #expect(stderr(of: result).contains("the process-wide pools are never shut down"))
    }

    /// A pool's own task cannot shut it down (it would wait for itself).
    @Test func shutdownFromThePoolsOwnThreadTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let pool = WorkerPool(label: "crash.self")
            SerialQueue(label: "crash.self.q", pool: pool).async { poolTestShutDown(pool) }
            sleep(20)
        }
        #expect(stderr(of: result).contains("called from a thread of the pool itself"))
    }

    /// A queue runs on its target's pool: naming a different pool as well traps.
    @Test func targetOnAnotherPoolTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let pool = WorkerPool(label: "crash.other")
            let target = SerialQueue(label: "crash.target")
            _ = SerialQueue(label: "crash.child", target: target, pool: pool)
        }
        #expect(stderr(of: result).contains("runs on its target's pool"))
    }

    /// A pool needs at least one thread.
    @Test func zeroThreadsTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = WorkerPool(label: "crash.zero", threads: 0)
        }
        #expect(stderr(of: result).contains("the thread count must be ≥ 1"))
    }

    /// A thread count above the pool limit (4,096) traps with the argument and the limit, instead of overflowing
    /// while sizing the pool (a bare SIGILL before) or allocating per-thread structures for it.
    @Test func tooManyThreadsTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = WorkerPool(label: "crash.huge", threads: Int.max)
        }
        let text = stderr(of: result)
        #expect(
            text.contains("WorkerPool(label: \"crash.huge\", threads: \(Int.max)): the thread count must be ≤ 4096"),
            "stderr: \(text)"
        )
        let justAbove = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = WorkerPool(label: "crash.above", threads: 4097, kind: .blocking)
        }
        let aboveText = stderr(of: justAbove)
        #expect(aboveText.contains("threads: 4097): the thread count must be ≤ 4096"), "stderr: \(aboveText)")
    }
}
