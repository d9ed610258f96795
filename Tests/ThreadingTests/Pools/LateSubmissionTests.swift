// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import CThreading
import Synchronization
import Testing

@testable import Threading

/// Work that reaches a pool while or after it shuts down: the recoverable forms answer instead of trapping, a pool's
/// own threads may still submit while it drains, and a timed shutdown's deadline holds for every queue kind.
@Suite struct LateSubmissionTests {
    /// Every recoverable form takes work while the pool runs and refuses it, with nothing run, once it was shut down.
    @Test func recoverableFormsAnswerAfterShutdown() throws {
        let pool = WorkerPool(label: "late.forms", threads: 2)
        let serial = SerialQueue(label: "late.serial", pool: pool)
        let concurrent = ConcurrentQueue(label: "late.concurrent", pool: pool)
        let jobs = JobQueue(name: "late.jobs", pool: pool)
        let ran = Atomic<Int>(0)
        #expect(serial.tryAsync { ran.add(1, ordering: .relaxed) })
        #expect(concurrent.tryAsync { ran.add(1, ordering: .relaxed) })
        #expect(concurrent.tryAsync(flags: .barrier) { ran.add(1, ordering: .relaxed) })
        #expect(jobs.tryAddJob(Job { _ in ran.add(1, ordering: .relaxed) }))
        #expect(serial.tryAsyncAfter(delay: .zero) { ran.add(1, ordering: .relaxed) })
        let timer = QueueTimer.start(queue: serial, delay: .zero) { ran.add(1, ordering: .relaxed) }
        #expect(timer != nil)
        #expect(waitUntil { ran.load(ordering: .relaxed) == 6 })
        #expect(poolTestShutDown(pool))

        #expect(!serial.tryAsync { ran.add(1, ordering: .relaxed) })
        #expect(!concurrent.tryAsync { ran.add(1, ordering: .relaxed) })
        #expect(!concurrent.tryAsync(flags: .barrier) { ran.add(1, ordering: .relaxed) })
        let job = Job { _ in ran.add(1, ordering: .relaxed) }
        #expect(!jobs.tryAddJob(job))
        #expect(!serial.tryAsyncAfter(delay: .zero) { ran.add(1, ordering: .relaxed) })
        #expect(QueueTimer.start(queue: serial, delay: .zero) { ran.add(1, ordering: .relaxed) } == nil)
        // A refused job was not added: another queue may take it.
        let other = JobQueue(name: "late.other")
        other.addJob(job)
        #expect(job.waitUntilFinished(timeout: .seconds(10)))
        #expect(ran.load(ordering: .relaxed) == 7)
        #expect(pool.statistics.cancelledFirings == 0)
        _ = timer
    }

    /// While the pool drains, its own threads may still submit follow-up work with the recoverable forms (it runs);
    /// other threads are refused.
    @Test func drainingPoolTakesFollowUpWorkFromItsOwnThreads() throws {
        let pool = WorkerPool(label: "late.drain", threads: 1)
        let queue = SerialQueue(label: "late.drain.queue", pool: pool)
        let gate = QueueGate()
        let started = QueueGate()
        let answers = Mutex<[Bool]>([])
        let ran = Atomic<Int>(0)
        queue.async {
            started.open()
            _ = gate.wait()
            let accepted = queue.tryAsync { ran.add(1, ordering: .relaxed) }
            answers.withLock { $0.append(accepted) }
        }
        #expect(started.wait())
        let stopper = try PosixThread { poolTestShutDown(pool) }
        #expect(waitUntil { pool.isShutDown })
        #expect(!queue.tryAsync { ran.add(1, ordering: .relaxed) })
        gate.open()
        #expect(stopper.join())
        #expect(answers.withLock { $0 } == [true])
        #expect(ran.load(ordering: .relaxed) == 1)
    }

