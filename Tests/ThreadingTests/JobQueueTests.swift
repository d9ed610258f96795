// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import Synchronization
import Testing

@testable import Threading

@Suite("JobQueue", .serialized)
struct JobQueueTests {
    @Test("a suspended width-1 queue runs [1...5] in FIFO order after resume")
    func fifoAfterResume() {
        let queue = JobQueue(name: "fifo", maxConcurrentJobs: 1)
        let log = JobLog()
        queue.suspend()
        for value in 1...5 { queue.addJob { _ in log.append(value) } }
        #expect(queue.jobCount == 5)
        #expect(log.values.isEmpty)
        queue.resume()
        #expect(queue.waitUntilAllFinished(timeout: .seconds(10)))
        #expect(log.values == [1, 2, 3, 4, 5])
        #expect(queue.jobCount == 0)
    }

    @Test("priorities: veryHigh first, giving [5, 4, 3, 2, 1]")
    func priorities() {
        let queue = JobQueue(name: "priorities", maxConcurrentJobs: 1)
        let log = JobLog()
        queue.suspend()
        for (value, priority) in zip(1...5, Job.Priority.allCases) {
            queue.addJob(priority: priority) { _ in log.append(value) }
        }
        queue.resume()
        #expect(queue.waitUntilAllFinished(timeout: .seconds(10)))
        #expect(log.values == [5, 4, 3, 2, 1])
    }

    @Test("width 2 runs two jobs at the same time (rendezvous)")
    func widthTwoOverlaps() {
        let queue = JobQueue(name: "width2", maxConcurrentJobs: 2)
        let first = Semaphore()
        let second = Semaphore()
        let met = Atomic<Int>(0)
        // Each job announces itself and waits for the other: only possible when both are inside at once.
        queue.addJob { _ in
            first.signal()
            if second.wait(timeout: .seconds(10)) { met.add(1, ordering: .relaxed) }
        }
        queue.addJob { _ in
            second.signal()
            if first.wait(timeout: .seconds(10)) { met.add(1, ordering: .relaxed) }
        }
        #expect(queue.waitUntilAllFinished(timeout: .seconds(20)))
        #expect(met.load(ordering: .relaxed) == 2)
    }

    @Test("width 1 never overlaps")
    func widthOneSerial() {
        let queue = JobQueue(name: "width1", maxConcurrentJobs: 1)
        let inside = Atomic<Int>(0)
        let overlapped = Atomic<Bool>(false)
        for _ in 0..<20 {
            queue.addJob { _ in
                if inside.add(1, ordering: .relaxed).newValue > 1 { overlapped.store(true, ordering: .relaxed) }
                PosixThread.yield()
                inside.subtract(1, ordering: .relaxed)
            }
        }
        #expect(queue.waitUntilAllFinished(timeout: .seconds(10)))
        let didOverlap = overlapped.load(ordering: .relaxed)
        #expect(!didOverlap)
    }

    @Test("cancelAll while suspended: nothing runs and the queue empties")
    func cancelWhileSuspended() {
        let queue = JobQueue(name: "cancel-suspended", maxConcurrentJobs: 1)
        let log = JobLog()
        queue.suspend()
        let jobs = (1...5).map { value in queue.addJob { _ in log.append(value) } }
        queue.cancelAll()
        #expect(queue.jobCount == 0)
        #expect(queue.waitUntilAllFinished(timeout: .seconds(1)))
        queue.resume()
        #expect(jobs.allSatisfy { $0.state == .cancelled })
        #expect(log.values.isEmpty)
    }

    @Test("addJobs(waitUntilFinished: true) returns after all ended")
    func addJobsWaits() {
        let queue = JobQueue(name: "add-wait")
        let log = JobLog()
        let jobs = (1...4).map { value in Job { _ in log.append(value) } }
        queue.addJobs(jobs, waitUntilFinished: true)
        #expect(log.values.sorted() == [1, 2, 3, 4])
        #expect(jobs.allSatisfy { $0.isFinished })
    }

    @Test("waitUntilAllFinished times out while a job is held")
    func waitTimesOut() {
        let queue = JobQueue(name: "timeout")
        let gate = Semaphore()
        queue.addJob { _ in _ = gate.wait(timeout: .seconds(10)) }
        #expect(!queue.waitUntilAllFinished(timeout: .milliseconds(20)))
        gate.signal()
        #expect(queue.waitUntilAllFinished(timeout: .seconds(10)))
    }

    @Test("raising maxConcurrentJobs starts waiting jobs")
    func raiseWidth() {
        let queue = JobQueue(name: "raise", maxConcurrentJobs: 1)
        let first = Semaphore()
        let second = Semaphore()
        queue.addJob { _ in
            first.signal()
            _ = second.wait(timeout: .seconds(10))
        }
        let later = queue.addJob { _ in second.signal() }
        #expect(first.wait(timeout: .seconds(10)))
        #expect(!later.waitUntilFinished(timeout: .milliseconds(20)))
        queue.maxConcurrentJobs = 2
        #expect(queue.waitUntilAllFinished(timeout: .seconds(10)))
    }
}
