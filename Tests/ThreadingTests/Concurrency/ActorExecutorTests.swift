// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import Synchronization
import Testing

@testable import Threading

/// Serial queues as actor executors, worker pools as task executors.
@Suite struct ActorExecutorTests {
    /// The executor of a queue handed to an actor is the queue's core: when the actor and its queue are released,
    /// the core stays alive a while (so a late job would trap with a message rather than use freed memory; see
    /// `ConcurrencyCrashTests.actorJobOnAQueueNobodyKeepsTraps`), and is freed once enough other executor queues
    /// were released after it: correct code pays a bounded delay, never a leak.
    @Test func aReleasedExecutorQueueIsKeptBrieflyThenFreed() async throws {
        weak var core: SerialCore?
        do {
            let queue = SerialQueue(label: "conc.released")
            core = queue.core
            let actor = QueueActor(queue: queue)
            let count = try await withDeadline { await actor.increment() }
            #expect(count == 1)
        }
        // Actor and queue are gone (the last reference to the actor may go on another thread: wait for it); the
        // core is kept, marked released (the runtime could still hold its unowned executor).
        #expect(
            waitUntil(seconds: 20) {
                (core?.executorState.load(ordering: .relaxed) ?? 0) & SerialExecutorState.released != 0
            }
        )
        #expect(core != nil)
        for index in 0..<ReleasedExecutorQuarantine.capacity {
            _ = SerialQueue(label: "conc.released.\(index)").asUnownedSerialExecutor()
        }
        #expect(waitUntil(seconds: 20) { core == nil })
    }

    /// The pattern the Concurrency article shows: the actor keeps its queue in a `nonisolated let`.
    @Test func theDocumentedPatternRunsJobsOnTheKeptQueue() async throws {
        let connection = KeptQueueConnection()
        let (sent, onQueue) = try await withDeadline { await connection.send() }
        #expect(sent == 1)
        #expect(onQueue)
    }

    @Test func actorJobsRunOnTheirQueue() async throws {
        let actor = QueueActor(queue: SerialQueue(label: "conc.actor"))
        let onQueue = try await withDeadline { await actor.isOnQueue() }
        #expect(onQueue)
        let count = try await withDeadline { await actor.increment() }
        #expect(count == 1)
    }

    @Test func assumeIsolatedSucceedsInTheQueuesAsyncClosures() async throws {
        let queue = SerialQueue(label: "conc.assume.async")
        let actor = QueueActor(queue: queue)
        let value: Int = try await withDeadline {
            try await queue.run {
                actor.preconditionIsolated()
                return actor.assumeIsolated { $0.increment() }
            }
        }
        #expect(value == 1)
        #expect(queue.isIsolatingCurrentContext() == false)
    }

    @Test func assumeIsolatedSucceedsInsideSyncOnTheCallersThread() throws {
        let queue = SerialQueue(label: "conc.assume.sync")
        let actor = QueueActor(queue: queue)
        let caller = PosixThread.currentID
        let (value, thread) = queue.sync {
            actor.preconditionIsolated()
            return (actor.assumeIsolated { $0.increment() }, PosixThread.currentID)
        }
        #expect(value == 1)
        #expect(thread == caller)
    }

    @Test func assumeIsolatedSucceedsOnAQueueThatTargetsTheActorsQueue() {
        let root = SerialQueue(label: "conc.assume.root")
        let child = SerialQueue(label: "conc.assume.child", target: root)
        let actor = QueueActor(queue: root)
        let value = child.sync { actor.assumeIsolated { $0.increment() } }
        #expect(value == 1)
        #expect(child.sync { root.isIsolatingCurrentContext() } == true)
        #expect(root.sync { child.isIsolatingCurrentContext() } == false)
    }

    /// Actor jobs and plain closures submitted alternately to a suspended queue run in submission order.
    @Test func actorJobsAndClosuresShareOneFIFO() async throws {
        let queue = SerialQueue(label: "conc.fifo")
        let log = LockedValue<[Int]>([])
        let actor = QueueActor(queue: queue, log: log)
        let count = 400
        queue.suspend()
        var tasks: [Task<Void, Never>] = []
        for index in 0..<count {
            if index.isMultiple(of: 2) {
                queue.async { log.withLock { $0.append(index) } }
            } else {
                // An immediate task runs on this thread up to its first suspension: the hop onto the actor, which
                // enqueues the job on the queue before `Task.immediate` returns.
                tasks.append(Task.immediate { await actor.record(index) })
            }
        }
        queue.resume()
        let started = tasks
        try await withDeadline { for task in started { await task.value } }
        _ = try await withDeadline { try await queue.run { 0 } }
        #expect(log.withLock { $0 } == Array(0..<count))
    }

    @Test(arguments: ["shared", "blocking", "user-cpu", "user-blocking"])
    func taskExecutorPreferenceRunsOnThePool(_ which: String) async throws {
        let pool: WorkerPool =
            switch which {
            case "shared": .shared
            case "blocking": .blocking
            case "user-cpu": WorkerPool(label: "conc.cpu", threads: 2)
            default: WorkerPool(label: "conc.blocking", threads: 2, kind: .blocking)
            }
        let inTask = try await withDeadline {
            await Task(executorPreference: pool) { isOnPool(pool) }.value
        }
        #expect(inTask)
        let inScope = try await withDeadline {
            await withTaskExecutorPreference(pool) { isOnPool(pool) }
        }
        #expect(inScope)
        if which.hasPrefix("user") { blockingCall { pool.shutdown(timeout: .seconds(20)) } }
    }

    @Test func taskOnAPoolCallsAnActorOnAQueueAndComesBack() async throws {
        let pool = WorkerPool(label: "conc.mixed", threads: 2, kind: .blocking)
        let actor = QueueActor(queue: SerialQueue(label: "conc.mixed.actor"))
        let (before, inActor, after) = try await withDeadline {
            await withTaskExecutorPreference(pool) {
                let before = isOnPool(pool)
                let inActor = await actor.isOnQueue()
                return (before, inActor, isOnPool(pool))
            }
        }
        #expect(before && inActor && after)
        blockingCall { pool.shutdown(timeout: .seconds(20)) }
    }
}