    /// A timed shutdown over a long batch: five 200 ms tasks on a serial queue of a one-thread pool and a 50 ms timeout. The drain
    /// had taken all five as one batch; the four not started are counted and never run, though the drain's thread
    /// returns to its batch after the shutdown returned.
    @Test func timedShutdownBoundsASerialQueuesTakenBatch() throws {
        let pool = WorkerPool(label: "late.batch", threads: 1)
        let queue = SerialQueue(label: "late.batch.queue", pool: pool)
        let started = Atomic<Int>(0)
        let first = QueueGate()
        let release = QueueGate()
        for index in 0..<5 {
            queue.async {
                started.add(1, ordering: .relaxed)
                if index == 0 {
                    first.open()
                    _ = release.wait()
                }
            }
        }
        #expect(first.wait())
        let result = pool.shutdown(timeout: .milliseconds(50))
        #expect(result.tasksNotRun == 4)
        #expect(result.busyThreads == 1)
        #expect(!result.isComplete)
        release.open()
        #expect(waitUntil { pool.statistics.threads == 0 })
        #expect(started.load(ordering: .relaxed) == 1)
    }

    /// The same bound for a concurrent queue and a job queue: what had not started never starts. (A blocking pool:
    /// a CPU pool would add a thread while the first task waits.)
    @Test func timedShutdownBoundsConcurrentAndJobQueues() throws {
        let pool = WorkerPool(label: "late.kinds", threads: 1, kind: .blocking)
        let concurrent = ConcurrentQueue(label: "late.kinds.c", pool: pool)
        let jobs = JobQueue(name: "late.kinds.j", maxConcurrentJobs: 1, pool: pool)
        let started = Atomic<Int>(0)
        let first = QueueGate()
        let release = QueueGate()
        concurrent.async {
            started.add(1, ordering: .relaxed)
            first.open()
            _ = release.wait()
        }
        #expect(first.wait())
        for _ in 0..<3 { concurrent.async { started.add(1, ordering: .relaxed) } }
        for _ in 0..<3 { jobs.addJob(Job { _ in started.add(1, ordering: .relaxed) }) }
        let result = pool.shutdown(timeout: .milliseconds(20))
        #expect(result.tasksNotRun == 6)
        #expect(result.busyThreads == 1)
        release.open()
        #expect(waitUntil { pool.statistics.threads == 0 })
        #expect(started.load(ordering: .relaxed) == 1)
    }

    /// A notification registered while the pool ran and due after it stopped is dropped and counted, never lost
    /// without a word (and never run).
    @Test func notificationsDueAfterTheShutdownAreCounted() throws {
        let pool = WorkerPool(label: "late.notify", threads: 1)
        let queue = SerialQueue(label: "late.notify.queue", pool: pool)
        let group = WorkGroup()
        let item = WorkItem {}
        let ran = Atomic<Int>(0)
        group.enter()
        group.notify(queue: queue) { ran.add(1, ordering: .relaxed) }
        item.notify(queue: queue) { ran.add(1, ordering: .relaxed) }
        #expect(poolTestShutDown(pool))
        group.leave()
        item.perform()
        #expect(pool.statistics.cancelledFirings == 2)
        #expect(ran.load(ordering: .relaxed) == 0)
    }

    /// After a timed shutdown left tasks in a serial queue (they are counted and released), a `sync` on it runs: the
    /// drain the stopped pool dropped does not hold the queue for ever.
    @Test func syncAfterAnExpiredShutdownRuns() throws {
        guard let (pool, gate) = poolTestBlockedPool(label: "late.sync") else { return }
        let queue = SerialQueue(label: "late.sync.queue", pool: pool)
        let ran = Atomic<Int>(0)
        queue.async { ran.add(1, ordering: .relaxed) }
        let result = pool.shutdown(timeout: .milliseconds(10))
        #expect(result.tasksNotRun == 1)
        let value = queue.sync { 7 }
        #expect(value == 7)
        gate.open()
        #expect(waitUntil { pool.statistics.threads == 0 })
        #expect(ran.load(ordering: .relaxed) == 0)
    }

    /// A drain scheduled after the shutdown counted its queue (a submission or a `sync`'s release took the idle queue's
    /// drain lock just before the pool stopped, and scheduled the drain just after the count) is refused by the stopped
    /// pool: it gives the drain lock back, so a later `sync` runs instead of waiting for a drain that never comes.
    /// (The window is a few instructions wide; the test takes the lock and schedules the drain as that thread would.)
    @Test func aDrainRefusedAfterTheShutdownCountedItsQueueGivesTheQueueBack() throws {
        let pool = WorkerPool(label: "late.refused", threads: 1)
        let queue = SerialQueue(label: "late.refused.queue", pool: pool)
        #expect(poolTestShutDown(pool))
        #expect(queue.core.tryAcquireFast())
        queue.core.scheduleDrain()
        // Required: with the lock kept, the `sync` below would wait for ever.
        try #require(queue.core.word.load() & QueueState.owned == 0)
        #expect(queue.tryAsync {} == false)
        let value = queue.sync { 7 }
        #expect(value == 7)
    }

