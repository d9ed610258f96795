// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import CThreading
import Foundation
import Synchronization
import Testing

@testable import Threading

/// Polls fresh snapshots (every 10 ms, at most `seconds`) until `condition` holds for one; returns it, or nil.
func snapshotWhen(seconds: Double = 10, _ condition: (RuntimeSnapshot) -> Bool) -> RuntimeSnapshot? {
    var found: RuntimeSnapshot?
    _ = waitUntil(seconds: seconds, every: 10_000_000) {
        let snapshot = RuntimeSnapshot.capture()
        if condition(snapshot) { found = snapshot }
        return found != nil
    }
    return found
}

@Suite(.serialized) struct RuntimeSnapshotTests {
    /// Every field of a pool, a queue and a job queue against a state the test builds: a serial queue whose item
    /// blocks on a worker (with two items behind it), a suspended concurrent queue holding three, a job queue with
    /// one job waiting for a dependency.
    @Test func theSnapshotShowsPoolsQueuesAndJobQueuesAsBuilt() throws {
        let pool = WorkerPool(label: "snap.pool", threads: 2)
        pool.stallThreshold = .seconds(30)
        let serial = SerialQueue(label: "snap.serial", pool: pool)
        let suspended = ConcurrentQueue(label: "snap.suspended", pool: pool)
        let jobs = JobQueue(name: "snap.jobs", pool: pool)
        let gate = QueueGate()
        let started = QueueGate()
        let workerID = Atomic<Int32>(0)
        serial.async {
            workerID.store(cthr_thread_id(), ordering: .relaxed)
            started.open()
            _ = gate.wait(seconds: 30)
        }
        serial.async {}
        serial.async {}
        suspended.suspend()
        for _ in 0..<3 { suspended.async {} }
        let first = Job(name: "snap.first") { _ in }
        let second = Job(name: "snap.second") { _ in }
        try second.addDependency(first)
        jobs.addJob(second)
        #expect(started.wait())
        let thread = workerID.load(ordering: .relaxed)

        // The runner's duration comes from the watchdog's samples: wait until one was taken.
        let found = snapshotWhen { snapshot in
            snapshot.pools.first { $0.label == "snap.pool" }?.runners.first?.runningFor ?? .zero > .zero
        }
        let snapshot = try #require(found)
        let poolSnapshot = try #require(snapshot.pools.first { $0.label == "snap.pool" })
        #expect(poolSnapshot.kind == .cpu)
        #expect(poolSnapshot.stallThreshold == .seconds(30))
        #expect(poolSnapshot.statistics.threads >= 1)
        #expect(poolSnapshot.statistics.maxThreads == pool.maxThreads)
        #expect(poolSnapshot.isSaturated == false)
        let runner = try #require(poolSnapshot.runners.first)
        #expect(runner.threadID == thread)
        #expect(runner.queueLabel == "snap.serial")
        #expect(runner.work == "serial queue 'snap.serial'")

        let serialSnapshot = try #require(snapshot.queues.first { $0.label == "snap.serial" })
        #expect(serialSnapshot.kind == .serial)
        #expect(serialSnapshot.poolLabel == "snap.pool")
        #expect(serialSnapshot.depth == 2)
        #expect(serialSnapshot.isRunning)
        #expect(!serialSnapshot.isSuspended)
        #expect(serialSnapshot.runningThreadID == thread)
        #expect((serialSnapshot.runningFor ?? .zero) > .zero)
        #expect(RuntimeRegistry.runningThread(ofQueue: serial.core) == thread)

        let suspendedSnapshot = try #require(snapshot.queues.first { $0.label == "snap.suspended" })
        #expect(suspendedSnapshot.kind == .concurrent)
        #expect(suspendedSnapshot.isSuspended)
        #expect(suspendedSnapshot.depth == 3)
        #expect(!suspendedSnapshot.isRunning)
        #expect(suspendedSnapshot.runningThreadID == nil)
        #expect(RuntimeRegistry.runningThread(ofQueue: suspended.core) == nil)

        let jobSnapshot = try #require(snapshot.jobQueues.first { $0.name == "snap.jobs" })
        #expect(jobSnapshot.poolLabel == "snap.pool")
        #expect(jobSnapshot.waitingForDependencies == 1)
        #expect(jobSnapshot.executing == 0)
        #expect(!jobSnapshot.isSuspended)

        let text = snapshot.description
        #expect(text.hasPrefix("Threading runtime dump"))
        #expect(text.contains("pool 'snap.pool' (cpu)"), "\(text)")
        #expect(text.contains("thread \(thread) running serial queue 'snap.serial' for "), "\(text)")
        #expect(text.contains("serial queue 'snap.serial' on pool 'snap.pool': depth 2, running on thread \(thread)"))
        #expect(text.contains("concurrent queue 'snap.suspended' on pool 'snap.pool': depth 3, suspended"))
        #expect(text.contains("JobQueue \"snap.jobs\" on pool 'snap.pool'"))

        gate.open()
        suspended.resume()
        first.cancel()
        second.cancel()
        #expect(jobs.waitUntilAllFinished(timeout: .seconds(10)))
        #expect(waitUntil { serial.core.pendingTaskCount == 0 && suspended.core.pendingTaskCount == 0 })
        // Once the item returned, the queue shows no runner.
        let idle = snapshotWhen { $0.queues.first { $0.label == "snap.serial" }?.isRunning == false }
        #expect(idle != nil)
        #expect(poolTestShutDown(pool))
        #expect(!RuntimeSnapshot.capture().pools.contains { $0.label == "snap.pool" && !pool.isShutDown })
    }

