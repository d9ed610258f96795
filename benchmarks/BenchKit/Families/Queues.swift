// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import Dispatch
import Foundation
import Glibc
import Synchronization
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

    /// The group type the blocked-queues study waits on (the same library's group as the queue).
    associatedtype Latch: BenchLatch
}

/// A count-down latch built on a library's group: `count` arrivals release every waiter.
///
/// `Sendable` because it is shared by the tasks that arrive and wait.
public protocol BenchLatch: AnyObject, Sendable {
    /// Creates a latch that opens after `count` arrivals.
    init(count: Int)
    /// Counts one arrival.
    func arrive()
    /// Waits until every arrival happened, or `seconds` passed; true when the latch opened.
    func wait(seconds: Double) -> Bool
}

/// The `queues` family: the round-trip cost of `sync` from T threads on one serial queue, and the throughput of
/// `async` from T producers (drained before the clock stops). Each item increments a counter owned by the queue;
/// the counter must equal the operations at the end. Also the hop latency of a ping-pong between two serial queues
/// (``pingPong(_:pairs:seconds:)``) and the thread census under blocked serial queues
/// (``blockedQueues(_:queues:deadlineSeconds:)``).
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
        /// One ping-pong run: `pairs` chains each hopping A.async -> B.async -> A.async ... for `seconds`.
        public var runPingPong: @Sendable (_ pairs: Int, _ seconds: Double) -> RunSample
        /// The blocked-queues census in this process (the bench runs it in a child so thread counts don't mix).
        public var census: @Sendable (_ queues: Int, _ deadlineSeconds: Double) -> ThreadCensus

        /// Wraps a queue type.
        public init<Q: BenchSerialQueue>(_ type: Q.Type) {
            name = Q.name
            id = Q.id
            kind = Q.kind
            runSync = { threads, seconds in runWorkload(Q.self, async: false, threads: threads, seconds: seconds) }
            runAsync = { threads, seconds in runWorkload(Q.self, async: true, threads: threads, seconds: seconds) }
            runPingPong = { pairs, seconds in pingPong(Q.self, pairs: pairs, seconds: seconds) }
            census = { queues, deadline in blockedQueues(Q.self, queues: queues, deadlineSeconds: deadline) }
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

extension Queues {
    /// One ping-pong run: `pairs` chains, each between its own two serial queues A and B: a hop on A submits the
    /// next hop to B with `async`, which submits the next to A, ... until the stop flag. One operation is one hop;
    /// one hop in every 65 is timed (alternately A -> B and B -> A) from the previous hop's start to its own (ns per hop).
    /// Each hop checks that the hops alternate A, B, A, ...; a hop out of turn is a bad operation. CPU per hop is
    /// the process's CPU time over the run (the hops run on the queues' threads, not the harness's).
    public static func pingPong<Q: BenchSerialQueue>(_ type: Q.Type, pairs: Int, seconds: Double) -> RunSample {
        let body: @Sendable (Int, StartGate) -> WorkerResult = { _, gate in
            let chain = PingPongChain<Q>(gate: gate)
            gate.arriveAndWait()
            let cpuStart = processCPUNanoseconds()
            chain.start()
            while !chain.isDone {
                sleepNanoseconds(200_000)
            }
            var result = WorkerResult()
            // Every chain's worker measures the whole process: share it out so the sum is the process's CPU.
            result.cpuNanoseconds = (processCPUNanoseconds() &- cpuStart) / UInt64(max(pairs, 1))
            chain.collect(into: &result)
            return result
        }
        return runTimed(threads: pairs, seconds: seconds, body)
    }

    /// The blocked-queues census: `queues` serial queues each get one task that arrives at a shared latch and
    /// waits on it until all `queues` tasks have arrived or `deadlineSeconds` (from the first submission) passed.
    /// A sampler thread counts `/proc/self/task` every millisecond meanwhile. Run it alone in its process: the
    /// thread counts are the whole process's.
    public static func blockedQueues<Q: BenchSerialQueue>(
        _ type: Q.Type,
        queues count: Int,
        deadlineSeconds: Double
    ) -> ThreadCensus {
        let queues = (0..<count).map { _ in Q() }
        let latch = Q.Latch(count: count)
        let state = CensusState()
        let sampler = spawnThread {
            while !state.samplerStop.load(ordering: .acquiring) {
                state.sample()
                sleepNanoseconds(1_000_000)
            }
        }
        let ours = Q.kind == .ours
        if ours { WorkerPoolStatistics.resetPeak() }
        let baseline = processThreadCount()
        let start = monotonicNanoseconds()
        let deadline = start &+ UInt64(max(deadlineSeconds, 0) * 1e9)
        for queue in queues {
            queue.async {
                state.arrived.add(1, ordering: .acquiringAndReleasing)
                latch.arrive()
                state.sample()
                let now = monotonicNanoseconds()
                _ = latch.wait(seconds: now < deadline ? Double(deadline - now) / 1e9 : 0)
                // The first task released records how many had arrived by then: the most blocked at once.
                _ = state.atOnce.compareExchange(
                    expected: 0,
                    desired: state.arrived.load(ordering: .acquiring),
                    ordering: .acquiringAndReleasing
                )
                state.completed.add(1, ordering: .releasing)
            }
        }
        // Every task must finish: a runtime that never ran some of them shows fewer than `count` completed.
        let giveUp = deadline &+ 10_000_000_000
        while state.completed.load(ordering: .acquiring) < count && monotonicNanoseconds() < giveUp {
            sleepNanoseconds(1_000_000)
        }
        let end = monotonicNanoseconds()
        state.samplerStop.store(true, ordering: .releasing)
        joinThread(sampler)
        let statistics = ours ? WorkerPoolStatistics.current : nil
        return ThreadCensus(
            queues: count,
            deadlineSeconds: deadlineSeconds,
            blockedAtOnce: state.atOnce.load(ordering: .acquiring),
            completed: state.completed.load(ordering: .acquiring),
            baselineThreads: baseline,
            // Threads that exit while the census runs (idle workers of other runtimes) can make every sample lower
            // than the count at the start; the peak includes that count.
            peakThreads: max(baseline, state.peak.load(ordering: .acquiring)),
            poolPeakThreads: statistics?.peakThreads,
            threadCap: statistics?.maxThreads,
            seconds: Double(end - start) / 1e9
        )
    }
}

/// One ping-pong chain between two serial queues.
///
/// `@unchecked Sendable`: the hop state (`hops`, `onA`, `onB`, `bad`, `stamp`, `latency`, `end`) is touched only by
/// the chain's hops, which run one at a time, each submitted by the previous one (the queue's `async` orders the
/// previous hop's writes before the next hop); the worker reads it only after `done` is set with release ordering.
final class PingPongChain<Q: BenchSerialQueue>: @unchecked Sendable {
    private let a = Q()
    private let b = Q()
    private let gate: StartGate
    private let done = Atomic<Bool>(false)
    private var hops = 0
    private var onA = 0
    private var onB = 0
    private var bad = 0
    private var stamp: UInt64 = 0
    private var latency = LatencySampler.makeHistogram()
    private var end: UInt64 = 0

    init(gate: StartGate) { self.gate = gate }

    /// Whether the chain stopped after the gate's stop flag.
    var isDone: Bool { done.load(ordering: .acquiring) }

    /// Submits the first hop to A.
    func start() { a.async { self.hopOnA() } }

    /// Copies the chain's counts into `result` (after ``isDone``).
    func collect(into result: inout WorkerResult) {
        result.operations = hops
        result.badOperations = bad
        result.endNanoseconds = end
        result.latency = latency
    }

    private func hopOnA() {
        if onA != onB { bad += 1 }
        onA += 1
        if step() { b.async { self.hopOnB() } }
    }

    private func hopOnB() {
        if onB + 1 != onA { bad += 1 }
        onB += 1
        if step() { a.async { self.hopOnA() } }
    }

    /// One hop in this many is timed; odd, so the timed hop alternates between A -> B and B -> A.
    private static var sampleInterval: Int { LatencySampler.interval + 1 }

    /// Counts a hop, times one in every ``sampleInterval``, and says whether to go on.
    @inline(__always)
    private func step() -> Bool {
        hops += 1
        let phase = hops % Self.sampleInterval
        if phase == Self.sampleInterval - 1 {
            stamp = monotonicNanoseconds()
        } else if phase == 0 && stamp != 0 {
            _ = latency.record(monotonicNanoseconds() &- stamp)
        }
        if gate.isStopped {
            end = monotonicNanoseconds()
            done.store(true, ordering: .releasing)
            return false
        }
        return true
    }
}

/// The shared counters of one blocked-queues census. `Sendable` because every field is an `Atomic`.
final class CensusState: Sendable {
    let arrived = Atomic<Int>(0)
    let atOnce = Atomic<Int>(0)
    let completed = Atomic<Int>(0)
    let peak = Atomic<Int>(0)
    let samplerStop = Atomic<Bool>(false)

    /// Counts the process's threads and raises the peak.
    func sample() {
        let now = processThreadCount()
        var seen = peak.load(ordering: .relaxed)
        while now > seen {
            let (exchanged, original) = peak.compareExchange(expected: seen, desired: now, ordering: .relaxed)
            if exchanged { break }
            seen = original
        }
    }
}

/// The process's OS threads now: the entries of `/proc/self/task` (0 where it cannot be read).
public func processThreadCount() -> Int {
    guard let directory = opendir("/proc/self/task") else { return 0 }
    defer { closedir(directory) }
    var count = 0
    while let entry = readdir(directory) {
        let isDot = withUnsafeBytes(of: entry.pointee.d_name) { name in name.first == UInt8(ascii: ".") }
        if !isDot { count += 1 }
    }
    return count
}

/// CPU time of the whole process in nanoseconds.
func processCPUNanoseconds() -> UInt64 {
    var time = timespec()
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &time)
    return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
}

