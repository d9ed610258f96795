// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import Dispatch
import Foundation
import Glibc
import Histogram
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import Synchronization
import Threading

/// The `actors` family: Swift Concurrency on Threading against the executors a user would pick instead.
///
/// - ping-pong: pairs of actors exchange messages (`await peer.ping()` from inside the other actor); one operation is
///   one round trip, throughput is summed over the pairs (1, 2 and 8 pairs: the thread column counts pairs).
///   Actors on `SerialQueue`s (one queue per actor, and the two actors of a pair sharing one queue) vs default
///   actors vs actors on a `DispatchQueue` adapter vs actors on swift-nio event loops.
/// - offload: a blocking call from async code, moved off the cooperative pool: `WorkerPool.blocking.run`, a
///   concurrent queue on the blocking pool (`queue.run`) and the blocking pool through `withTaskExecutorPreference`
///   vs `NIOThreadPool.runIfActive` (the thread column counts concurrent tasks).
/// - waits: `await semaphore.wait()` against the same wait built by hand from a continuation (bare, and with the
///   cancellation handler a wait needs to end when its task is cancelled) and against a `DispatchSemaphore` waited
///   for on a Dispatch thread behind a continuation.
/// - fan-out: a task group of 100 children per operation (run with and without `--global-executor`).
/// - completion waits: `await group.wait()`, `await item.wait()` and `await job.waitUntilFinished()` for work a
///   queue runs, against a continuation that the queued work resumes itself (bare, and with a cancellation
///   handler).
public enum Actors {
    /// One case as the CLI sees it.
    public struct Entry: Sendable {
        /// Display name.
        public var name: String
        /// Command-line identifier.
        public var id: String
        /// Ours, peer or reference.
        public var kind: StrategyKind
        /// One timed run with `threads` pairs or tasks.
        public var run: @Sendable (_ threads: Int, _ seconds: Double) -> RunSample
    }

    /// The ping-pong cases: ours, then the peers.
    public static let pingPongCatalog: [Entry] = [
        Entry(name: "actor on SerialQueue", id: "serial-queue", kind: .ours) { pairs, seconds in
            pingPong(pairs: pairs, seconds: seconds) { _ in
                QueueExecutorPinger(queue: SerialQueue(label: "bench.actor"))
            }
        },
        // The two actors of a pair share one queue: the runtime runs a call between them on the caller's thread.
        Entry(name: "actors sharing one SerialQueue", id: "shared-queue", kind: .ours) { pairs, seconds in
            let queues = (0..<pairs).map { _ in SerialQueue(label: "bench.actor.shared") }
            return pingPong(pairs: pairs, seconds: seconds) { QueueExecutorPinger(queue: queues[$0 / 2]) }
        },
        Entry(name: "default actor", id: "default", kind: .peer) { pairs, seconds in
            pingPong(pairs: pairs, seconds: seconds) { _ in DefaultPinger() }
        },
        Entry(name: "actor on DispatchQueue adapter", id: "dispatch", kind: .peer) { pairs, seconds in
            pingPong(pairs: pairs, seconds: seconds) { _ in
                QueueExecutorPinger(dispatch: DispatchSerialExecutor(DispatchQueue(label: "bench.actor")))
            }
        },
        Entry(name: "actor on NIO event loop", id: "nio", kind: .peer) { pairs, seconds in
            let group = MultiThreadedEventLoopGroup(numberOfThreads: System.coreCount)
            defer { try? group.syncShutdownGracefully() }
            return pingPong(pairs: pairs, seconds: seconds) { _ in QueueExecutorPinger(eventLoop: group.next()) }
        },
    ]

