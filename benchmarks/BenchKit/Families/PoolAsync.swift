// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import Dispatch
import Synchronization
import Threading

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A queue of a user-created pool as the `pool-async` family sees it.
///
/// `Sendable` because a queue is shared by its producers.
public protocol BenchPoolQueue: AnyObject, Sendable {
    /// Display name.
    static var name: String { get }
    /// Command-line identifier.
    static var id: String { get }
    /// Ours or peer.
    static var kind: StrategyKind { get }
    /// Creates the queue (and, for ours, the pool it runs on).
    init()
    /// Submits `work`.
    func async(_ work: @escaping @Sendable () -> Void)
    /// Returns once every task submitted before the call has run.
    func drain()
    /// Releases what `init` made (ours: shuts the pool down).
    func close()
}

/// The `pool-async` family: throughput of empty `async` tasks from T producers on a queue of a pool the
/// user created (`WorkerPool(label:)`, sized by default from the effective CPUs), against Dispatch's queues. Each
/// task only increments an atomic counter, which must equal the submissions after the drain.
public enum PoolAsync {
    /// A queue as the CLI sees it.
    public struct Entry: Sendable {
        /// Display name.
        public var name: String
        /// Command-line identifier.
        public var id: String
        /// Ours or peer.
        public var kind: StrategyKind
        /// One timed run of `async` submissions from `threads` producers, drained before the clock stops.
        public var run: @Sendable (_ threads: Int, _ seconds: Double) -> RunSample

        /// Wraps a queue type.
        public init<Q: BenchPoolQueue>(_ type: Q.Type) {
            name = Q.name
            id = Q.id
            kind = Q.kind
            run = { threads, seconds in runWorkload(Q.self, threads: threads, seconds: seconds) }
        }
    }

    /// Ours (a `ConcurrentQueue` and a `SerialQueue` on a user-created `WorkerPool`), then Dispatch's.
    public static let catalog: [Entry] = [
        Entry(PoolConcurrentQueue.self), Entry(PoolSerialQueue.self), Entry(DispatchConcurrentPoolQueue.self),
        Entry(DispatchSerialPoolQueue.self),
    ]

    /// Each of ours with the Dispatch queue of the same shape, for the summary's ratios.
    public static let pairs: [(ours: String, peer: String)] = [
        ("pool-concurrent", "dispatch-concurrent"), ("pool-serial", "dispatch-serial"),
    ]

    /// One timed run: `threads` producers each submit empty tasks to one queue until the stop flag; the drain
    /// counts in the elapsed time.
    public static func runWorkload<Q: BenchPoolQueue>(_ type: Q.Type, threads: Int, seconds: Double) -> RunSample {
        let queue = Q()
        let counter = AtomicCounter()
        let body: @Sendable (Int, StartGate) -> WorkerResult = { _, gate in
            var result = WorkerResult()
            var operations = 0
            gate.arriveAndWait()
            let cpuStart = threadCPUNanoseconds()
            repeat {
                for step in 0..<LatencySampler.interval {
                    let started = step == 0 ? monotonicNanoseconds() : 0
                    queue.async { counter.increment() }
                    if step == 0 { _ = result.latency.record(monotonicNanoseconds() &- started) }
                }
                operations &+= LatencySampler.interval
            } while !gate.isStopped
            result.endNanoseconds = monotonicNanoseconds()
            result.cpuNanoseconds = threadCPUNanoseconds() &- cpuStart
            result.operations = operations
            return result
        }
        var sample = runTimed(threads: threads, seconds: seconds, afterJoin: { queue.drain() }, body)
        sample.badOperations += abs(counter.value - sample.operations)
        queue.close()
        return sample
    }
}

extension PoolAsync {
    /// `async` from `threads` producers for `seconds` onto a `ConcurrentQueue` (`concurrent`) or a `SerialQueue` of
    /// a pool of its own, drained, with the pool's ``WorkerPoolStatistics`` read around it, as one line:
    /// `COUNTERS pool-async: <queue> T=<n> asyncs=<n> units_per_async=<x> wakeups_per_async=<x>
    /// pool_locks_per_async=<x>` (pool units submitted, parked workers woken, and the pool lock's acquisitions, per
    /// `async`). Counted in every build: these are the pool's own statistics. `poolThreads`: the pool's size
    /// (default: from the CPUs).
    public static func countersLine(concurrent: Bool, threads: Int, seconds: Double, poolThreads: Int? = nil) -> String
    {
        let pool = WorkerPool(label: "bench.async.counters", threads: poolThreads)
        let serial = concurrent ? nil : SerialQueue(label: "bench.async.counters.serial", pool: pool)
        let parallel = concurrent ? ConcurrentQueue(label: "bench.async.counters.concurrent", pool: pool) : nil
        let counter = AtomicCounter()
        let before = pool.statistics
        let sample = runTimed(threads: threads, seconds: seconds) { _, gate in
            var result = WorkerResult()
            var operations = 0
            gate.arriveAndWait()
            repeat {
                for _ in 0..<LatencySampler.interval {
                    if let parallel {
                        parallel.async { counter.increment() }
                    } else {
                        serial!.async { counter.increment() }
                    }
                }
                operations &+= LatencySampler.interval
            } while !gate.isStopped
            result.endNanoseconds = monotonicNanoseconds()
            result.operations = operations
            return result
        }
        if let parallel { parallel.sync(flags: .barrier) {} } else { serial!.sync {} }
        let after = pool.statistics
        pool.shutdown()
        let asyncs = Double(max(sample.operations, 1))
        func per(_ delta: Int) -> String { String(format: "%.3f", Double(delta) / asyncs) }
        let name = concurrent ? "ConcurrentQueue(pool:)" : "SerialQueue(pool:)"
        return "COUNTERS pool-async: \(name) T=\(threads) asyncs=\(sample.operations)"
            + " units_per_async=\(per(after.submitted - before.submitted))"
            + " wakeups_per_async=\(per(after.wakeUps - before.wakeUps))"
            + " pool_locks_per_async=\(per(after.lockAcquisitions - before.lockAcquisitions))"
            + (counter.value == sample.operations ? "" : " INVALID (ran \(counter.value) of \(sample.operations))")
    }
}