    /// A blocking pool has a stall threshold of a minute until set; a CPU pool has five seconds.
    @Test func defaultStallThresholds() {
        let cpu = WorkerPool(label: "snap.cpu", threads: 1)
        let blocking = WorkerPool(label: "snap.blocking", threads: 1, kind: .blocking)
        #expect(cpu.stallThreshold == .seconds(5))
        #expect(blocking.stallThreshold == .seconds(60))
        blocking.stallThreshold = .milliseconds(250)
        #expect(blocking.stallThreshold == .milliseconds(250))
        cpu.stallThreshold = nil
        #expect(cpu.stallThreshold == nil)
        let snapshot = RuntimeSnapshot.capture()
        #expect(snapshot.pools.first { $0.label == "snap.blocking" }?.kind == .blocking)
        #expect(snapshot.pools.first { $0.label == "snap.blocking" }?.stallThreshold == .milliseconds(250))
        #expect(snapshot.pools.first { $0.label == "snap.cpu" }?.stallThreshold == nil)
        poolTestShutDown(cpu)
        poolTestShutDown(blocking)
    }

    /// A pool saturated by units that block shows as such, with its waiting lanes.
    @Test func aSaturatedPoolShowsItsWaitingLanes() throws {
        let blocked = try #require(poolTestBlockedPool(label: "snap.saturated"))
        SerialQueue(label: "snap.saturated.waiting", qos: .utility, pool: blocked.pool).async {}
        let found = snapshotWhen { snapshot in
            snapshot.pools.first { $0.label == "snap.saturated" }?.isSaturated == true
        }
        let pool = try #require(found?.pools.first { $0.label == "snap.saturated" })
        #expect(pool.queuedLanes == [.utility])
        #expect(pool.queuedByLane == [.utility: 1])
        #expect(pool.statistics.pending == 1)
        #expect(found?.description.contains("SATURATED") == true)
        #expect(found?.description.contains("1 queued [utility 1]") == true)
        blocked.gate.open()
        #expect(poolTestShutDown(blocked.pool))
    }

