// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import CThreading
import Glibc
import Synchronization
import Testing

@testable import Threading

/// `WorkerPool` instances: sizing, shutdown, queues, timers and job queues on a chosen pool, independence.
@Suite struct WorkerPoolTests {
    @Test func sizes() {
        let cpu = WorkerPool(label: "wp.sizes", threads: 3)
        #expect(cpu.kind == .cpu)
        #expect(cpu.threadCount == 3)
        #expect(cpu.maxThreads == 44)
        let blocking = WorkerPool(label: "wp.sizes.b", threads: 7, kind: .blocking)
        #expect(blocking.threadCount == 7)
        #expect(blocking.maxThreads == 7)
        #expect(WorkerPool(label: "wp.sizes.d").threadCount == WorkerPool.defaultThreadCount)
        #expect(WorkerPool.defaultThreadCount == Int(cthr_cpu_effective_count()))
        #expect(WorkerPool.shared.threadCount == WorkerPool.defaultThreadCount)
        #expect(WorkerPool.blocking.maxThreads == WorkerPool.defaultBlockingThreadCount)
        #expect(poolTestShutDown(cpu))
        #expect(poolTestShutDown(blocking))
    }

    /// Every task accepted before `shutdown()` runs, and afterwards none of the pool's threads is left. The first
    /// serial task holds its queue until a thread opens a gate after the shutdown began, so the serial queue's tasks
    /// (and whatever the concurrent queue and the job queue still hold) are pending while the pool shuts down. (No
    /// task yields or spins: on a loaded machine 150 serial tasks of 200 `sched_yield` each took over 30 s.)
    @Test func shutdownRunsEveryAcceptedTaskAndJoinsItsThreads() throws {
        let pool = WorkerPool(label: "wp.join", threads: 2)
        let serial = SerialQueue(label: "wp.join.serial", pool: pool)
        let concurrent = ConcurrentQueue(label: "wp.join.concurrent", pool: pool)
        let jobs = JobQueue(name: "wp.join.jobs", pool: pool)
        let ran = Atomic<Int>(0)
        let gate = QueueGate()
        let holding = QueueGate()
        serial.async {
            holding.open()
            _ = gate.wait(seconds: 20)
            ran.add(1, ordering: .relaxed)
        }
        for index in 1..<300 {
            let queue: any WorkQueue = index % 2 == 0 ? serial : concurrent
            queue.async { ran.add(1, ordering: .relaxed) }
        }
        for _ in 0..<20 { jobs.addJob(Job { _ in ran.add(1, ordering: .relaxed) }) }
        #expect(holding.wait())
        let opener = try PosixThread {
            _ = cthr_sleep_ns(20_000_000)
            gate.open()
        }
        #expect(poolTestShutDown(pool))
        opener.join()
        #expect(ran.load(ordering: .relaxed) == 320)
        #expect(pool.isShutDown)
        #expect(pool.statistics.threads == 0)
        #expect(poolTestThreadCount(named: "wp.join") == 0)
    }

    /// A task the pool accepted may submit follow-up work while the pool shuts down: it runs too.
    @Test func followUpWorkOfAcceptedTasksRunsDuringShutdown() throws {
        let pool = WorkerPool(label: "wp.follow", threads: 1)
        let first = SerialQueue(label: "wp.follow.1", pool: pool)
        let second = SerialQueue(label: "wp.follow.2", pool: pool)
        let gate = QueueGate()
        let log = TestLog()
        first.async {
            _ = gate.wait()
            second.async { log.append(2) }
            log.append(1)
        }
        let opener = try PosixThread {
            _ = cthr_sleep_ns(20_000_000)
            gate.open()
        }
        #expect(poolTestShutDown(pool))
        #expect(log.values.sorted() == [1, 2])
        opener.join()
    }

    /// A shutdown bounded by a timeout reports the tasks that never ran and the thread still busy.
    @Test func timedShutdownReportsWhatIsLeft() throws {
        let (pool, gate) = try #require(poolTestBlockedPool(label: "wp.timed"))
        let queue = SerialQueue(label: "wp.timed.q", pool: pool)
        let ran = Atomic<Int>(0)
        // The pool's one thread is busy: these wait in the queue, whose drain waits in the pool.
        for _ in 0..<5 { queue.async { ran.add(1, ordering: .relaxed) } }
        let result = pool.shutdown(timeout: .milliseconds(50))
        #expect(!result.isComplete)
        #expect(result.tasksNotRun == 5)
        #expect(result.busyThreads == 1)
        gate.open()
        // The busy thread exits once its task returned; the queued tasks never run.
        #expect(waitUntil { poolTestThreadCount(named: "wp.timed") == 0 })
        #expect(ran.load(ordering: .relaxed) == 0)
    }