    /// The offload cases.
    public static let offloadCatalog: [Entry] = [
        Entry(name: "WorkerPool.blocking.run", id: "pool-run", kind: .ours) { tasks, seconds in
            runTasks(tasks: tasks, seconds: seconds) {
                _ = try? await WorkerPool.blocking.run { blockingCall() }
            }
        },
        Entry(name: "ConcurrentQueue(pool: .blocking).run", id: "queue-run", kind: .ours) { tasks, seconds in
            let queue = ConcurrentQueue(label: "bench.offload", pool: .blocking)
            return runTasks(tasks: tasks, seconds: seconds) {
                _ = try? await queue.run { blockingCall() }
            }
        },
        Entry(name: "blocking pool via withTaskExecutorPreference", id: "blocking-pool", kind: .ours) {
            tasks,
            seconds in
            runTasks(tasks: tasks, seconds: seconds) {
                await withTaskExecutorPreference(WorkerPool.blocking) { blockingCall() }
            }
        },
        Entry(name: "NIOThreadPool.runIfActive", id: "nio-thread-pool", kind: .peer) { tasks, seconds in
            let pool = NIOThreadPool(numberOfThreads: 64)
            pool.start()
            defer { try? pool.syncShutdownGracefully() }
            return runTasks(tasks: tasks, seconds: seconds) {
                _ = try? await pool.runIfActive { blockingCall() }
            }
        },
    ]

    /// The fan-out case: structured concurrency's common shape, a task group whose children each return a value.
    /// It runs on whatever the global executor is: compare a run with `--global-executor` and one without.
    public static let fanOutCatalog: [Entry] = [
        Entry(name: "task group of 100 children", id: "fan-out", kind: .ours) { tasks, seconds in
            runTasks(tasks: tasks, seconds: seconds) {
                let sum = await withTaskGroup(of: Int.self) { group in
                    for index in 0..<100 { group.addTask { index } }
                    return await group.reduce(0, &+)
                }
                precondition(sum == 4_950, "fan-out: the children's sum is \(sum)")
            }
        }
    ]

    /// The wait cases: one task hands a unit to another and back.
    public static let waitCatalog: [Entry] = [
        Entry(name: "await Semaphore.wait() ping-pong", id: "semaphore", kind: .ours) { _, seconds in
            let sides = [Semaphore(value: 0), Semaphore(value: 0)]
            return asyncPingPong(seconds: seconds, signal: { sides[$0].signal() }, wait: { try await sides[$0].wait() })
        },
        Entry(name: "hand-built continuation ping-pong", id: "continuation", kind: .peer) { _, seconds in
            let sides = [HandBuiltEvent(), HandBuiltEvent()]
            return asyncPingPong(seconds: seconds, signal: { sides[$0].signal() }, wait: { await sides[$0].wait() })
        },
        // The same event with what a wait needs to end when its task is cancelled: Swift's only way to hear of it is
        // a cancellation handler around the suspension, and that handler's cost is the runtime's, not the event's.
        Entry(name: "hand-built continuation + cancellation ping-pong", id: "cancellable-continuation", kind: .peer) {
            _,
            seconds in
            let sides = [HandBuiltEvent(), HandBuiltEvent()]
            return asyncPingPong(seconds: seconds, signal: { sides[$0].signal() }) {
                try await sides[$0].cancellableWait()
            }
        },
        // What a user writes to await a DispatchSemaphore without blocking a cooperative thread: the blocking wait
        // on a Dispatch thread, behind a continuation.
        Entry(name: "DispatchSemaphore + continuation ping-pong", id: "dispatch-semaphore", kind: .peer) {
            _,
            seconds in
            let sides = [DispatchSemaphore(value: 0), DispatchSemaphore(value: 0)]
            return asyncPingPong(seconds: seconds, signal: { sides[$0].signal() }) { side in
                await withUnsafeContinuation { (continuation: UnsafeContinuation<Void, Never>) in
                    DispatchQueue.global().async {
                        sides[side].wait()
                        continuation.resume()
                    }
                }
            }
        },
    ]