    /// The bucket arithmetic of the latency histogram: every value lands in a bucket whose lower bound is within
    /// 25% below it, and percentiles walk the counts.
    @Test func latencyHistogramBucketsAndPercentiles() {
        for value: UInt64 in [0, 1, 3, 4, 5, 7, 8, 1000, 123_456_789, .max] {
            let bound = LatencyHistogram.lowerBound(of: LatencyHistogram.bucket(of: value))
            #expect(bound <= value)
            #expect(value - bound <= value / 4, "\(value) -> \(bound)")
        }
        let histogram = LatencyHistogram()
        #expect(histogram.distribution().percentile(0.5) == nil)
        for _ in 0..<90 { histogram.record(1_000) }
        for _ in 0..<10 { histogram.record(1_000_000) }
        let distribution = histogram.distribution()
        #expect(distribution.count == 100)
        let median = distribution.percentile(0.5) ?? .zero
        #expect(median <= .nanoseconds(1_000) && median >= .nanoseconds(750))
        let tail = distribution.percentile(0.99) ?? .zero
        #expect(tail <= .milliseconds(1) && tail >= .microseconds(750))
        // Out of range reads as the nearest end: below 0 as 0 (the smallest value), above 1 as 1 (the largest).
        #expect(distribution.percentile(-1) == distribution.percentile(0))
        #expect(distribution.percentile(-.infinity) == distribution.percentile(0))
        #expect(distribution.percentile(2) == distribution.percentile(1))
        #expect(distribution.percentile(.infinity) == distribution.percentile(1))
        #expect(distribution.percentile(0) ?? .zero < distribution.percentile(1) ?? .zero)
    }

