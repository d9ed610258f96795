// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import CThreading
import Synchronization
import Testing

@testable import Threading

/// A subclass with its own `main`, as an `Operation` subclass such as a `DataLoadOperation` has.
final class CountingJob: Job, @unchecked Sendable {
    let log: TestLog
    let value: Int

    init(_ value: Int, log: TestLog) {
        self.value = value
        self.log = log
        super.init(name: "count-\(value)")
    }

    override func main() throws {
        if isCancelled { return }
        log.append(value)
    }
}

@Suite("Job life cycle")
struct JobTests {
    @Test("a job made without a name is named job-N, N counting the process's unnamed jobs; a given name is kept")
    func unnamedJobsAreNumbered() throws {
        let first = Job()
        let second = Job { _ in }
        let named = Job(name: "named")
        // Other suites make jobs meanwhile: the second number is larger, not necessarily the next one.
        #expect(first.name.hasPrefix("job-") && second.name.hasPrefix("job-"))
        let firstNumber = try #require(Int(first.name.dropFirst("job-".count)), "\(first.name)")
        let secondNumber = try #require(Int(second.name.dropFirst("job-".count)), "\(second.name)")
        #expect(firstNumber >= 1 && secondNumber > firstNumber)
        #expect(first.name == "job-\(firstNumber)")  // the same name at every read
        #expect(named.name == "named" && named.description == "Job \"named\"")
    }

    @Test("a closure job runs once and ends finished, observed in order")
    func closureJobStates() {
        let log = TestLog()
        let states = LockedValue<[Job.State]>([])
        let job = Job(name: "closure") { _ in log.append(1) }
        #expect(job.state == .ready)
        #expect(job.isReady)
        job.observeState { _, state in states.withLock { $0.append(state) } }
        job.start()
        #expect(job.state == .finished)
        #expect(job.isFinished && !job.isCancelled && job.error == nil)
        #expect(log.values == [1])
        #expect(states.withLock { $0 } == [.executing, .finished])
        #expect(job.waitUntilFinished(timeout: .seconds(1)))
    }

    @Test("every thread asleep on a job, or on its queue going idle, wakes when the job ends")
    func everySleeperWakesWhenTheJobEnds() {
        let jobs = JobQueue(name: "job.sleepers")
        for _ in 0..<100 {
            let job = Job { _ in }
            let woke = Atomic<Int>(0)
            jobs.suspend()
            jobs.addJob(job)
            runTogether(5) { index in
                switch index {
                case 0:
                    _ = cthr_sleep_ns(200_000)
                    jobs.resume()
                case 1, 2:
                    if jobs.waitUntilAllFinished(timeout: testDeadline) { woke.add(1, ordering: .relaxed) }
                default:
                    if job.waitUntilFinished(timeout: testDeadline) { woke.add(1, ordering: .relaxed) }
                }
            }
            #expect(woke.load(ordering: .relaxed) == 4)
            #expect(job.isFinished)
        }
    }

    @Test("a subclass runs its own main on a queue")
    func subclassJob() {
        let log = TestLog()
        let queue = JobQueue(name: "subclass")
        let job = CountingJob(7, log: log)
        queue.addJob(job)
        #expect(job.waitUntilFinished(timeout: .seconds(10)))
        #expect(log.values == [7])
        #expect(job.state == .finished)
    }

    @Test("a job cancelled before it starts never runs and ends at once")
    func cancelBeforeStart() {
        let log = TestLog()
        let job = Job { _ in log.append(1) }
        let handled = Atomic<Int>(0)
        job.addCompletionHandler { job in
            #expect(job.state == .cancelled)
            handled.add(1, ordering: .relaxed)
        }
        job.cancel()
        #expect(job.state == .cancelled && job.isCancelled && job.isFinished)
        #expect(handled.load(ordering: .relaxed) == 1)
        job.start()  // a cancelled job is not run
        #expect(log.values.isEmpty)
        // A handler added after the end runs at once.
        job.addCompletionHandler { _ in handled.add(1, ordering: .relaxed) }
        #expect(handled.load(ordering: .relaxed) == 2)
    }

    @Test("cancel while running is cooperative: the body sees isCancelled and the job ends cancelled")
    func cancelWhileRunning() {
        let queue = JobQueue(name: "cooperative")
        let entered = Semaphore()
        let sawCancel = Atomic<Bool>(false)
        let job = queue.addJob(name: "loop") { job in
            entered.signal()
            let deadline = ContinuousClock.now + .seconds(10)
            while !job.isCancelled && ContinuousClock.now < deadline { PosixThread.yield() }
            sawCancel.store(job.isCancelled, ordering: .relaxed)
        }
        #expect(entered.wait(timeout: .seconds(10)))
        #expect(job.isExecuting)
        job.cancel()
        #expect(job.waitUntilFinished(timeout: .seconds(10)))
        let observed = sawCancel.load(ordering: .relaxed)
        #expect(observed)
        #expect(job.state == .cancelled)
    }

    @Test("a throwing job ends failed with its error")
    func throwingJob() {
        let job = Job(name: "thrower") { _ in throw JobTestError(tag: 42) }
        job.start()
        #expect(job.state == .failed)
        #expect((job.error as? JobTestError) == JobTestError(tag: 42))
    }

    @Test("an asynchronous job holds its slot until it calls finish")
    func asyncJob() {
        let queue = JobQueue(name: "async", maxConcurrentJobs: 1)
        let log = TestLog()
        let helper = SerialQueue(label: "async.helper")
        let release = Semaphore()
        let load = AsyncJob(name: "load") { job in
            helper.async {
                _ = release.wait(timeout: .seconds(10))
                log.append(1)
                job.finish()
            }
        }
        let next = Job(name: "next") { _ in log.append(2) }
        queue.addJobs([load, next], waitUntilFinished: false)
        #expect(waitUntil { load.isExecuting })
        // The body returned, yet the job still executes and holds the only slot.
        #expect(next.isReady && !next.isFinished)
        release.signal()
        #expect(queue.waitUntilAllFinished(timeout: .seconds(10)))
        #expect(log.values == [1, 2])
        #expect(load.state == .finished)
    }

    @Test("an asynchronous result job hands its output to a dependent")
    func asyncResultJob() throws {
        let queue = JobQueue(name: "async-result")
        let helper = ConcurrentQueue(label: "async-result.helper")
        let load = ResultJob<[UInt8]>(
            name: "load",
            asynchronous: { job in
                helper.async { job.finish(returning: [1, 2, 3]) }
            }
        )
        let sum = ResultJob<Int>(name: "sum") { job in try job.input([UInt8].self).reduce(0) { $0 + Int($1) } }
        try sum.addDependency(load)
        queue.addJobs([sum, load], waitUntilFinished: false)
        #expect(sum.waitUntilFinished(timeout: .seconds(10)))
        #expect(sum.output == 6)
        #expect(try load.result?.get() == [1, 2, 3])
    }

    @Test("a job and its queue are released after the work, even when the queue is dropped first")
    func released() {
        weak var weakQueue: JobQueue?
        weak var weakCore: JobQueueCore?
        weak var weakJob: Job?
        let gate = Semaphore()
        do {
            let queue = JobQueue(name: "released")
            let job = Job(name: "held") { _ in _ = gate.wait(timeout: .seconds(10)) }
            queue.addJob(job)
            weakQueue = queue
            weakCore = queue.core
            weakJob = job
        }
        // The handle is gone; the queue's core is still alive: it has work.
        #expect(weakQueue == nil)
        #expect(weakCore != nil)
        gate.signal()
        #expect(waitUntil { weakCore == nil && weakJob == nil })
    }
}