    /// The same for a target queue: a child queue's drain forwarded to its target after the shutdown counted both
    /// is refused there; the target gives its drain lock back and releases the forwarded drain, which can never run,
    /// instead of scheduling a drain for it again (a drain is no task: the counts do not change), and the child
    /// gets its own drain lock back with it.
    @Test func aTargetQueueRefusedADrainAfterTheCountGivesItselfBack() throws {
        let pool = WorkerPool(label: "late.target", threads: 1)
        let target = SerialQueue(label: "late.target.queue", pool: pool)
        let child = SerialQueue(label: "late.target.child", target: target)
        #expect(poolTestShutDown(pool))
        let dropped = pool.statistics.cancelledFirings
        #expect(child.core.tryAcquireFast())
        child.core.scheduleDrain()
        try #require(target.core.word.load() & QueueState.owned == 0)
        #expect(pool.statistics.cancelledFirings == dropped)
        let value = target.sync { 7 }
        #expect(value == 7)
        try #require(child.core.word.load() & QueueState.owned == 0)
        #expect(child.sync { 8 } == 8)
    }

    /// A child queue (one with a target) whose drain waited in its target when a timed shutdown gave up: the count
    /// gives the child's drain lock back, so a `sync` on the child runs (it was held for ever).
    @Test func aChildQueueLeftByAnExpiredShutdownTakesSyncAgain() throws {
        guard let (pool, gate) = poolTestBlockedPool(label: "late.child") else { return }
        let target = SerialQueue(label: "late.child.target", pool: pool)
        let child = SerialQueue(label: "late.child.queue", target: target)
        let ran = Atomic<Int>(0)
        child.async { ran.add(1, ordering: .relaxed) }
        let result = pool.shutdown(timeout: .milliseconds(10))
        #expect(result.tasksNotRun == 1)
        try #require(child.core.word.load() & QueueState.owned == 0)
        let value = child.sync { 7 }
        #expect(value == 7)
        gate.open()
        #expect(waitUntil { pool.statistics.threads == 0 })
        #expect(ran.load(ordering: .relaxed) == 0)
    }

    /// A concurrent queue's task started on the pool (it holds a reader slot) and dropped by a timed shutdown gives
    /// its slot back: a barrier `sync` on the queue runs afterwards (it waited for ever for a reader that never ran).
    @Test func aConcurrentQueueLeftByAnExpiredShutdownTakesABarrierAgain() throws {
        guard let (pool, gate) = poolTestBlockedPool(label: "late.readers") else { return }
        let queue = ConcurrentQueue(label: "late.readers.queue", pool: pool)
        let ran = Atomic<Int>(0)
        for _ in 0..<3 { queue.async { ran.add(1, ordering: .relaxed) } }
        let result = pool.shutdown(timeout: .milliseconds(10))
        #expect(result.tasksNotRun == 3)
        // Required: with the readers kept, the barrier below would wait for ever.
        try #require(queue.core.word.load() >> 8 == 0)
        #expect(queue.sync(flags: .barrier) { 7 } == 7)
        #expect(queue.sync { 8 } == 8)
        gate.open()
        #expect(waitUntil { pool.statistics.threads == 0 })
        #expect(ran.load(ordering: .relaxed) == 0)
    }