    /// The completion-wait cases: one task awaits the end of work that a queue runs.
    public static let completionWaitCatalog: [Entry] = [
        Entry(name: "await WorkGroup.wait() after a queue task leaves", id: "group", kind: .ours) { _, seconds in
            let queue = ConcurrentQueue(label: "bench.group")
            return runTasks(tasks: 1, seconds: seconds) {
                let group = WorkGroup()
                queue.async(group: group) {}
                try? await group.wait()
            }
        },
        Entry(name: "await WorkItem.wait() for an item a queue runs", id: "item", kind: .ours) { _, seconds in
            let queue = ConcurrentQueue(label: "bench.item")
            return runTasks(tasks: 1, seconds: seconds) {
                let item = WorkItem {}
                queue.async(execute: item)
                try? await item.wait()
            }
        },
        Entry(name: "await Job.waitUntilFinished() for a job a queue runs", id: "job", kind: .ours) { _, seconds in
            let jobs = JobQueue(name: "bench.job")
            return runTasks(tasks: 1, seconds: seconds) {
                let job = Job { _ in }
                jobs.addJob(job)
                try? await job.waitUntilFinished()
            }
        },
        Entry(name: "hand-built continuation resumed by a queue task", id: "group-continuation", kind: .peer) {
            _,
            seconds in
            let queue = ConcurrentQueue(label: "bench.group")
            return runTasks(tasks: 1, seconds: seconds) {
                await withUnsafeContinuation { (continuation: UnsafeContinuation<Void, Never>) in
                    queue.async { continuation.resume() }
                }
            }
        },
        Entry(
            name: "hand-built continuation + cancellation resumed by a queue task",
            id: "cancellable-group-continuation",
            kind: .peer
        ) { _, seconds in
            let queue = ConcurrentQueue(label: "bench.group")
            return runTasks(tasks: 1, seconds: seconds) {
                let once = HandBuiltOnce()
                try? await once.wait { queue.async { once.resume(nil) } }
            }
        },
    ]

    /// A short blocking system call (what a file read that hits the page cache costs, roughly).
    @inline(never)
    static func blockingCall() {
        _ = getppid()
    }

    /// One timed run of `pairs` actor pairs: the first actor of each pair calls the second in a loop.
    static func pingPong<P: Pinger>(pairs: Int, seconds: Double, make: (Int) -> P) -> RunSample {
        let actors = (0..<pairs * 2).map(make)
        let stop = DoneFlag()
        let results = LockedValue<[WorkerResult]>([])
        let finished = Semaphore(value: 0)
        let start = monotonicNanoseconds()
        let cpuStart = processCPUNanoseconds()
        for pair in 0..<pairs {
            let (first, second) = (actors[pair * 2], actors[pair * 2 + 1])
            Task {
                let result = await first.rally(with: second, stop: stop)
                results.withLock { $0.append(result) }
                finished.signal()
            }
        }
        usleep(UInt32(seconds * 1_000_000))
        stop.flag.store(true, ordering: .releasing)
        for _ in 0..<pairs { finished.wait() }
        return sample(results.withLock { $0 }, start: start, cpuStart: cpuStart)
    }

    /// One timed run of `tasks` tasks, each repeating `operation`.
    static func runTasks(
        tasks: Int,
        seconds: Double,
        _ operation: @escaping @Sendable () async -> Void
    ) -> RunSample {
        let stop = DoneFlag()
        let results = LockedValue<[WorkerResult]>([])
        let finished = Semaphore(value: 0)
        let start = monotonicNanoseconds()
        let cpuStart = processCPUNanoseconds()
        for _ in 0..<tasks {
            Task {
                var result = WorkerResult()
                repeat {
                    for step in 0..<LatencySampler.interval {
                        let started = step == 0 ? monotonicNanoseconds() : 0
                        await operation()
                        if step == 0 { _ = result.latency.record(monotonicNanoseconds() &- started) }
                    }
                    result.operations &+= LatencySampler.interval
                } while !stop.flag.load(ordering: .acquiring)
                result.endNanoseconds = monotonicNanoseconds()
                results.withLock { [result] in $0.append(result) }
                finished.signal()
            }
        }
        usleep(UInt32(seconds * 1_000_000))
        stop.flag.store(true, ordering: .releasing)
        for _ in 0..<tasks { finished.wait() }
        return sample(results.withLock { $0 }, start: start, cpuStart: cpuStart)
    }