    /// `capture()` from a signal handler that interrupted a capture on the same thread traps with a message that
    /// says so and points to `RuntimeDump.install`, instead of deadlocking on the runtime's locks or in `malloc`.
    /// The signal is raised while the thread's "inside capture" flag is set, as it is for the whole of a capture
    /// (a signal that lands inside a real capture is a matter of timing).
    @Test func aCaptureFromAHandlerThatInterruptedACaptureTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            startExitTestWatchdog()
            var action = sigaction()
            action.__sigaction_handler.sa_handler = { _ in _ = RuntimeSnapshot.capture() }
            sigemptyset(&action.sa_mask)
            // The exit test's thread starts with the user signals blocked: `raise` must reach this thread's handler.
            var unblock = sigset_t()
            sigemptyset(&unblock)
            sigaddset(&unblock, SIGUSR2)
            guard sigaction(SIGUSR2, &action, nil) == 0, pthread_sigmask(SIG_UNBLOCK, &unblock, nil) == 0 else {
                exit(10)
            }
            _ = RuntimeSnapshot.capture()  // outside a handler: fine, and the flag is clear again after it
            RuntimeThread.current.pointee.isCapturingSnapshot = true
            raise(SIGUSR2)
            exit(11)
        }
        let text = exitTestText(result)
        #expect(text.contains("Threading: RuntimeSnapshot.capture() on thread "), "\(text)")
        #expect(text.contains("which is already inside capture(): it was called from a signal handler"), "\(text)")
        #expect(text.contains("use RuntimeDump.install(on:to:)"), "\(text)")
    }

    /// NaN names no fraction: `percentile(_:)` traps with a message instead of reading it as 0 (the smallest value),
    /// an empty distribution included.
    @Test func aNaNPercentileTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let histogram = LatencyHistogram()
            histogram.record(1_000)
            _ = histogram.distribution().percentile(.nan)
        }
        #expect(
            exitTestText(result).contains(
                "Threading: LatencyDistribution.percentile(_:): the fraction is NaN; pass a value between 0 and 1"
            ),
            "\(exitTestText(result))"
        )
        await #expect(processExitsWith: .failure) {
            _ = LatencyHistogram().distribution().percentile(-.nan)
        }
    }

    /// A pool that records run times has them in its statistics; one that does not has none.
    @Test func runTimesAreRecordedWhenAsked() {
        let pool = WorkerPool(label: "snap.runtimes", threads: 2)
        #expect(pool.statistics.runTimes == nil)
        pool.recordsRunTimes = true
        let group = WorkGroup()
        let queue = ConcurrentQueue(label: "snap.runtimes.queue", pool: pool)
        for _ in 0..<20 { queue.async(group: group) { _ = cthr_sleep_ns(2_000_000) } }
        #expect(group.wait(timeout: .seconds(10)))
        // A unit's time is recorded when it returns, just after its task left the group.
        #expect(waitUntil { (pool.statistics.runTimes?.count ?? 0) >= 20 })
        let distribution = pool.statistics.runTimes
        #expect((distribution?.count ?? 0) >= 20)
        let median = distribution?.percentile(0.5) ?? .zero
        #expect(median >= .milliseconds(1) && median < .seconds(1), "\(median)")
        pool.recordsRunTimes = false
        #expect(pool.statistics.runTimes == nil)
        #expect(poolTestShutDown(pool))
    }

    /// The units waiting in each lane, counted across every run queue, in the snapshot and the dump.
    @Test func queuedUnitsAreCountedPerLane() throws {
        let blocked = try #require(poolTestBlockedPool(label: "snap.lanes"))
        let utility = ConcurrentQueue(label: "snap.lanes.utility", qos: .utility, pool: blocked.pool)
        let interactive = ConcurrentQueue(label: "snap.lanes.interactive", qos: .userInteractive, pool: blocked.pool)
        for _ in 0..<3 { utility.async {} }
        for _ in 0..<2 { interactive.async {} }
        let pool = try #require(RuntimeSnapshot.capture().pools.first { $0.label == "snap.lanes" })
        #expect(pool.queuedByLane == [.utility: 3, .userInteractive: 2])
        #expect(pool.queuedLanes == [.userInteractive, .utility])
        #expect(RuntimeDump.format(RuntimeSnapshot.capture()).contains("5 queued [userInteractive 2, utility 3]"))
        blocked.gate.open()
        #expect(waitUntil { blocked.pool.statistics.pending == 0 })
        #expect(RuntimeSnapshot.capture().pools.first { $0.label == "snap.lanes" }?.queuedByLane == [:])
        #expect(poolTestShutDown(blocked.pool))
    }

    /// A pool that records schedule delays has, for each unit submitted while it records, the time the unit waited
    /// for a worker: units queued behind a blocked worker waited at least as long as the test kept it blocked, and
    /// none longer than the test saw from submission to start. Units submitted while it was off are not recorded.
    @Test func scheduleDelaysAreRecordedWhenAsked() throws {
        let blocked = try #require(poolTestBlockedPool(label: "snap.delays"))
        let pool = blocked.pool
        #expect(pool.statistics.scheduleDelays == nil)
        let queue = ConcurrentQueue(label: "snap.delays.queue", pool: pool)
        let group = WorkGroup()
        let longest = Atomic<UInt64>(0)
        queue.async(group: group) {}  // off: not recorded
        pool.recordsScheduleDelays = true
        #expect(pool.statistics.scheduleDelays?.count == 0)
        for _ in 0..<10 {
            let submitted = cthr_clock_now_ns()
            queue.async(group: group) { longest.max(cthr_clock_now_ns() - submitted, ordering: .relaxed) }
        }
        _ = cthr_sleep_ns(30_000_000)
        blocked.gate.open()
        #expect(group.wait(timeout: .seconds(10)))
        // A delay is recorded when the unit is taken, before it runs: all ten are in once the group is empty.
        let delays = try #require(pool.statistics.scheduleDelays)
        #expect(delays.count == 10)
        let median = delays.percentile(0.5) ?? .zero
        // The bucket's lower bound is within 25% below the value.
        #expect(median >= .milliseconds(22), "\(median)")
        #expect(delays.percentile(1) ?? .zero <= .nanoseconds(Int64(longest.load(ordering: .relaxed))))
        #expect(RuntimeDump.format(RuntimeSnapshot.capture()).contains("schedule delay: 10 units, p50 "))
        pool.recordsScheduleDelays = false
        #expect(pool.statistics.scheduleDelays == nil)
        #expect(poolTestShutDown(pool))
    }

    /// Stamped and unstamped units queued in one ring, in runs (recording switched on, off and on while they wait):
    /// exactly the stamped ones are recorded, each once.
    @Test func scheduleDelaysOfMixedRunsInOneQueue() throws {
        let blocked = try #require(poolTestBlockedPool(label: "snap.delays.mixed"))
        let pool = blocked.pool
        let queue = ConcurrentQueue(label: "snap.delays.mixed.queue", pool: pool)
        let group = WorkGroup()
        for recording in [false, true, false, true, true, false] {
            pool.recordsScheduleDelays = recording
            for _ in 0..<3 { queue.async(group: group) {} }
        }
        pool.recordsScheduleDelays = true
        blocked.gate.open()
        #expect(group.wait(timeout: .seconds(10)))
        #expect(pool.statistics.scheduleDelays?.count == 9)
        #expect(poolTestShutDown(pool))
    }

    /// Units a worker submits go through its next slot and local queue, and overflow into a shared shard when that
    /// is full: each keeps its stamp through the moves, so every unit is recorded exactly once.
    @Test func scheduleDelaysFollowUnitsMovedBetweenQueues() {
        let pool = WorkerPool(label: "snap.delays.moved", threads: 1)
        pool.recordsScheduleDelays = true
        let group = WorkGroup()
        let queue = ConcurrentQueue(label: "snap.delays.moved.queue", pool: pool)
        // 1 + 600 units: more than the local queue's 256, so some overflow.
        queue.async(group: group) {
            for _ in 0..<600 { queue.async(group: group) {} }
        }
        #expect(group.wait(timeout: .seconds(10)))
        #expect(waitUntil { pool.statistics.scheduleDelays?.count == 601 })
        #expect(pool.statistics.scheduleDelays?.count == 601)
        #expect(poolTestShutDown(pool))
    }
}

