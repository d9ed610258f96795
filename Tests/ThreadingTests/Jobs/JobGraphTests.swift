// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import CThreading
import Synchronization
import Testing

@testable import Threading

@Suite("Job graphs on the worker pool", .serialized)
struct JobGraphTests {
    @Test("state observers see waiting -> ready -> executing -> finished; removeDependency frees a job")
    func observedTransitions() throws {
        let states = LockedValue<[Job.State]>([])
        let first = Job(name: "first") { _ in }
        let job = Job(name: "observed") { _ in }
        job.observeState { _, state in states.withLock { $0.append(state) } }
        try job.addDependency(first)
        first.start()
        job.start()
        #expect(states.withLock { $0 } == [.waiting, .ready, .executing, .finished])

        let blocker = Job(name: "blocker") { _ in }
        let freed = Job(name: "freed") { _ in }
        try freed.addDependency(blocker)
        #expect(freed.state == .waiting)
        freed.removeDependency(blocker)
        #expect(freed.state == .ready && freed.dependencies.isEmpty)
    }

    @Test("cancelling the middle of a chain lets the end run after the start")
    func cancelMiddle() throws {
        let queue = JobQueue(name: "chain", maxConcurrentJobs: 1)
        let log = TestLog()
        let a = Job(name: "a") { _ in log.append(1) }
        let b = Job(name: "b") { _ in log.append(2) }
        let c = Job(name: "c") { _ in log.append(3) }
        try b.addDependency(a)
        try c.addDependency(b)
        queue.suspend()
        queue.addJobs([c, b, a], waitUntilFinished: false)
        b.cancel()
        queue.resume()
        #expect(queue.waitUntilAllFinished(timeout: .seconds(10)))
        #expect(log.values == [1, 3])
        #expect(b.state == .cancelled && c.state == .finished)
    }

    @Test("jobs run on pool workers in their QoS lane, not on a thread of their own")
    func poolAndQoS() {
        let queue = JobQueue(name: "lanes", qos: .default)
        var processNice: Int32 = 0
        _ = cthr_thread_get_nice(&processNice)
        let nice = Atomic<Int32>(-100)
        let pooled = Atomic<Bool>(false)
        queue.addJob(qos: .background) { _ in
            var value: Int32 = 0
            _ = cthr_thread_get_nice(&value)
            nice.store(value, ordering: .relaxed)
            pooled.store(PosixThread.currentName == "threading.pool", ordering: .relaxed)
        }
        #expect(queue.waitUntilAllFinished(timeout: .seconds(10)))
        let observedNice = nice.load(ordering: .relaxed)
        let onPool = pooled.load(ordering: .relaxed)
        #expect(observedNice == processNice)  // QoS never changes a worker's nice value
        #expect(onPool)
    }

    @Test("an asynchronous job finished twice ends once")
    func finishTwice() {
        let handled = Atomic<Int>(0)
        let job = AsyncJob(name: "twice") { job in
            job.finish()
            job.finish(throwing: JobTestError(tag: 1))
        }
        job.addCompletionHandler { _ in handled.add(1, ordering: .relaxed) }
        job.start()
        #expect(job.state == .finished && job.error == nil)
        #expect(handled.load(ordering: .relaxed) == 1)
    }

    @Test("a random graph over two queues runs every job after its dependencies, and all are released")
    func randomGraph() throws {
        let queues = [JobQueue(name: "left", maxConcurrentJobs: 2), JobQueue(name: "right", maxConcurrentJobs: 1)]
        let finished = LockedValue<[Int: Int]>([:])  // job index -> finishing sequence number
        let sequence = Atomic<Int>(0)
        let violations = Atomic<Int>(0)
        var generator = SystemRandomNumberGenerator()
        weak var weakJob: Job?
        do {
            var jobs: [Job] = []
            var edges: [(Int, Int)] = []
            for index in 0..<60 {
                // Dependencies only on earlier jobs: a DAG by construction.
                let dependencies =
                    index == 0
                    ? []
                    : (0..<Int.random(in: 0...3, using: &generator)).map { _ in
                        Int.random(in: 0..<index, using: &generator)
                    }
                let job = Job(name: "j\(index)") { job in
                    let done = finished.withLock { $0 }
                    for dependency in job.dependencies {
                        let position = Int(dependency.name.dropFirst())!
                        if done[position] == nil { violations.add(1, ordering: .relaxed) }
                    }
                    let number = sequence.add(1, ordering: .relaxed).newValue
                    finished.withLock { $0[index] = number }
                }
                for dependency in dependencies {
                    try job.addDependency(jobs[dependency])
                    edges.append((index, dependency))
                }
                jobs.append(job)
            }
            // Every reversed edge is a cycle and must be refused.
            for (from, to) in edges.prefix(10) {
                #expect(throws: ThreadingError.deadlock) { try jobs[to].addDependency(jobs[from]) }
            }
            for job in jobs.shuffled(using: &generator) {
                queues[Int.random(in: 0...1, using: &generator)].addJob(job)
            }
            weakJob = jobs.last
        }
        for queue in queues { #expect(queue.waitUntilAllFinished(timeout: .seconds(20))) }
        #expect(finished.withLock { $0.count } == 60)
        #expect(violations.load(ordering: .relaxed) == 0)
        #expect(waitUntil { weakJob == nil })
    }
}