    /// Two tasks hand a turn back and forth: one operation is one round trip.
    static func asyncPingPong(
        seconds: Double,
        signal: @escaping @Sendable (Int) -> Void,
        wait: @escaping @Sendable (Int) async throws -> Void
    ) -> RunSample {
        let stop = DoneFlag()
        let responderDone = Semaphore(value: 0)
        Task {
            while true {
                try? await wait(1)
                signal(0)
                if stop.flag.load(ordering: .acquiring) { break }
            }
            responderDone.signal()
        }
        let sample = runTasks(tasks: 1, seconds: seconds) {
            signal(1)
            try? await wait(0)
        }
        stop.flag.store(true, ordering: .releasing)
        signal(1)
        responderDone.wait()
        return sample
    }

    static func sample(_ results: [WorkerResult], start: UInt64, cpuStart: UInt64) -> RunSample {
        let operations = results.reduce(0) { $0 + $1.operations }
        let end = results.map(\.endNanoseconds).max() ?? monotonicNanoseconds()
        let elapsed = Double(max(end &- start, 1)) / 1e9
        var latency = LatencySampler.makeHistogram()
        for result in results { latency.add(result.latency) }
        let mean = Double(operations) / Double(max(results.count, 1))
        let slowest = Double(results.map(\.operations).min() ?? 0)
        return RunSample(
            operationsPerSecond: Double(operations) / elapsed,
            cpuNanosecondsPerOperation: Double(processCPUNanoseconds() &- cpuStart) / Double(max(operations, 1)),
            fairness: mean > 0 ? slowest / mean : 0,
            badOperations: 0,
            operations: operations,
            latency: latency
        )
    }
}

/// One side of an actor ping-pong.
///
/// Both methods touch the actor's state: the compiler removes a hop to an executor when nothing after it needs the
/// isolation, so a `ping` that only computed, or a loop that touched no state of the caller, would measure plain
/// calls on one thread instead of round trips.
protocol Pinger: Actor {
    /// Answers a ping (counts it in the actor's state).
    func ping(_ value: Int) -> Int
    /// Counts a received answer in the actor's state.
    func answered()
}

extension Pinger {
    /// Calls `peer` until `stop` is set (at least one batch); returns the round trips and sampled latencies.
    func rally<Peer: Pinger>(with peer: Peer, stop: DoneFlag) async -> WorkerResult {
        var result = WorkerResult()
        var value = 0
        repeat {
            for step in 0..<LatencySampler.interval {
                let started = step == 0 ? monotonicNanoseconds() : 0
                value = await peer.ping(value)
                answered()  // back on this actor: one round trip
                if step == 0 { _ = result.latency.record(monotonicNanoseconds() &- started) }
            }
            result.operations &+= LatencySampler.interval
        } while !stop.flag.load(ordering: .acquiring)
        result.endNanoseconds = monotonicNanoseconds()
        return result
    }
}

/// A default actor (the runtime's own executor, on the cooperative pool).
actor DefaultPinger: Pinger {
    private var count = 0
    func ping(_ value: Int) -> Int {
        count &+= 1
        return value &+ count
    }
    func answered() { count &+= 1 }
}

/// An actor on a custom serial executor: a `SerialQueue`, a `DispatchQueue` adapter or a NIO event loop.
actor QueueExecutorPinger: Pinger {
    private let owner: any SerialExecutor
    private let executor: UnownedSerialExecutor

    init(queue: SerialQueue) {
        owner = queue
        executor = queue.asUnownedSerialExecutor()
    }

    init(dispatch: DispatchSerialExecutor) {
        owner = dispatch
        executor = dispatch.asUnownedSerialExecutor()
    }

    init(eventLoop: any EventLoop) {
        owner = eventLoop.executor
        executor = eventLoop.executor.asUnownedSerialExecutor()
    }

    nonisolated var unownedExecutor: UnownedSerialExecutor { executor }

    private var count = 0
    func ping(_ value: Int) -> Int {
        count &+= 1
        return value &+ count
    }
    func answered() { count &+= 1 }
}

/// The adapter users write over Dispatch on Linux (where `DispatchSerialQueue` is no executor): each job is one
/// `DispatchQueue.async` closure.
final class DispatchSerialExecutor: SerialExecutor {
    let queue: DispatchQueue
    init(_ queue: DispatchQueue) { self.queue = queue }
    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let executor = asUnownedSerialExecutor()
        queue.async { job.runSynchronously(on: executor) }
    }
}

