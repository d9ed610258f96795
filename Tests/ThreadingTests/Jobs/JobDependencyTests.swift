// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import Glibc
import Testing

@testable import Threading

@Suite("Job dependencies")
struct JobDependencyTests {
    @Test("a cancelled dependency still lets its dependent run")
    func cancelledDependency() throws {
        let queue = JobQueue(name: "cancelled-dependency")
        let log = TestLog()
        let first = ResultJob<Int>(name: "first") { _ in 1 }
        let second = Job(name: "second") { job in
            // The dependency's outcome is visible: cancelled.
            if case .failure(let error)? = job.dependencyResult(Int.self), error is CancellationError {
                log.append(2)
            }
        }
        try second.addDependency(first)
        #expect(second.state == .waiting)
        first.cancel()
        #expect(second.state == .ready)
        queue.addJobs([first, second], waitUntilFinished: false)
        #expect(second.waitUntilFinished(timeout: .seconds(10)))
        #expect(log.values == [2])
        #expect(first.state == .cancelled)
    }

    @Test("a job added before its dependency on a width-1 queue does not deadlock")
    func dependentFirstOnSerialQueue() throws {
        let queue = JobQueue(name: "serial", maxConcurrentJobs: 1)
        let log = TestLog()
        let dependency = Job(name: "dependency") { _ in log.append(1) }
        let dependent = Job(name: "dependent") { _ in log.append(2) }
        try dependent.addDependency(dependency)
        queue.addJob(dependent)
        queue.addJob(dependency)
        #expect(queue.waitUntilAllFinished(timeout: .seconds(10)))
        #expect(log.values == [1, 2])
    }

    @Test("dependencies across queues")
    func acrossQueues() throws {
        let first = JobQueue(name: "a")
        let second = JobQueue(name: "b", maxConcurrentJobs: 1)
        let log = TestLog()
        let load = Job(name: "load") { _ in log.append(1) }
        let use = Job(name: "use") { _ in log.append(2) }
        try use.addDependency(load)
        first.suspend()
        first.addJob(load)
        second.addJob(use)
        #expect(!use.waitUntilFinished(timeout: .milliseconds(50)))
        first.resume()
        #expect(use.waitUntilFinished(timeout: .seconds(10)))
        #expect(log.values == [1, 2])
    }

    @Test("a job depending on itself is refused with the job named")
    func selfCycle() {
        let job = Job(name: "A") { _ in }
        do {
            try job.addDependency(job)
            Issue.record("the self-dependency was accepted")
        } catch {
            #expect(error == ThreadingError.deadlock)
            #expect(error.detail.contains("Job \"A\" cannot depend on itself"), "\(error)")
            #expect(error.detail.contains("\"A\" -> \"A\""), "\(error)")
        }
        #expect(job.dependencies.isEmpty)
        #expect(job.state == .ready)
    }

    @Test("A -> B -> A is refused with the jobs named, and the graph is unchanged")
    func twoCycle() throws {
        let a = Job(name: "A") { _ in }
        let b = Job(name: "B") { _ in }
        try a.addDependency(b)
        do {
            try b.addDependency(a)
            Issue.record("the cycle was accepted")
        } catch {
            #expect(error.code == EDEADLK)
            #expect(error.detail.contains("\"B\" -> \"A\" -> \"B\""), "\(error)")
        }
        #expect(a.dependencies.map(\.name) == ["B"])
        #expect(b.dependencies.isEmpty)
        #expect(b.state == .ready && a.state == .waiting)
        // Still usable: both run in order.
        let queue = JobQueue(name: "after-refusal")
        queue.addJobs([a, b], waitUntilFinished: false)
        #expect(queue.waitUntilAllFinished(timeout: .seconds(10)))
        #expect(a.state == .finished && b.state == .finished)
    }

    @Test("A -> B -> C -> A is refused")
    func threeCycle() throws {
        let a = Job(name: "A") { _ in }
        let b = Job(name: "B") { _ in }
        let c = Job(name: "C") { _ in }
        try a.addDependency(b)
        try b.addDependency(c)
        do {
            try c.addDependency(a)
            Issue.record("the cycle was accepted")
        } catch {
            #expect(error == ThreadingError.deadlock)
            #expect(error.detail.contains("\"C\" -> \"A\" -> \"B\" -> \"C\""), "\(error)")
        }
        #expect(c.dependencies.isEmpty)
        #expect(c.state == .ready)
        #expect(a.dependencies.map(\.name) == ["B"] && b.dependencies.map(\.name) == ["C"])
        // A diamond is not a cycle.
        let d = Job(name: "D") { _ in }
        try d.addDependency(b)
        try d.addDependency(c)
        #expect(d.dependencies.count == 2)
    }

    @Test("a throwing job fails and its dependents see the error")
    func failurePropagates() throws {
        let queue = JobQueue(name: "failure")
        let load = ResultJob<[UInt8]>(name: "load") { _ in throw JobTestError(tag: 7) }
        let decode = ResultJob<Int>(name: "decode") { job in try job.input([UInt8].self).count }
        let report = Job(name: "report") { _ in }
        try decode.addDependency(load)
        try report.addDependency(decode)
        queue.addJobs([report, decode, load], waitUntilFinished: false)
        #expect(queue.waitUntilAllFinished(timeout: .seconds(10)))
        #expect(load.state == .failed)
        #expect((load.error as? JobTestError)?.tag == 7)
        // decode ran, read the error through input(_:), rethrew it and failed with it too.
        #expect(decode.state == .failed)
        #expect((decode.error as? JobTestError)?.tag == 7)
        if case .failure(let error)? = decode.result {
            #expect((error as? JobTestError)?.tag == 7)
        } else {
            Issue.record("decode did not fail")
        }
        #expect(report.state == .finished)
    }

    @Test("typed results flow load -> decode -> filter")
    func typedPipeline() throws {
        let queue = JobQueue(name: "pipeline", maxConcurrentJobs: 2)
        let load = ResultJob<[UInt8]>(name: "load") { _ in Array(0..<10) }
        let decode = ResultJob<[Int]>(name: "decode") { job in try job.input([UInt8].self).map { Int($0) * 2 } }
        let filter = ResultJob<Int>(name: "filter") { job in try job.input([Int].self).filter { $0 > 10 }.count }
        try decode.addDependency(load)
        try filter.addDependency(decode)
        queue.addJobs([filter, decode, load], waitUntilFinished: false)
        #expect(filter.waitUntilFinished(timeout: .seconds(10)))
        #expect(filter.output == 4)
    }

    @Test("adding a dependency to a started job is refused")
    func dependencyAfterStart() {
        let job = Job(name: "done") { _ in }
        job.start()
        #expect(throws: ThreadingError.invalidArgument) { try job.addDependency(Job { _ in }) }
    }
}
