// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import Dispatch
import Threading

/// A serial queue as the `queues` family sees it.
///
/// `Sendable` because a queue is shared by its producers.
public protocol BenchSerialQueue: AnyObject, Sendable {
    /// Display name.
    static var name: String { get }
    /// Command-line identifier.
    static var id: String { get }
    /// Ours or peer.
    static var kind: StrategyKind { get }
    /// Creates a serial queue.
    init()
    /// Runs `work` on the queue and waits for it.
    func sync(_ work: () -> Void)
    /// Submits `work` to the queue.
    func async(_ work: @escaping @Sendable () -> Void)
}

/// The `queues` family: the round-trip cost of `sync` from T threads on one serial queue, and the throughput of
/// `async` from T producers (drained before the clock stops). Each item increments a counter owned by the queue;
/// the counter must equal the operations at the end.
public enum Queues {
    /// A queue as the CLI sees it, with one run per study.
    public struct Entry: Sendable {
        /// Display name.
        public var name: String
        /// Command-line identifier.
        public var id: String
        /// Ours or peer.
        public var kind: StrategyKind
        /// One timed run of `sync` round trips.
        public var runSync: @Sendable (_ threads: Int, _ seconds: Double) -> RunSample
        /// One timed run of `async` submissions, drained.
        public var runAsync: @Sendable (_ threads: Int, _ seconds: Double) -> RunSample

        /// Wraps a queue type.
        public init<Q: BenchSerialQueue>(_ type: Q.Type) {
            name = Q.name
            id = Q.id
            kind = Q.kind
            runSync = { threads, seconds in runWorkload(Q.self, async: false, threads: threads, seconds: seconds) }
            runAsync = { threads, seconds in runWorkload(Q.self, async: true, threads: threads, seconds: seconds) }
        }
    }

    /// Every queue: ours, then Dispatch's.
    public static let catalog: [Entry] = [Entry(OursSerialQueue.self), Entry(DispatchSerialQueue.self)]

    /// One timed run: `threads` producers each submit items (sync or async) to one queue until the stop flag.
    public static func runWorkload<Q: BenchSerialQueue>(
        _ type: Q.Type,
        async: Bool,
        threads: Int,
        seconds: Double
    ) -> RunSample {
        let queue = Q()
        let counter = CounterCell()
        let body: @Sendable (Int, StartGate) -> WorkerResult = { _, gate in
            var result = WorkerResult()
            var operations = 0
            gate.arriveAndWait()
            let cpuStart = threadCPUNanoseconds()
            repeat {
                for step in 0..<LatencySampler.interval {
                    let started = step == 0 ? monotonicNanoseconds() : 0
                    if async {
                        queue.async { counter.increment() }
                    } else {
                        queue.sync { counter.increment() }
                    }
                    if step == 0 { _ = result.latency.record(monotonicNanoseconds() &- started) }
                }
                operations &+= LatencySampler.interval
            } while !gate.isStopped
            result.endNanoseconds = monotonicNanoseconds()
            result.cpuNanoseconds = threadCPUNanoseconds() &- cpuStart
            result.operations = operations
            return result
        }
        var sample = runTimed(threads: threads, seconds: seconds, afterJoin: { queue.sync {} }, body)
        var final = 0
        queue.sync { final = counter.value }
        sample.badOperations += abs(final - sample.operations)
        counter.destroy()
        return sample
    }
}

/// Ours: `SerialQueue`. `Sendable` because `SerialQueue` is.
final class OursSerialQueue: BenchSerialQueue, Sendable {
    static let name = "SerialQueue", id = "serialqueue", kind = StrategyKind.ours
    private let queue = SerialQueue(label: "bench.queues.ours")
    @inline(__always) func sync(_ work: () -> Void) { queue.sync(execute: work) }
    @inline(__always) func async(_ work: @escaping @Sendable () -> Void) { queue.async(execute: work) }
}

/// Peer: a serial `DispatchQueue`. `Sendable` because `DispatchQueue` is.
final class DispatchSerialQueue: BenchSerialQueue, Sendable {
    static let name = "DispatchQueue (serial)", id = "dispatch", kind = StrategyKind.peer
    private let queue = DispatchQueue(label: "bench.queues.dispatch")
    @inline(__always) func sync(_ work: () -> Void) { queue.sync(execute: work) }
    @inline(__always) func async(_ work: @escaping @Sendable () -> Void) { queue.async(execute: work) }
}
