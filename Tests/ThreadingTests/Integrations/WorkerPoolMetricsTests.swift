// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

#if MetricsSupport
import CThreading
import CoreMetrics
import MetricsTestKit
import Glibc
import Testing

@testable import Threading

#if ServiceLifecycleSupport
import ServiceLifecycle
import ServiceLifecycleTestKit
#endif

/// The swift-metrics poller (trait `MetricsSupport`), against swift-metrics' own in-memory backend (`TestMetrics`),
/// passed as the poller's factory so that no test bootstraps the process-wide metrics system.
@Suite struct WorkerPoolMetricsTests {
    private func pool(_ label: String) -> [(String, String)] { [("threading.pool.name", label)] }

    private func workers(_ label: String, _ state: String) -> [(String, String)] {
        pool(label) + [("threading.worker.state", state)]
    }

    /// One poll records every gauge with the pool's label, and each counter's total is the pool's own counter.
    @Test func aPollRecordsTheGaugesAndCounters() throws {
        let metrics = TestMetrics()
        let label = "metrics.poll"
        let workerPool = WorkerPool(label: label, threads: 2)
        defer { poolTestShutDown(workerPool) }
        let done = WorkGroup()
        let queue = ConcurrentQueue(label: "\(label).queue", pool: workerPool)
        for _ in 0..<50 { queue.async(group: done) {} }
        #expect(done.wait(timeout: .seconds(20)))
        let poller = WorkerPoolMetrics(pools: [workerPool], factory: metrics)
        poller.poll()
        let stats = workerPool.statistics

        #expect(
            try metrics.expectGauge("threading.pool.thread.limit", pool(label)).lastValue == Double(stats.maxThreads)
        )
        let threads = try #require(try metrics.expectGauge("threading.pool.thread.count", pool(label)).lastValue)
        #expect(threads >= 1 && threads <= Double(stats.maxThreads))
        for state in ["running", "idle", "blocked"] {
            #expect(try metrics.expectGauge("threading.pool.worker.count", workers(label, state)).lastValue != nil)
        }
        #expect(try metrics.expectGauge("threading.pool.queue.size", pool(label)).lastValue == 0)
        // The pool's counters only grow and nothing was submitted since the poll.
        #expect(
            try metrics.expectCounter("threading.pool.submissions", pool(label)).totalValue == Int64(stats.submitted)
        )
        #expect(stats.submitted >= 50)
        #expect(try metrics.expectCounter("threading.pool.steals", pool(label)).totalValue == Int64(stats.steals))
        #expect(try metrics.expectCounter("threading.pool.wake_ups", pool(label)).totalValue == Int64(stats.wakeUps))
        #expect(try metrics.expectCounter("threading.pool.saturations", pool(label)).totalValue == 0)
    }

    /// With run times recorded, each unit that ran since the previous poll is one sample of the run-time timer (its
    /// bucket's lower bound, within 25% of the value); stalls export as a counter.
    @Test func runTimesAndStallsAreExported() throws {
        let metrics = TestMetrics()
        let label = "metrics.runtimes"
        let workerPool = WorkerPool(label: label, threads: 2)
        defer { poolTestShutDown(workerPool) }
        workerPool.recordsRunTimes = true
        let poller = WorkerPoolMetrics(pools: [workerPool], factory: metrics)
        let done = WorkGroup()
        let queue = ConcurrentQueue(label: "\(label).queue", pool: workerPool)
        for _ in 0..<20 { queue.async(group: done) { usleep(1_000) } }
        #expect(done.wait(timeout: .seconds(20)))
        // A unit's run time is recorded when it returns, just after its task left the group.
        #expect(waitUntil { (workerPool.statistics.runTimes?.count ?? 0) >= 20 })
        poller.poll()
        let first = try #require(workerPool.statistics.runTimes).count
        let timer = try metrics.expectTimer("threading.pool.task.duration", pool(label))
        #expect(timer.values.count == first)
        #expect(first >= 20)
        // The 1 ms units are in buckets at or above 750 µs (a bucket's lower bound is within 25% below its values).
        #expect(timer.values.filter { $0 >= 750_000 }.count >= 20)
        for _ in 0..<5 { queue.async(group: done) {} }
        #expect(done.wait(timeout: .seconds(20)))
        #expect(waitUntil { (workerPool.statistics.runTimes?.count ?? 0) >= first + 5 })
        poller.poll()
        let second = try #require(workerPool.statistics.runTimes).count
        #expect(timer.values.count == second)
        #expect(try metrics.expectCounter("threading.pool.stalls", pool(label)).totalValue == 0)
    }

    /// With schedule delays recorded, each unit taken since the previous poll is one sample of the schedule-delay
    /// timer; units queued behind a blocked worker export at least the time it was kept blocked.
    @Test func scheduleDelaysAreExported() throws {
        let metrics = TestMetrics()
        let label = "metrics.delays"
        let (workerPool, gate) = try #require(poolTestBlockedPool(label: label))
        defer { poolTestShutDown(workerPool) }
        workerPool.recordsScheduleDelays = true
        let poller = WorkerPoolMetrics(pools: [workerPool], factory: metrics)
        let done = WorkGroup()
        let queue = ConcurrentQueue(label: "\(label).queue", pool: workerPool)
        for _ in 0..<8 { queue.async(group: done) {} }
        usleep(20_000)
        gate.open()
        #expect(done.wait(timeout: .seconds(20)))
        poller.poll()
        let timer = try metrics.expectTimer("threading.pool.task.schedule_delay", pool(label))
        #expect(timer.values.count == 8)
        // 20 ms waits are in buckets at or above 15 ms (a bucket's lower bound is within 25% below its values).
        #expect(timer.values.allSatisfy { $0 >= 15_000_000 }, "\(timer.values)")
        for _ in 0..<3 { queue.async(group: done) {} }
        #expect(done.wait(timeout: .seconds(20)))
        poller.poll()
        #expect(timer.values.count == 11)
    }

    /// Counters export what the pool gained between two polls, so their totals follow the pool's, and queued work
    /// shows on the queue gauge.
    @Test func countersExportTheGainSinceThePreviousPoll() throws {
        let metrics = TestMetrics()
        let label = "metrics.gain"
        let (workerPool, gate) = try #require(poolTestBlockedPool(label: label))
        let poller = WorkerPoolMetrics(pools: [workerPool], factory: metrics)
        poller.poll()
        let first = workerPool.statistics
        let queue = ConcurrentQueue(label: "\(label).queue", pool: workerPool)
        let done = WorkGroup()
        for _ in 0..<5 { queue.async(group: done) {} }
        poller.poll()
        let queued = workerPool.statistics.pending
        #expect(queued > 0)
        #expect(try metrics.expectGauge("threading.pool.queue.size", pool(label)).lastValue == Double(queued))
        gate.open()
        #expect(done.wait(timeout: .seconds(20)))
        poller.poll()
        let last = workerPool.statistics
        let submissions = try metrics.expectCounter("threading.pool.submissions", pool(label))
        #expect(submissions.totalValue == Int64(last.submitted))
        #expect(submissions.values.count == 3)
        #expect(submissions.values.first == Int64(first.submitted))
        #expect(last.submitted > first.submitted)
        #expect(poolTestShutDown(workerPool))
    }

    /// Each pool is one set of series, told apart by the label; the defaults are the process-wide pools.
    @Test func everyPoolHasItsOwnSeries() throws {
        let metrics = TestMetrics()
        let poller = WorkerPoolMetrics(factory: metrics)
        #expect(poller.pools.map(\.label) == [WorkerPool.shared.label, WorkerPool.blocking.label])
        poller.poll()
        for pool in poller.pools {
            #expect(
                try metrics.expectGauge("threading.pool.thread.limit", self.pool(pool.label)).lastValue
                    == Double(pool.maxThreads)
            )
        }
    }

    /// `start()` polls every interval in the background; `stop()` polls once more and stops.
    @Test func startPollsUntilStop() throws {
        let metrics = TestMetrics()
        let label = "metrics.start"
        let workerPool = WorkerPool(label: label, threads: 1)
        defer { poolTestShutDown(workerPool) }
        let poller = WorkerPoolMetrics(pools: [workerPool], interval: .milliseconds(10), factory: metrics)
        poller.start()
        poller.start()  // a second start while polling does nothing
        func polls() -> Int {
            (try? metrics.expectGauge("threading.pool.thread.limit", pool(label)).values.count) ?? 0
        }
        #expect(waitUntil(seconds: 20) { polls() >= 3 })
        poller.stop()
        let afterStop = polls()
        _ = cthr_sleep_ns(100_000_000)  // ten intervals: a poller still running would have polled again
        #expect(polls() == afterStop)
        poller.stop()  // stopping again does nothing
        #expect(polls() == afterStop)
    }

    /// `run()` polls until its task is cancelled, then polls once more and returns.
    @Test func runPollsUntilCancelled() async throws {
        let metrics = TestMetrics()
        let poller = WorkerPoolMetrics(pools: [.shared], interval: .milliseconds(10), factory: metrics)
        let task = Task { await poller.run() }
        let label = WorkerPool.shared.label
        let polled = await suspendUntil {
            ((try? metrics.expectGauge("threading.pool.thread.limit", self.pool(label)).values.count) ?? 0) >= 2
        }
        #expect(polled)
        task.cancel()
        try await withDeadline { await task.value }
    }

    #if ServiceLifecycleSupport
    /// As a `Service` (with `ServiceLifecycleSupport`), `run()` returns at graceful shutdown, after a last poll.
    @Test func asAServiceItStopsAtGracefulShutdown() async throws {
        let metrics = TestMetrics()
        let poller = WorkerPoolMetrics(pools: [.shared], interval: .seconds(3_600), factory: metrics)
        let service: any Service = poller
        let label = WorkerPool.shared.label
        try await testGracefulShutdown { trigger in
            try await withDeadline {
                try await withThrowingTaskGroup(of: Void.self) { group in
                    group.addTask { try await service.run() }
                    // The first poll happens at once; the hour-long sleep then ends with the graceful shutdown.
                    let polled = await suspendUntil {
                        ((try? metrics.expectGauge("threading.pool.thread.limit", self.pool(label)).values.count)
                            ?? 0) >= 1
                    }
                    #expect(polled)
                    trigger.triggerGracefulShutdown()
                    try await group.waitForAll()
                }
            }
        }
        // The poll at start and the last one at the shutdown.
        #expect(try metrics.expectGauge("threading.pool.thread.limit", pool(label)).values.count == 2)
    }
    #endif
}
#endif
