// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import CThreading
import Glibc
import Synchronization
import Testing

@testable import Threading

/// The pool's `fork()` handlers in a busy, many-threaded process: a child that only exits (as a fork-and-exec
/// child does) gets past them, whatever the pools, queues, jobs and timers were doing at the fork.
///
/// Unlike the clean-child tests (``ForkTests``), this one forks inside the test process, on purpose: its other threads
/// keep running tests, and one of them may hold a lock of the Swift runtime at the fork. A child handler that asks the
/// runtime for a type it has not made yet then hangs, now and then (`ForkRegistry` says why). `make fork-check`
/// (in CI) runs this test under a debugger and fails if a child handler asks at all, which is what makes it
/// deterministic; here it checks that the child exits and the parent's work all runs.
@Suite struct ForkHandlerTests {
    @Test(.disabled(if: faultForkBlockedBySanitizer, "TSan does not support multi-threaded fork children"))
    func aChildThatOnlyExitsGetsPastTheForkHandlersWhileEverythingIsBusy() throws {
        let gate = QueueGate()
        // A pool with idle workers.
        let idlePool = WorkerPool(label: "fork.handlers.idle", threads: 2)
        defer { poolTestShutDown(idlePool) }
        let warmed = WorkGroup()
        let idleQueue = ConcurrentQueue(label: "fork.handlers.idle.q", pool: idlePool)
        for _ in 0..<8 { idleQueue.async(group: warmed) {} }
        #expect(warmed.wait(timeout: .seconds(30)))
        // A pool whose concurrent queue runs a barrier at the gate, with a reader queued behind it.
        let pool = WorkerPool(label: "fork.handlers.busy", threads: 2)
        defer { poolTestShutDown(pool) }
        let work = WorkGroup()
        let concurrent = ConcurrentQueue(label: "fork.handlers.concurrent", pool: pool)
        concurrent.async(group: work, flags: .barrier) { _ = gate.wait(seconds: 30) }
        concurrent.async(group: work) {}
        // Jobs: one running at the gate, one waiting for a slot, one waiting for a dependency.
        let jobs = JobQueue(name: "fork.handlers.jobs", maxConcurrentJobs: 1)
        let running = jobs.addJob(name: "running") { _ in _ = gate.wait(seconds: 30) }
        jobs.addJob(name: "waiting") { _ in }
        let dependent = Job(name: "dependent") { _ in }
        try dependent.addDependency(running)
        jobs.addJob(dependent)
        // A timer far off.
        let timer = QueueTimer(queue: concurrent, delay: .seconds(600)) {}
        defer { timer.cancel() }
        // The fork, from a worker of the busy pool, inside a serial queue's task.
        let status = Atomic<Int32>(-1)
        let serial = SerialQueue(label: "fork.handlers.serial", pool: pool)
        serial.async(group: work) { status.store(faultRunForked(quiet: false) { 0 }, ordering: .relaxed) }
        serial.async(group: work) {}
        // The parent's work runs once the forking task is back.
        #expect(waitUntil(seconds: 120) { status.load(ordering: .relaxed) >= 0 })
        gate.open()
        #expect(work.wait(timeout: .seconds(30)))
        #expect(jobs.waitUntilAllFinished(timeout: .seconds(30)))
        // faultRunForked: 0 = the child exited with 0; 99 = it hung (killed after 90 s).
        #expect(status.load(ordering: .relaxed) == 0)
    }
}