    /// An async barrier the pool had started (the queue is its alone) and a timed shutdown dropped gives the queue
    /// back unrun: a later `sync` neither waits for it nor runs it (a `sync` caller runs a started barrier that
    /// still waits on the pool, but this one was counted as not run).
    @Test func aBarrierDroppedByAnExpiredShutdownGivesTheQueueBackUnrun() throws {
        guard let (pool, gate) = poolTestBlockedPool(label: "late.barrier") else { return }
        let queue = ConcurrentQueue(label: "late.barrier.queue", pool: pool)
        let ran = Atomic<Int>(0)
        queue.async(flags: .barrier) { ran.add(1, ordering: .relaxed) }
        queue.async { ran.add(1, ordering: .relaxed) }
        let result = pool.shutdown(timeout: .milliseconds(10))
        #expect(result.tasksNotRun == 2)
        try #require(queue.core.word.load() & QueueState.owned == 0)
        #expect(queue.sync { 7 } == 7)
        #expect(queue.sync(flags: .barrier) { 8 } == 8)
        #expect(ran.load(ordering: .relaxed) == 0)
        gate.open()
        #expect(waitUntil { pool.statistics.threads == 0 })
        #expect(ran.load(ordering: .relaxed) == 0)
    }

    /// An async barrier the pool had started and a `sync` caller then claimed and ran (the pool's threads were busy)
    /// leaves a spent unit in the pool: a timed shutdown that drops it counts no task for it (it ran).
    @Test func aBarrierASyncCallerRanIsNotCountedWhenItsUnitIsDropped() throws {
        guard let (pool, gate) = poolTestBlockedPool(label: "late.claimed") else { return }
        let queue = ConcurrentQueue(label: "late.claimed.queue", pool: pool)
        let ran = Atomic<Int>(0)
        queue.async(flags: .barrier) { ran.add(1, ordering: .relaxed) }
        #expect(queue.sync { ran.load(ordering: .relaxed) } == 1)
        let result = pool.shutdown(timeout: .milliseconds(10))
        #expect(result.tasksNotRun == 0)
        #expect(pool.statistics.cancelledFirings == 0)
        gate.open()
        #expect(waitUntil { pool.statistics.threads == 0 })
        #expect(ran.load(ordering: .relaxed) == 1)
    }

    /// A `sync` caller waiting behind a concurrent queue's tasks when a timed shutdown gives up on them is granted
    /// once they are counted (it waited for ever behind a barrier that held the queue's dropped readers).
    @Test func aSyncWaitingBehindTasksAnExpiredShutdownDroppedRuns() throws {
        guard let (pool, gate) = poolTestBlockedPool(label: "late.waiter") else { return }
        let queue = ConcurrentQueue(label: "late.waiter.queue", pool: pool)
        let ran = Atomic<Int>(0)
        queue.async { ran.add(1, ordering: .relaxed) }
        queue.async(flags: .barrier) { ran.add(1, ordering: .relaxed) }
        let waited = QueueGate()
        let waiter = try PosixThread(name: "late.waiter.sync") {
            queue.sync(flags: .barrier) {}
            waited.open()
        }
        // The barrier task and the `sync` caller behind it are queued (the reader holds its slot on the pool).
        try #require(waitUntil { queue.core.lock.withLock { queue.core.items.count } == 2 })
        let result = pool.shutdown(timeout: .milliseconds(10))
        #expect(result.tasksNotRun == 2)
        try #require(waited.wait())
        waiter.join()
        gate.open()
        #expect(waitUntil { pool.statistics.threads == 0 })
        #expect(ran.load(ordering: .relaxed) == 0)
    }

    /// The same for a concurrent queue with a target: the started item waiting in the target (concurrent or
    /// serial) holds a slot in both; the target's release of it gives the child's back. With a width of 1 the
    /// child's other tasks wait in the child: its count takes them (the slot given back starts none of them, which
    /// would be refused and counted as dropped one by one).
    @Test(arguments: [false, true], [nil, 1] as [Int?])
    func aConcurrentChildLeftByAnExpiredShutdownTakesABarrierAgain(serialTarget: Bool, width: Int?) throws {
        guard let (pool, gate) = poolTestBlockedPool(label: "late.cchild") else { return }
        let target: any WorkQueue =
            serialTarget
            ? SerialQueue(label: "late.cchild.target", pool: pool)
            : ConcurrentQueue(label: "late.cchild.target", pool: pool)
        let child = ConcurrentQueue(label: "late.cchild.queue", width: width, target: target)
        let ran = Atomic<Int>(0)
        for _ in 0..<3 { child.async { ran.add(1, ordering: .relaxed) } }
        let result = pool.shutdown(timeout: .milliseconds(10))
        #expect(result.tasksNotRun == 3)
        #expect(pool.statistics.cancelledFirings == 0)
        try #require(child.core.word.load() >> 8 == 0)
        #expect(child.sync(flags: .barrier) { 7 } == 7)
        if let target = target as? ConcurrentQueue {
            try #require(target.core.word.load() >> 8 == 0)
            #expect(target.sync(flags: .barrier) { 8 } == 8)
        } else if let target = target as? SerialQueue {
            #expect(target.sync { 8 } == 8)
        }
        gate.open()
        #expect(waitUntil { pool.statistics.threads == 0 })
        #expect(ran.load(ordering: .relaxed) == 0)
    }

