// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import CThreading
import Glibc
import Synchronization
import Testing

@testable import Threading

/// Blocking regions and the library's own waits: a pool worker that waits gives its slot up (the pool counts it
/// blocked and may run other work meanwhile).
@Suite struct BlockingTests {
    /// The waits of the library, each run by a task of a one-thread CPU pool.
    enum Wait: String, CaseIterable, Sendable {
        case blockingRegion, conditionVariable, monitor, semaphore, job, jobQueue, group, join
    }

    /// While the task waits, the pool counts it blocked and runs another queue's task on a second thread.
    @Test(arguments: Wait.allCases)
    func waitGivesThePoolSlotUp(_ wait: Wait) throws {
        let pool = WorkerPool(label: "blk.\(wait.rawValue)", threads: 1)
        let released = Atomic<Bool>(false)
        let waiting = QueueGate()
        let done = WorkGroup()
        let lock = MutexLock()
        let condition = ConditionVariable()
        let monitor = Monitor(false)
        let semaphore = Semaphore(value: 0)
        let job = Job { _ in }
        let jobs = JobQueue(name: "blk.jobs")
        jobs.suspend()
        let pending = Job { _ in }
        jobs.addJob(pending)
        let group = WorkGroup()
        group.enter()
        let thread = try PosixThread {
            while !released.load(ordering: .acquiring) { usleep(1_000) }
        }
        SerialQueue(label: "blk.waiter", pool: pool).async(group: done) {
            waiting.open()
            switch wait {
            case .blockingRegion:
                WorkerPool.withBlockingRegion {
                    while !released.load(ordering: .acquiring) { usleep(1_000) }
                }
            case .conditionVariable:
                lock.withLock {
                    while !released.load(ordering: .acquiring) { _ = condition.wait(lock, timeout: .seconds(20)) }
                }
            case .monitor:
                _ = monitor.withLock(when: { $0 }, timeout: .seconds(20)) { _ in }
            case .semaphore:
                _ = semaphore.wait(timeout: .seconds(20))
            case .job:
                _ = job.waitUntilFinished(timeout: .seconds(20))
            case .jobQueue:
                _ = jobs.waitUntilAllFinished(timeout: .seconds(20))
            case .group:
                _ = group.wait(timeout: .seconds(20))
            case .join:
                thread.join()
            }
        }
        #expect(waiting.wait())
        #expect(queueTestWait { pool.statistics.blocked == 1 }, "\(wait) did not declare its wait")
        // The one running slot is free: another task runs now.
        let other = QueueGate()
        SerialQueue(label: "blk.other", pool: pool).async { other.open() }
        #expect(other.wait())
        released.store(true, ordering: .releasing)
        lock.withLock { condition.broadcast() }
        monitor.withLock { $0 = true }
        semaphore.signal()
        job.start()
        jobs.resume()
        group.leave()
        #expect(done.wait(timeout: .seconds(20)))
        if wait != .join { thread.join() }
        #expect(poolTestShutDown(pool))
    }

    /// The key-value server shape, at CI size: 64 connections, each with a handler on the blocking pool that blocks
    /// reading its socket (a pipe here) until a request arrives, a 100 ms statistics timer and a write-behind serial
    /// queue on the CPU pool. While all 64 handlers block, the timer keeps firing; then every connection is served
    /// and every write lands. (With the handlers on the CPU pool instead, 24 of 64 were never served and the
    /// timer stalled for the whole run.)
    @Test func keyValueServerShapeServesEveryConnectionAndKeepsItsTimer() {
        let cpu = WorkerPool(label: "kv.cpu", threads: 2)
        let io = WorkerPool(label: "kv.io", threads: 64, kind: .blocking)
        let handlers = ConcurrentQueue(label: "kv.handlers", pool: io)
        let writeBehind = SerialQueue(label: "kv.write-behind", pool: cpu)
        let statsQueue = SerialQueue(label: "kv.stats", pool: cpu)
        let connections = 64
        var pipes: [(read: Int32, write: Int32)] = []
        for _ in 0..<connections {
            var ends: [Int32] = [-1, -1]
            #expect(pipe(&ends) == 0)
            pipes.append((ends[0], ends[1]))
        }
        let blockedHandlers = Atomic<Int>(0)
        let served = Atomic<Int>(0)
        let written = Atomic<Int>(0)
        let firings = QueueTestLocked<[UInt64]>([])
        let timer = QueueTimer(queue: statsQueue, delay: .milliseconds(100), repeating: .milliseconds(100)) {
            firings.withLock { $0.append(cthr_clock_now_ns()) }
        }
        let done = WorkGroup()
        for connection in pipes {
            handlers.async(group: done) {
                blockedHandlers.add(1, ordering: .relaxed)
                var request: UInt8 = 0
                let got = WorkerPool.withBlockingRegion { read(connection.read, &request, 1) }
                guard got == 1 else { return }
                served.add(1, ordering: .relaxed)
                writeBehind.async { written.add(1, ordering: .relaxed) }
            }
        }
        #expect(queueTestWait(seconds: 20) { blockedHandlers.load(ordering: .relaxed) == connections })
        // With every handler blocked, the timer keeps firing (three more times), and no request was served yet.
        let blockedSince = cthr_clock_now_ns()
        #expect(queueTestWait(seconds: 20) { firings.withLock { $0.filter { $0 >= blockedSince }.count } >= 3 })
        #expect(served.load(ordering: .relaxed) == 0)
        for connection in pipes {
            var request: UInt8 = 1
            #expect(write(connection.write, &request, 1) == 1)
        }
        #expect(done.wait(timeout: .seconds(30)))
        #expect(served.load(ordering: .relaxed) == connections)
        #expect(queueTestWait(seconds: 20) { written.load(ordering: .relaxed) == connections })
        timer.cancel()
        for connection in pipes {
            close(connection.read)
            close(connection.write)
        }
        #expect(io.statistics.saturations == 0)
        #expect(poolTestShutDown(io))
        #expect(poolTestShutDown(cpu))
    }
}