/// Ours: a latch on `WorkGroup` (a wait the pool sees: a blocked worker leaves the running count).
/// `Sendable` because `WorkGroup` is.
final class WorkGroupLatch: BenchLatch, Sendable {
    private let group = WorkGroup()
    init(count: Int) { for _ in 0..<count { group.enter() } }
    func arrive() { group.leave() }
    func wait(seconds: Double) -> Bool { group.wait(timeout: .nanoseconds(Int64(seconds * 1e9))) }
}

/// Peer: a latch on `DispatchGroup`. `Sendable` because `DispatchGroup` is.
final class DispatchGroupLatch: BenchLatch, Sendable {
    private let group = DispatchGroup()
    init(count: Int) { for _ in 0..<count { group.enter() } }
    func arrive() { group.leave() }
    func wait(seconds: Double) -> Bool {
        group.wait(timeout: .now() + .nanoseconds(Int(seconds * 1e9))) == .success
    }
}

/// Ours: `SerialQueue`. `Sendable` because `SerialQueue` is.
final class OursSerialQueue: BenchSerialQueue, Sendable {
    typealias Latch = WorkGroupLatch
    static let name = "SerialQueue", id = "serialqueue", kind = StrategyKind.ours
    private let queue = SerialQueue(label: "bench.queues.ours")
    @inline(__always) func sync(_ work: () -> Void) { queue.sync(execute: work) }
    @inline(__always) func async(_ work: @escaping @Sendable () -> Void) { queue.async(execute: work) }
}

/// Peer: a serial `DispatchQueue`. `Sendable` because `DispatchQueue` is.
final class DispatchSerialQueue: BenchSerialQueue, Sendable {
    typealias Latch = DispatchGroupLatch
    static let name = "DispatchQueue (serial)", id = "dispatch", kind = StrategyKind.peer
    private let queue = DispatchQueue(label: "bench.queues.dispatch")
    @inline(__always) func sync(_ work: () -> Void) { queue.sync(execute: work) }
    @inline(__always) func async(_ work: @escaping @Sendable () -> Void) { queue.async(execute: work) }
}