    /// An async barrier waiting for a `sync` reader to leave (it owns the queue; the reader entered without
    /// touching the shared word) is pending work: a timed shutdown waits for it, then counts it and gives the queue
    /// back (it was neither waited for nor counted, and a later barrier `sync` waited for ever).
    @Test func aBarrierWaitingForReadersIsCountedByAnExpiredShutdown() throws {
        let pool = WorkerPool(label: "late.striped", threads: 1)
        let queue = ConcurrentQueue(label: "late.striped.queue", pool: pool)
        try #require(queue.core.stripes != nil)
        let inside = QueueGate()
        let leave = QueueGate()
        let reader = try PosixThread(name: "late.striped.reader") {
            queue.sync {
                inside.open()
                _ = leave.wait()
            }
        }
        try #require(inside.wait())
        let ran = Atomic<Int>(0)
        queue.async(flags: .barrier) { ran.add(1, ordering: .relaxed) }
        #expect(queue.core.word.load() & QueueState.draining != 0)
        #expect(queue.core.pendingTaskCount == 1)
        let result = pool.shutdown(timeout: .milliseconds(10))
        #expect(result.tasksNotRun == 1)
        #expect(!result.isComplete)
        leave.open()
        reader.join()
        try #require(queue.core.word.load() & QueueState.owned == 0)
        #expect(queue.sync(flags: .barrier) { 7 } == 7)
        #expect(ran.load(ordering: .relaxed) == 0)
    }

    /// A serial child's drain that reaches its concurrent target after the shutdown counted both (the idle child's
    /// drain lock was taken just before the stop): the target releases it unrun, counts no task for it, and the
    /// child gets its drain lock back, whether the target took it on its lock-free path or under its lock (a
    /// barrier `sync` holds the target meanwhile).
    @Test(arguments: [false, true])
    func aConcurrentTargetRefusedADrainAfterTheCountGivesTheChildBack(targetHeld: Bool) throws {
        let pool = WorkerPool(label: "late.ctarget", threads: 1)
        let target = ConcurrentQueue(label: "late.ctarget.queue", pool: pool)
        let child = SerialQueue(label: "late.ctarget.child", target: target)
        #expect(poolTestShutDown(pool))
        let dropped = pool.statistics.cancelledFirings
        let forward = {
            #expect(child.core.tryAcquireFast())
            child.core.scheduleDrain()
        }
        if targetHeld { target.sync(flags: .barrier, execute: forward) } else { forward() }
        try #require(child.core.word.load() & QueueState.owned == 0)
        try #require(target.core.word.load() & ~QueueState.hasItems == 0)
        #expect(pool.statistics.cancelledFirings == dropped)
        #expect(child.sync { 7 } == 7)
        #expect(target.sync(flags: .barrier) { 8 } == 8)
    }