    /// A blocking pool's unit counts itself completed just before its last act (a `run` resuming its caller), a
    /// moment before it returns. A shutdown that comes in that moment waits for its thread and reports it complete:
    /// no thread was busy when it returned, long before its timeout. (It reported one busy thread, counted at the
    /// moment the pool stopped: the named-stall test failed now and then on `isComplete`.) Here the moment is long.
    @Test func aUnitThatCountedItselfCompletedIsNotLeftBusyByAShutdownBeforeItsTimeout() {
        let pool = WorkerPool(label: "wp.finishing", threads: 1, kind: .blocking)
        let finishing = QueueGate()
        pool.poolCore.schedule(
            .job({
                PoolCore.unitIsFinishing()
                finishing.open()
                _ = cthr_sleep_ns(200_000_000)  // its last act, after it counted itself completed
            }),
            lane: QoS.default.rawValue
        )
        #expect(finishing.wait())
        #expect(pool.shutdown(timeout: .seconds(30)) == .init(isComplete: true, tasksNotRun: 0, busyThreads: 0))
        #expect(poolTestThreadCount(named: "wp.finishing") == 0)
    }

    /// A pool with nothing to do shuts down at once; a second call returns too.
    @Test func idlePoolShutsDownAndRepeatedShutdownReturns() {
        let pool = WorkerPool(label: "wp.idle")
        #expect(pool.shutdown(timeout: .seconds(10)) == .init(isComplete: true, tasksNotRun: 0, busyThreads: 0))
        #expect(poolTestShutDown(pool))
        #expect(pool.isShutDown)
    }

    /// Queues, a target chain, a timer, a job queue and a queue pool run on the pool they were given.
    @Test func workRunsOnTheChosenPool() {
        let pool = WorkerPool(label: "wp.chosen", threads: 2)
        let root = SerialQueue(label: "wp.chosen.root", pool: pool)
        let child = ConcurrentQueue(label: "wp.chosen.child", target: root)
        let jobs = JobQueue(name: "wp.chosen.jobs", pool: pool)
        let names = QueueTestLocked<[String]>([])
        let done = WorkGroup()
        @Sendable func record() { names.withLock { $0.append(poolTestThreadName()) } }
        root.async(group: done) { record() }
        child.async(group: done) { record() }
        done.enter()
        let timer = QueueTimer(queue: child, delay: .milliseconds(5)) {
            record()
            done.leave()
        }
        let job = Job { _ in record() }
        jobs.addJob(job)
        QueuePool(label: "wp.chosen.queues", count: 2, pool: pool).next().async(group: done) { record() }
        #expect(done.wait(timeout: .seconds(20)))
        #expect(job.waitUntilFinished(timeout: .seconds(20)))
        #expect(names.withLock { $0 } == Array(repeating: "wp.chosen", count: 5))
        _ = timer
        #expect(poolTestShutDown(pool))
    }

    /// Two pools are independent: with every thread of one blocked and work queued behind them, the other runs
    /// its work.
    @Test func saturatingOnePoolDoesNotDelayAnother() {
        let saturated = WorkerPool(label: "wp.busy", threads: 2, kind: .blocking)
        let other = WorkerPool(label: "wp.other", threads: 1)
        let gate = QueueGate()
        let blocked = Atomic<Int>(0)
        let busy = ConcurrentQueue(label: "wp.busy.q", pool: saturated)
        for _ in 0..<6 {
            busy.async {
                blocked.add(1, ordering: .relaxed)
                _ = gate.wait(seconds: 30)
            }
        }
        #expect(waitUntil { blocked.load(ordering: .relaxed) == 2 })
        #expect(saturated.statistics.pending > 0)
        let ran = QueueGate()
        let queue = SerialQueue(label: "wp.other.q", pool: other)
        queue.async { ran.open() }
        let timerFired = QueueGate()
        let timer = QueueTimer(queue: queue, delay: .milliseconds(1)) { timerFired.open() }
        #expect(ran.wait(seconds: 20))
        #expect(timerFired.wait(seconds: 20))
        // Still saturated: the other pool did not wait for it.
        #expect(blocked.load(ordering: .relaxed) == 2)
        gate.open()
        _ = timer
        #expect(poolTestShutDown(saturated))
        #expect(poolTestShutDown(other))
    }

    /// Delayed work whose deadline is after the shutdown never runs and is counted.
    @Test func delayedWorkAfterShutdownIsCancelledAndCounted() {
        let pool = WorkerPool(label: "wp.delayed", threads: 1)
        let queue = SerialQueue(label: "wp.delayed.q", pool: pool)
        let ran = Atomic<Bool>(false)
        queue.asyncAfter(delay: .milliseconds(100)) { ran.store(true, ordering: .relaxed) }
        #expect(poolTestShutDown(pool))
        #expect(waitUntil { pool.statistics.cancelledFirings == 1 })
        let ranAnyway = ran.load(ordering: .relaxed)
        #expect(!ranAnyway)
    }
}