/// The Concurrency article's pattern: the queue is made once and kept by the actor.
private actor KeptQueueConnection {
    nonisolated let queue = SerialQueue(label: "conc.connection")
    nonisolated var unownedExecutor: UnownedSerialExecutor { queue.asUnownedSerialExecutor() }

    private var sent = 0

    func send() -> (Int, Bool) {
        sent += 1
        return (sent, queue.isCurrent)
    }
}

/// A task executor that hands each job to `pool` the way ``WorkerPool/enqueue(_:)`` does once its shut-down check
/// passed: the moment a shutdown that finishes in between leaves behind.
private final class LateSubmitter: TaskExecutor {
    let pool: WorkerPool

    init(pool: WorkerPool) { self.pool = pool }

    func enqueue(_ job: consuming ExecutorJob) {
        pool.submitAccepted(UnownedJob(job), lane: QoS.default.rawValue)
    }
}

@Suite struct TaskExecutorShutdownRaceTests {
    /// A task job that passed the pool's shut-down check just before the pool stopped still runs (on the global
    /// executor): the stopped pool refuses it, and the pool hands it on instead of dropping it (the task would
    /// never resume).
    ///
    /// The test awaits the job instead of blocking a thread for it: the job runs on the cooperative pool, which a
    /// blocked test thread would take one of the (two, on two cores) threads from.
    @Test func aJobSubmittedAsThePoolStopsRunsElsewhere() async throws {
        let pool = WorkerPool(label: "conc.late", threads: 2)
        #expect(blockingCall { poolTestShutDown(pool) })
        let late = LateSubmitter(pool: pool)
        let ran = WorkGroup()
        ran.enter()
        Task(executorPreference: late) { ran.leave() }
        try await withDeadline(seconds: 10) { try await ran.wait() }
        #expect(pool.statistics.cancelledFirings == 0)  // no timer here: a unit dropped after the stop would count
    }
}