    /// Jobs a timed shutdown gave up on end cancelled without running: the one whose unit the pool dropped (the queue
    /// had started it) and the one still waiting for a slot. Their waits, the queue's `waitUntilAllFinished`, their
    /// completion handlers and a dependent in another pool's queue all see the end, instead of waiting for ever.
    @Test func jobsATimedShutdownGaveUpOnEndCancelled() throws {
        guard let (pool, gate) = poolTestBlockedPool(label: "late.jobs") else { return }
        let jobs = JobQueue(name: "late.jobs.queue", maxConcurrentJobs: 1, pool: pool)
        let elsewhere = JobQueue(name: "late.jobs.elsewhere")
        let ran = Atomic<Int>(0)
        let handled = Atomic<Int>(0)
        let started = Job { _ in ran.add(1, ordering: .relaxed) }
        let waiting = Job { _ in ran.add(1, ordering: .relaxed) }
        let dependent = Job { _ in handled.add(10, ordering: .relaxed) }
        try dependent.addDependency(waiting)
        for job in [started, waiting] { job.addCompletionHandler { _ in handled.add(1, ordering: .relaxed) } }
        jobs.addJob(started)
        jobs.addJob(waiting)
        elsewhere.addJob(dependent)
        #expect(started.state == .executing)
        #expect(waiting.state == .ready)
        let result = pool.shutdown(timeout: .milliseconds(10))
        #expect(result.tasksNotRun == 2)
        #expect(started.waitUntilFinished(timeout: .seconds(20)))
        #expect(waiting.waitUntilFinished(timeout: .seconds(20)))
        #expect(jobs.waitUntilAllFinished(timeout: .seconds(20)))
        #expect(dependent.waitUntilFinished(timeout: .seconds(20)))
        #expect(started.state == .cancelled)
        #expect(waiting.state == .cancelled)
        #expect(jobs.jobCount == 0)
        #expect(handled.load(ordering: .relaxed) == 12)
        gate.open()
        #expect(waitUntil { pool.statistics.threads == 0 })
        #expect(ran.load(ordering: .relaxed) == 0)
    }

    /// A started job whose unit the stopped pool refuses (the queue started it just before the stop, and scheduled
    /// it just after) ends cancelled too. (The window is a few instructions wide; the test hands the pool the unit as
    /// the queue would.)
    @Test func aStartedJobThePoolRefusesEndsCancelled() throws {
        let pool = WorkerPool(label: "late.refusedjob", threads: 1)
        #expect(poolTestShutDown(pool))
        let job = Job { _ in }
        JobGraph.lock.withLock { job.stateValue = .executing }
        #expect(!pool.poolCore.schedule(.queuedJob(job, observers: []), lane: QoS.default.rawValue))
        #expect(job.state == .cancelled)
        #expect(job.waitUntilFinished(timeout: .seconds(20)))
    }

    /// Group tasks a timed shutdown gave up on leave their group without running (counted in `tasksNotRun`), so a
    /// wait for the group ends instead of hanging.
    @Test func groupTasksLeftByAnExpiredShutdownLeaveTheGroup() throws {
        guard let (pool, gate) = poolTestBlockedPool(label: "late.group") else { return }
        let serial = SerialQueue(label: "late.group.serial", pool: pool)
        let concurrent = ConcurrentQueue(label: "late.group.concurrent", pool: pool)
        let group = WorkGroup()
        let ran = Atomic<Int>(0)
        serial.async(group: group) { ran.add(1, ordering: .relaxed) }
        concurrent.async(group: group) { ran.add(1, ordering: .relaxed) }
        concurrent.async(group: group, flags: .barrier) { ran.add(1, ordering: .relaxed) }
        let result = pool.shutdown(timeout: .milliseconds(10))
        #expect(result.tasksNotRun == 3)
        #expect(group.wait(timeout: .seconds(20)))
        gate.open()
        #expect(waitUntil { pool.statistics.threads == 0 })
        #expect(ran.load(ordering: .relaxed) == 0)
    }

    /// `shutdownGracefully(timeout:)` is the async form of `shutdown(timeout:)`: same result, no thread blocked.
    /// (The first task holds its thread until the end of the test, however long a loaded machine takes to get there.)
    @Test func asyncTimedShutdownReportsWhatIsLeft() async throws {
        let pool = WorkerPool(label: "late.async", threads: 1)
        let queue = SerialQueue(label: "late.async.queue", pool: pool)
        let first = QueueGate()
        let release = QueueGate()
        queue.async {
            first.open()
            _ = release.wait(seconds: 120)
        }
        for _ in 0..<3 { queue.async {} }
        #expect(first.wait())
        let result = try await withDeadline { await pool.shutdownGracefully(timeout: .milliseconds(20)) }
        #expect(result.tasksNotRun == 3)
        #expect(result.busyThreads == 1)
        release.open()
        let idle = WorkerPool(label: "late.async.idle", threads: 1)
        let complete = try await withDeadline { await idle.shutdownGracefully(timeout: .seconds(10)) }
        #expect(complete.isComplete)
    }
}

