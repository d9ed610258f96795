// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import Synchronization
import Testing

@testable import Threading

/// The error a torture job throws (carries the job's index, so dependents can check they see the right one).
struct TortureJobError: Error, Equatable {
    let index: Int
}

extension TortureTests {
    /// Random DAGs of 1,000 jobs over several job queues of random widths, with random cancellations (before and
    /// while running), failing jobs, suspend/resume of the queues and refused back edges (cycles).
    ///
    /// Checks: a job runs only after all its dependencies ended; a dependency that threw is seen `failed` with its
    /// error; a queue never runs more jobs than its width; every job ends finished, failed or cancelled within the
    /// deadline (no deadlock, none lost); no job body runs twice; a job nobody cancelled ran exactly once.
    @Suite(.serialized)
    struct JobTorture {
        @Test func jobDAGTorture() {
            let seed = Torture.seed()
            let rounds = Torture.size(1, long: 20)
            var totals = (jobs: 0, edges: 0, cancels: 0, failures: 0, cycles: 0, ran: 0, violations: 0)
            for round in 0..<rounds {
                let figures = runDAG(seed: seed &+ UInt64(round) &* 7919, jobs: 1_000)
                totals.jobs += figures.jobs
                totals.edges += figures.edges
                totals.cancels += figures.cancels
                totals.failures += figures.failures
                totals.cycles += figures.cycles
                totals.ran += figures.ran
                totals.violations += figures.violations
                if figures.violations > 0 { break }
            }
            Torture.report(
                "jobs",
                seed: seed,
                [
                    "dags": rounds, "jobs": totals.jobs, "edges": totals.edges, "cancels": totals.cancels,
                    "throwing": totals.failures, "refused-cycles": totals.cycles, "bodies-run": totals.ran,
                    "violations": totals.violations,
                ]
            )
        }

        // swift-format-ignore: NeverForceUnwrap
        func runDAG(
            seed: UInt64,
            jobs count: Int
        ) -> (jobs: Int, edges: Int, cancels: Int, failures: Int, cycles: Int, ran: Int, violations: Int) {
            var random = TortureRandom(seed: seed)
            let violations = TortureViolations()
            let widths = [1, 2, 4, JobQueue.unlimited]
            let queues = widths.enumerated().map {
                JobQueue(name: "torture.jobs.\($0.offset)", maxConcurrentJobs: $0.element)
            }
            let running = queues.map { _ in TortureCell() }
            let runs = (0..<count).map { _ in TortureCell() }
            let throwing = (0..<count).map { _ in random.chance(5) }
            var jobs: [Job] = []
            var dependencyIndices: [[Int]] = []
            var edges = 0
            var cycles = 0
            var queueOf: [Int] = []

            // Build: job i depends on up to 3 earlier jobs (a DAG); the queue is random.
            for index in 0..<count {
                let queueIndex = random.below(queues.count)
                let job = Job(name: "t\(index)") { job in
                    let previous = runs[index].value.add(1, ordering: .sequentiallyConsistent).oldValue
                    if previous != 0 { violations.record("job \(index) ran twice") }
                    let now = running[queueIndex].value.add(1, ordering: .sequentiallyConsistent).newValue
                    if now > widths[queueIndex] {
                        violations.record("queue \(queueIndex) ran \(now) jobs (width \(widths[queueIndex]))")
                    }
                    for dependency in job.dependencies {
                        let state = dependency.state
                        if !state.isEnded { violations.record("\(job.name) ran before \(dependency.name) ended") }
                        if state == .failed {
                            let error = dependency.error as? TortureJobError
                            if error == nil || "t\(error!.index)" != dependency.name {
                                violations.record(
                                    "\(dependency.name) failed with \(String(describing: dependency.error))"
                                )
                            }
                        }
                    }
                    Torture.spin(Int(job.name.count) * 10)
                    running[queueIndex].value.subtract(1, ordering: .sequentiallyConsistent)
                    if throwing[index] { throw TortureJobError(index: index) }
                }
                var chosen: [Int] = []
                if index > 0 {
                    for _ in 0..<random.below(4) {
                        let dependency = random.below(index)
                        guard !chosen.contains(dependency) else { continue }
                        do {
                            try job.addDependency(jobs[dependency])
                            chosen.append(dependency)
                            edges += 1
                        } catch {
                            violations.record("acyclic edge t\(index) -> t\(dependency) refused: \(error)")
                        }
                    }
                }
                // Now and then try a back edge (a dependency -> this job): it closes a cycle and must be refused.
                if let dependency = chosen.first, random.chance(3) {
                    do {
                        try jobs[dependency].addDependency(job)
                        violations.record("cycle t\(dependency) -> t\(index) -> t\(dependency) accepted")
                    } catch {
                        if !(ThreadingError.deadlock ~= error) { violations.record("cycle refused with \(error)") }
                        cycles += 1
                    }
                }
                jobs.append(job)
                dependencyIndices.append(chosen)
                queueOf.append(queueIndex)
            }

            // Some jobs are cancelled before they are added.
            var cancelled = Set<Int>()
            for index in 0..<count where random.chance(3) {
                jobs[index].cancel()
                cancelled.insert(index)
            }
            // Add in random order, with queues suspended and resumed meanwhile.
            var order = Array(0..<count)
            order.shuffle(using: &random)
            for (position, index) in order.enumerated() {
                queues[queueOf[index]].addJob(jobs[index])
                if position % 97 == 0 {
                    let queue = queues[random.below(queues.count)]
                    queue.suspend()
                    queue.resume()
                }
            }
            // Cancel more while they run.
            for _ in 0..<(count / 30) {
                let index = random.below(count)
                jobs[index].cancel()
                cancelled.insert(index)
                if random.chance(30) { PosixThread.yield() }
            }
            var allEnded = true
            for queue in queues where !queue.waitUntilAllFinished(timeout: .seconds(30)) {
                allEnded = false
                violations.record("\(queue) did not finish within 30 s (deadlock or lost job)")
            }
            var ran = 0
            for index in 0..<count {
                let job = jobs[index]
                let state = job.state
                let runCount = runs[index].value.load(ordering: .sequentiallyConsistent)
                ran += runCount
                if !state.isEnded {
                    violations.record("t\(index) ended \(state)")
                    continue
                }
                switch state {
                case .finished:
                    if runCount != 1 || throwing[index] {
                        violations.record("t\(index) finished after \(runCount) runs")
                    }
                case .failed:
                    if runCount != 1 || !throwing[index] {
                        violations.record("t\(index) failed after \(runCount) runs")
                    }
                    if (job.error as? TortureJobError)?.index != index { violations.record("t\(index): wrong error") }
                case .cancelled:
                    if !cancelled.contains(index) {
                        violations.record("t\(index) cancelled though nobody cancelled it")
                    }
                    if runCount > 1 { violations.record("t\(index) ran \(runCount) times") }
                default:
                    break
                }
                if !cancelled.contains(index) && runCount != 1 { violations.record("t\(index) ran \(runCount) times") }
            }
            #expect(allEnded)
            #expect(violations.count == 0, "seed \(seed): \(violations.messages)")
            return (count, edges, cancelled.count, throwing.filter { $0 }.count, cycles, ran, violations.count)
        }
    }
}