@Suite(.serialized) struct RuntimeSnapshotScaleTests {
    /// A snapshot of a process with 1,000 queues and 8 pools lists them all, and a producer submitting meanwhile
    /// keeps going: it never waits for a capture (the figures are printed, not asserted).
    @Test func aSnapshotOfAThousandQueuesAndEightPools() {
        let pools = (0..<8).map { WorkerPool(label: "scale.pool.\($0)", threads: 1) }
        let queues = (0..<1000).map { SerialQueue(label: "scale.queue.\($0)", pool: pools[$0 % 8]) }
        let stop = Atomic<Bool>(false)
        let submitted = Atomic<Int>(0)
        let longestSubmission = Atomic<UInt64>(0)
        let producer = try! PosixThread(name: "scale.producer") {
            var index = 0
            while !stop.load(ordering: .relaxed) {
                let start = cthr_clock_now_ns()
                queues[index % 1000].async {}
                let took = cthr_clock_now_ns() - start
                if took > longestSubmission.load(ordering: .relaxed) {
                    longestSubmission.store(took, ordering: .relaxed)
                }
                submitted.add(1, ordering: .relaxed)
                index += 1
            }
        }
        var durations: [UInt64] = []
        var snapshot = RuntimeSnapshot.capture()
        for _ in 0..<20 {
            let start = cthr_clock_now_ns()
            snapshot = RuntimeSnapshot.capture()
            durations.append(cthr_clock_now_ns() - start)
        }
        let during = submitted.load(ordering: .relaxed)
        stop.store(true, ordering: .relaxed)
        producer.join()
        durations.sort()
        print(
            "snapshot scale: 1000 queues, 8 pools: median capture \(durations[10] / 1000) µs, "
                + "longest \(durations[19] / 1000) µs; \(during) submissions meanwhile, longest "
                + "\(longestSubmission.load(ordering: .relaxed) / 1000) µs"
        )
        #expect(snapshot.queues.filter { $0.label.hasPrefix("scale.queue.") }.count == 1000)
        #expect(snapshot.pools.filter { $0.label.hasPrefix("scale.pool.") }.count == 8)
        #expect(during > 0)
        for pool in pools { poolTestShutDown(pool) }
    }
}