/// An async one-slot event built by hand from a continuation, as users write it: `signal()` resumes the waiter or
/// banks the signal. `@unchecked Sendable`: both fields are guarded by `lock`.
final class HandBuiltEvent: @unchecked Sendable {
    private let lock = NIOLock()
    private var banked = 0
    private var waiter: UnsafeContinuation<Void, Never>?

    func signal() {
        lock.lock()
        if let waiter {
            self.waiter = nil
            lock.unlock()
            waiter.resume()
            return
        }
        if let node = cancellableWaiter, let continuation = node.continuation {
            cancellableWaiter = nil
            node.continuation = nil
            lock.unlock()
            continuation.resume()
            return
        }
        banked += 1
        lock.unlock()
    }

    func wait() async {
        await withUnsafeContinuation { (continuation: UnsafeContinuation<Void, Never>) in
            lock.lock()
            if banked > 0 {
                banked -= 1
                lock.unlock()
                continuation.resume()
                return
            }
            waiter = continuation
            lock.unlock()
        }
    }

    /// `wait()` that ends with `CancellationError` when its task is cancelled, as users write it: a node per wait
    /// (so that the handler knows whether its own wait is still the one linked) and a cancellation handler.
    func cancellableWait() async throws {
        let node = CancellableWaiter()
        try await withTaskCancellationHandler {
            try await withUnsafeThrowingContinuation { (continuation: UnsafeContinuation<Void, any Error>) in
                lock.lock()
                if node.cancelled {
                    lock.unlock()
                    continuation.resume(throwing: CancellationError())
                    return
                }
                if banked > 0 {
                    banked -= 1
                    lock.unlock()
                    continuation.resume()
                    return
                }
                node.continuation = continuation
                cancellableWaiter = node
                lock.unlock()
            }
        } onCancel: {
            lock.lock()
            node.cancelled = true
            let continuation = cancellableWaiter === node ? node.continuation : nil
            if continuation != nil { cancellableWaiter = nil }
            lock.unlock()
            continuation?.resume(throwing: CancellationError())
        }
    }

    /// The task waiting in `cancellableWait()`, if any (guarded by `lock`); `signal()` resumes it like `waiter`.
    private var cancellableWaiter: CancellableWaiter?

    /// One `cancellableWait()`. `@unchecked Sendable`: guarded by the event's lock.
    private final class CancellableWaiter: @unchecked Sendable {
        var continuation: UnsafeContinuation<Void, any Error>?
        var cancelled = false
    }
}

/// A one-shot completion built by hand from a continuation with a cancellation handler, as users write it to await
/// a callback: whichever of the callback and the task's cancellation comes first resumes the task. `@unchecked
/// Sendable`: guarded by `lock`.
final class HandBuiltOnce: @unchecked Sendable {
    private let lock = NIOLock()
    private var continuation: UnsafeContinuation<Void, any Error>?
    /// What the first `resume` brought, kept when it came before the continuation was installed.
    private var outcome: Result<Void, any Error>?

    /// Suspends until `resume` (called by the work `start` schedules) or the task's cancellation.
    func wait(_ start: () -> Void) async throws {
        try await withTaskCancellationHandler {
            try await withUnsafeThrowingContinuation { (continuation: UnsafeContinuation<Void, any Error>) in
                lock.lock()
                if let outcome {
                    lock.unlock()
                    continuation.resume(with: outcome)
                    return
                }
                self.continuation = continuation
                lock.unlock()
                start()
            }
        } onCancel: {
            resume(CancellationError())
        }
    }

    /// Resumes the waiter (with `error`, if given) unless it was resumed already.
    func resume(_ error: (any Error)?) {
        lock.lock()
        guard outcome == nil else {
            lock.unlock()
            return
        }
        let result: Result<Void, any Error> = error.map { .failure($0) } ?? .success(())
        outcome = result
        let continuation = self.continuation
        self.continuation = nil
        lock.unlock()
        continuation?.resume(with: result)
    }
}