/// A counter the tasks increment. `Sendable` because it is an `Atomic`.
final class AtomicCounter: Sendable {
    private let count = Atomic<Int>(0)
    @inline(__always) func increment() { count.add(1, ordering: .relaxed) }
    var value: Int { count.load(ordering: .acquiring) }
}

/// Turns the histograms of `pool` (default: the shared pool) on, to measure their cost: run times when
/// `BENCH_RECORD_RUN_TIMES=1`, schedule delays when `BENCH_RECORD_SCHEDULE_DELAYS=1`.
public func benchApplyHistograms(_ pool: WorkerPool = .shared) {
    func isSet(_ name: String) -> Bool { getenv(name).map { String(cString: $0) } == "1" }
    if isSet("BENCH_RECORD_RUN_TIMES") { pool.recordsRunTimes = true }
    if isSet("BENCH_RECORD_SCHEDULE_DELAYS") { pool.recordsScheduleDelays = true }
}

/// Ours, what a user wanting task throughput writes: a `ConcurrentQueue` on a `WorkerPool` of their own
/// (default size: the effective CPUs), drained with a barrier `sync`. `Sendable` because both are.
final class PoolConcurrentQueue: BenchPoolQueue, Sendable {
    static let name = "ConcurrentQueue(pool:)", id = "pool-concurrent", kind = StrategyKind.ours
    private let pool = WorkerPool(label: "bench.async")
    private let queue: ConcurrentQueue
    init() {
        benchApplyHistograms(pool)
        queue = ConcurrentQueue(label: "bench.async.concurrent", pool: pool)
    }
    @inline(__always) func async(_ work: @escaping @Sendable () -> Void) { queue.async(execute: work) }
    func drain() { queue.sync(flags: .barrier) {} }
    func close() { pool.shutdown() }
}

/// Ours, in order: a `SerialQueue` on a `WorkerPool` of the user's own. `Sendable` because both are.
final class PoolSerialQueue: BenchPoolQueue, Sendable {
    static let name = "SerialQueue(pool:)", id = "pool-serial", kind = StrategyKind.ours
    private let pool = WorkerPool(label: "bench.async")
    private let queue: SerialQueue
    init() {
        benchApplyHistograms(pool)
        queue = SerialQueue(label: "bench.async.serial", pool: pool)
    }
    @inline(__always) func async(_ work: @escaping @Sendable () -> Void) { queue.async(execute: work) }
    func drain() { queue.sync {} }
    func close() { pool.shutdown() }
}

/// Peer: a concurrent `DispatchQueue` (Dispatch has no pools a user creates: its queues share the global pool),
/// drained with a barrier `sync`. `Sendable` because `DispatchQueue` is.
final class DispatchConcurrentPoolQueue: BenchPoolQueue, Sendable {
    static let name = "DispatchQueue (concurrent)", id = "dispatch-concurrent", kind = StrategyKind.peer
    private let queue = DispatchQueue(label: "bench.async.dispatch.concurrent", attributes: .concurrent)
    init() {}
    @inline(__always) func async(_ work: @escaping @Sendable () -> Void) { queue.async(execute: work) }
    func drain() { queue.sync(flags: .barrier) {} }
    func close() {}
}

/// Peer: a serial `DispatchQueue`. `Sendable` because `DispatchQueue` is.
final class DispatchSerialPoolQueue: BenchPoolQueue, Sendable {
    static let name = "DispatchQueue (serial)", id = "dispatch-serial", kind = StrategyKind.peer
    private let queue = DispatchQueue(label: "bench.async.dispatch.serial")
    init() {}
    @inline(__always) func async(_ work: @escaping @Sendable () -> Void) { queue.async(execute: work) }
    func drain() { queue.sync {} }
    func close() {}
}
