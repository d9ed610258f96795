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
        let log = TestLog()
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
        let log = TestLog()
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
        let log = TestLog()
        queue.suspend()
        let jobs = (1...5).map { value in queue.addJob { _ in log.append(value) } }
        queue.cancelAll()
        #expect(queue.jobCount == 0)
        #expect(queue.waitUntilAllFinished(timeout: .seconds(1)))
        queue.resume()
        #expect(jobs.allSatisfy { $0.state == .cancelled })
        #expect(log.values.isEmpty)
    }

    @Test("jobs and jobCount follow members that leave from the middle, the front and the back")
    func membersLeaveInAnyOrder() {
        let queue = JobQueue(name: "members", maxConcurrentJobs: 1)
        let log = TestLog()
        queue.suspend()
        let jobs = (0..<5).map { value in queue.addJob { _ in log.append(value) } }
        func members() -> Set<ObjectIdentifier> { Set(queue.jobs.map(ObjectIdentifier.init)) }
        #expect(members() == Set(jobs.map(ObjectIdentifier.init)))
        for (left, index) in [2, 0, 4].enumerated() {
            jobs[index].cancel()
            #expect(queue.jobCount == 4 - left)
            #expect(!members().contains(ObjectIdentifier(jobs[index])))
        }
        #expect(members() == [ObjectIdentifier(jobs[1]), ObjectIdentifier(jobs[3])])
        jobs[1].cancel()  // again: an ended job leaves once
        jobs[1].cancel()
        #expect(queue.jobCount == 1)
        queue.resume()
        #expect(queue.waitUntilAllFinished(timeout: .seconds(10)))
        #expect(log.values == [3])
        #expect(queue.jobCount == 0 && queue.jobs.isEmpty)
        // The queue takes members again after it emptied (held, so that the job is still a member when read).
        queue.suspend()
        let again = queue.addJob { _ in log.append(5) }
        #expect(queue.jobs.map(ObjectIdentifier.init) == [ObjectIdentifier(again)])
        queue.resume()
        #expect(again.waitUntilFinished(timeout: .seconds(10)))
        #expect(log.values == [3, 5])
    }

    @Test("addJobs(waitUntilFinished: true) returns after all ended")
    func addJobsWaits() {
        let queue = JobQueue(name: "add-wait")
        let log = TestLog()
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

    @Test(
        "releasing a suspended queue resumes it: every job runs once, FIFO at width 1",
        arguments: [1, 2]
    )
    func releasingASuspendedQueueRunsItsJobs(width: Int) {
        let log = TestLog()
        let jobs: [Job]
        do {
            let queue = JobQueue(name: "suspended.released.\(width)", maxConcurrentJobs: width)
            queue.suspend()
            jobs = (1...5).map { value in queue.addJob(name: "job-\(value)") { _ in log.append(value) } }
            #expect(!queue.waitUntilAllFinished(timeout: .milliseconds(20)))
            #expect(log.values.isEmpty)
            // The last handle goes here; nobody could call resume() any more.
        }
        for job in jobs { #expect(job.waitUntilFinished(timeout: .seconds(10)), "\(job) never ran") }
        #expect(jobs.allSatisfy { $0.state == .finished })
        if width == 1 {
            #expect(log.values == [1, 2, 3, 4, 5])
        } else {
            #expect(log.values.sorted() == [1, 2, 3, 4, 5])
        }
    }

    @Test("a released suspended queue frees its handle at once and its core after the work")
    func releasedSuspendedQueueIsFreedAfterItsWork() {
        weak var weakHandle: JobQueue?
        weak var weakCore: JobQueueCore?
        weak var weakJob: Job?
        let gate = Semaphore()
        let log = TestLog()
        do {
            let queue = JobQueue(name: "suspended.freed", maxConcurrentJobs: 1)
            queue.suspend()
            let job = queue.addJob(name: "held") { _ in
                if gate.wait(timeout: .seconds(10)) { log.append(1) }
            }
            weakHandle = queue
            weakCore = queue.core
            weakJob = job
        }
        #expect(weakHandle == nil)
        // The core holds the job and lives on to run it.
        #expect(weakCore != nil)
        #expect(waitUntil { weakJob?.isExecuting == true })
        gate.signal()
        #expect(waitUntil { weakCore == nil && weakJob == nil })
        #expect(log.values == [1])
    }

    @Test("Job.queue is the caller's queue while it is held, then a new handle that also resumes on release")
    func jobQueueHandle() throws {
        let gate = Semaphore()
        let log = TestLog()
        let held: Job
        weak var weakHandle: JobQueue?
        do {
            let queue = JobQueue(name: "handle", maxConcurrentJobs: 2)
            held = queue.addJob(name: "held") { _ in _ = gate.wait(timeout: .seconds(10)) }
            #expect(held.queue === queue)
            weakHandle = queue
        }
        #expect(weakHandle == nil)
        let later: Job
        do {
            let again = try #require(held.queue)
            #expect(again.name == "handle" && again.jobCount == 1)
            #expect(held.queue === again)
            again.suspend()
            later = again.addJob(name: "later") { _ in log.append(2) }
            #expect(!later.waitUntilFinished(timeout: .milliseconds(20)))
        }
        // Releasing the new handle resumed the queue.
        #expect(later.waitUntilFinished(timeout: .seconds(10)))
        #expect(log.values == [2])
        gate.signal()
        #expect(held.waitUntilFinished(timeout: .seconds(10)))
        #expect(held.queue == nil)
    }

    @Test("addOperations(_:waitUntilFinished:): normal, low, veryHigh, veryLow at once on width 1 run veryHigh first")
    func batchAddLetsPriorityDecide() throws {
        let queue = JobQueue(name: "batch", maxConcurrentJobs: 1)
        let log = TestLog()
        let priorities: [Job.Priority] = [.normal, .low, .veryHigh, .veryLow]
        let jobs = priorities.enumerated().map { index, priority in
            Job(name: "batch-\(index)", priority: priority) { _ in log.append(index) }
        }
        // `waitUntilFinished: true` has no deadline of its own: the adding thread's join gives it one.
        let adder = try PosixThread(name: "adder") { queue.addJobs(jobs, waitUntilFinished: true) }
        #expect(adder.join(timeout: testDeadline) != nil)
        #expect(log.values == [2, 0, 1, 3])
        #expect(queue.jobCount == 0)
    }

    @Test("a queued job's observers hear executing on the thread that runs it, before its body, then its end")
    func observersOfAQueuedJob() {
        let queue = JobQueue(name: "observed")
        let heard = LockedValue<[(state: Job.State, thread: UInt64)]>([])
        let bodyThread = Atomic<UInt64>(0)
        let job = Job(name: "observed") { _ in
            // The executing observer ran already, on this thread.
            bodyThread.store(UInt64(currentThreadID), ordering: .relaxed)
            heard.withLock { $0.append((.executing, 0)) }
        }
        job.observeState { _, state in heard.withLock { $0.append((state, UInt64(currentThreadID))) } }
        queue.addJob(job)
        #expect(job.waitUntilFinished(timeout: testDeadline))
        #expect(queue.waitUntilAllFinished(timeout: testDeadline))
        // The end wakes the job's waiters before it tells the observers (`Job/addCompletionHandler(_:)` says so): a
        // waiter may look before the end's observer ran on the ending thread, so it waits for that call.
        #expect(waitUntil { heard.withLock { $0.count } >= 3 })
        let events = heard.withLock { $0 }
        #expect(events.map(\.state) == [.executing, .executing, .finished], "observer, body, observer")
        #expect(events.first?.thread == bodyThread.load(ordering: .relaxed))
    }

    @Test("width 1: a job's end starts the job that became ready behind it; an end that empties the queue starts none")
    func endStartsTheNextReadyJob() throws {
        let queue = JobQueue(name: "next", maxConcurrentJobs: 1)
        let log = TestLog()
        for round in 0..<50 {
            let gate = QueueGate()
            // The first job holds the only slot while the second is added: the first's end must start the second.
            let first = queue.addJob { _ in
                _ = gate.wait()
                log.append(round * 10 + 1)
            }
            let second = queue.addJob { _ in log.append(round * 10 + 2) }
            #expect(second.state == .ready)
            gate.open()
            try #require(first.waitUntilFinished(timeout: testDeadline), "round \(round)")
            try #require(second.waitUntilFinished(timeout: testDeadline), "round \(round)")
            // The second's end left the queue idle: a job added now starts from its own add.
            try #require(queue.waitUntilAllFinished(timeout: testDeadline), "round \(round)")
            let third = queue.addJob { _ in log.append(round * 10 + 3) }
            try #require(third.waitUntilFinished(timeout: testDeadline), "round \(round)")
        }
        let expected: [Int] = (0..<50).flatMap { (round: Int) -> [Int] in
            [round * 10 + 1, round * 10 + 2, round * 10 + 3]
        }
        #expect(log.values == expected)
    }

    @Test("width 1: a job added alone while a ready job waits for the freed slot runs after it (added by an observer)")
    func aJobAddedBesideAWaitingReadyJobRunsAfterIt() throws {
        let queue = JobQueue(name: "behind", maxConcurrentJobs: 1)
        let log = TestLog()
        for round in 0..<20 {
            let gate = QueueGate()
            let third = Job { _ in log.append(round * 10 + 3) }
            let first = Job { _ in
                _ = gate.wait()
                log.append(round * 10 + 1)
            }
            // Told of the end after the queue freed the slot and before the second job is started for it: the slot
            // is free and the second job is ready in the queue, so the third, added alone now, must queue behind it.
            first.observeState { _, state in
                if state.isEnded { queue.addJob(third) }
            }
            queue.addJob(first)
            let second = queue.addJob { _ in log.append(round * 10 + 2) }
            #expect(second.state == .ready)
            gate.open()
            try #require(third.waitUntilFinished(timeout: testDeadline), "round \(round)")
            try #require(queue.waitUntilAllFinished(timeout: testDeadline), "round \(round)")
        }
        let expected: [Int] = (0..<20).flatMap { (round: Int) -> [Int] in
            [round * 10 + 1, round * 10 + 2, round * 10 + 3]
        }
        #expect(log.values == expected)
    }

    @Test("jobCount counts no ended job right after a wait returns (on the job, its queue, or a dependent's queue)")
    func jobCountIsExactAfterWaits() throws {
        var miscounts: [String] = []
        for round in 0..<200 {
            let first = JobQueue(name: "first")
            let dependentQueue = JobQueue(name: "dependent")
            let job = Job(name: "job") { _ in }
            let dependent = Job(name: "dependent") { _ in }
            try dependent.addDependency(job)
            dependentQueue.addJob(dependent)
            first.addJob(job)
            guard dependentQueue.waitUntilAllFinished(timeout: testDeadline) else {
                Issue.record("round \(round): the dependent queue did not finish")
                return
            }
            if first.jobCount != 0 { miscounts.append("round \(round): first queue after the dependent queue") }
            if dependentQueue.jobCount != 0 { miscounts.append("round \(round): dependent queue after its wait") }

            let single = JobQueue(name: "single")
            let alone = single.addJob(name: "alone") { _ in }
            guard alone.waitUntilFinished(timeout: testDeadline) else {
                Issue.record("round \(round): the job did not finish")
                return
            }
            if single.jobCount != 0 { miscounts.append("round \(round): queue after waiting for its job") }
            guard single.waitUntilAllFinished(timeout: testDeadline) else { return }
            if single.jobCount != 0 { miscounts.append("round \(round): queue after its own wait") }
        }
        #expect(miscounts.count == 0, "first miscounts: \(miscounts.prefix(5))")
    }
}