/// `WorkerPool.run`: the value, the thread, typed errors, cancellation and the pool's shutdown.
@Suite struct WorkerPoolRunTests {
    @Test func runsOnThePoolAndReturnsTheValue() async throws {
        let pool = WorkerPool(label: "run.value", threads: 2)
        let (value, onPool) = try await withDeadline { try await pool.run { (41 + 1, isOnPool(pool)) } }
        #expect(value == 42)
        #expect(onPool)
        #expect(poolTestShutDown(pool))
    }

    /// The body's typed error reaches the caller as thrown.
    @Test func rethrowsTheBodysError() async throws {
        struct Refused: Error, Equatable { let code: Int }
        let pool = WorkerPool(label: "run.error", threads: 1)
        await #expect(throws: Refused(code: 7)) {
            try await pool.run { () throws(Refused) -> Int in throw Refused(code: 7) }
        }
        #expect(poolTestShutDown(pool))
    }

    /// From an actor method whose closure touches the actor's state, the body still runs on the pool (task-executor
    /// preference would have run it on the actor's executor).
    @Test func runsOnThePoolFromAnActor() async throws {
        actor Cache {
            var hits = 0
            func offload(_ pool: WorkerPool) async throws -> Bool {
                hits += 1
                let seen = hits
                return try await pool.run { isOnPool(pool) && seen == 1 }
            }
        }
        let pool = WorkerPool(label: "run.actor", threads: 1)
        #expect(try await withDeadline { try await Cache().offload(pool) })
        #expect(poolTestShutDown(pool))
    }

    /// Cancelled before the body starts: `CancellationError`, and the body never runs.
    @Test func cancellationBeforeTheStartThrows() async throws {
        guard let (pool, gate) = poolTestBlockedPool(label: "run.cancel") else { return }
        let ran = TestCounter()
        let task = Task(executorPreference: WorkerPool.shared) {
            try await pool.run { ran.add() }
        }
        task.cancel()
        await #expect(throws: CancellationError.self) { try await withDeadline { try await task.value } }
        gate.open()
        #expect(poolTestShutDown(pool))
        #expect(ran.value == 0)
    }

    /// After the shutdown: `ThreadingError.shutDown` at once; from a pool thread while it drains: runs.
    @Test func shutDownPoolRefusesWithAnError() async throws {
        let pool = WorkerPool(label: "run.stopped", threads: 1)
        #expect(poolTestShutDown(pool))
        await #expect(throws: ThreadingError.shutDown) { try await pool.run { 1 } }
        let queue = SerialQueue(label: "run.stopped.queue", pool: pool)
        await #expect(throws: ThreadingError.shutDown) { try await queue.run { 1 } }
    }

    /// Runs a timed shutdown gave up on resume their callers with `shutDown` (none is left suspended) and are
    /// counted in `tasksNotRun`.
    @Test func runsDroppedByAnExpiredShutdownResumeWithAnError() async throws {
        guard let (pool, gate) = poolTestBlockedPool(label: "run.expired") else { return }
        let queue = SerialQueue(label: "run.expired.queue", pool: pool)
        let ran = TestCounter()
        // The tasks prefer the shared pool: sync tests running beside this one may hold every cooperative thread.
        let pooled = (0..<3).map { _ in
            Task(executorPreference: WorkerPool.shared) { try await pool.run { ran.add() } }
        }
        let queued = (0..<2).map { _ in
            Task(executorPreference: WorkerPool.shared) { try await queue.run { ran.add() } }
        }
        // Three runs and the queue's drain in the pool, and both of the queue's items in the queue (the drain is
        // scheduled with the first item, so the pool's count alone does not show the second).
        #expect(waitUntil { pool.statistics.pending >= 4 && queue.core.pendingTaskCount == 2 })
        let result = await pool.shutdownGracefully(timeout: .milliseconds(20))
        #expect(result.tasksNotRun == 5)
        for task in pooled + queued {
            await #expect(throws: ThreadingError.shutDown) { try await withDeadline { try await task.value } }
        }
        gate.open()
        #expect(waitUntil { pool.statistics.threads == 0 })
        #expect(ran.value == 0)
    }
}
