// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import Glibc
import NIOPosix
import Threading

/// A read of a value set up once, as the `once` and `threadlocal` families see it.
///
/// Conforming types are small classes; `Sendable` because every thread of a run reads through one instance.
public protocol BenchRead: AnyObject, Sendable {
    /// Display name.
    static var name: String { get }
    /// Command-line identifier.
    static var id: String { get }
    /// Ours, peer or reference.
    static var kind: StrategyKind { get }
    /// Creates the strategy (the one-time setup itself happens on the first read).
    init()
    /// One read; returns ``BenchReads/expected`` when correct.
    func read() -> Int
}

/// The `once` and `threadlocal` families: T threads, started together, each repeatedly read a value that was set
/// up once (by a `Once`, `pthread_once`, a `static let`) or once per thread (a `ThreadLocal`, `pthread_getspecific`,
/// NIO's `ThreadSpecificVariable`). One operation is one read; a read that does not return the value set up counts
/// as bad.
public enum BenchReads {
    /// What every read must return.
    public static let expected = 42

    /// A read strategy as the CLI sees it.
    public struct Entry: Sendable {
        /// Display name.
        public var name: String
        /// Command-line identifier.
        public var id: String
        /// Ours, peer or reference.
        public var kind: StrategyKind
        /// One timed run.
        public var run: @Sendable (_ threads: Int, _ seconds: Double) -> RunSample

        /// Wraps a read strategy; `run` is specialized for it.
        public init<R: BenchRead>(_ type: R.Type) {
            name = R.name
            id = R.id
            kind = R.kind
            run = { threads, seconds in
                let reader = R()
                return runTimed(threads: threads, seconds: seconds) { _, gate in worker(reader, gate: gate) }
            }
        }
    }

    /// The `once` family: `Once.run` after the first run, against `pthread_once` and a Swift `static let`.
    public static let onceCatalog: [Entry] = [
        Entry(OursOnce.self), Entry(PeerPthreadOnce.self), Entry(PeerStaticLet.self),
    ]

    /// The `threadlocal` family: a `ThreadLocal` read against `pthread_getspecific` and NIO's
    /// `ThreadSpecificVariable`.
    public static let threadLocalCatalog: [Entry] = [
        Entry(OursThreadLocal.self), Entry(PeerPthreadGetspecific.self), Entry(PeerNIOThreadSpecificVariable.self),
    ]

    @inline(__always)
    static func worker<R: BenchRead>(_ reader: R, gate: StartGate) -> WorkerResult {
        var result = WorkerResult()
        var operations = 0
        var bad = 0
        gate.arriveAndWait()
        let cpuStart = threadCPUNanoseconds()
        repeat {
            for step in 0..<LatencySampler.interval {
                let started = step == 0 ? monotonicNanoseconds() : 0
                if reader.read() != expected { bad &+= 1 }
                if step == 0 { _ = result.latency.record(monotonicNanoseconds() &- started) }
            }
            operations &+= LatencySampler.interval
        } while !gate.isStopped
        result.endNanoseconds = monotonicNanoseconds()
        result.cpuNanoseconds = threadCPUNanoseconds() &- cpuStart
        result.operations = operations
        result.badOperations = bad
        return result
    }
}

/// A value the optimizer cannot fold into a constant (so a `static let` really is initialized lazily).
@inline(never)
func benchReadsExpected() -> Int { getpid() > 0 ? BenchReads.expected : 0 }

// MARK: - once

/// Ours: `Once.run` guarding a value. `@unchecked Sendable`: `value` is written once inside the `Once` body, which
/// orders the write before every read that returns from `run`.
final class OursOnce: BenchRead, @unchecked Sendable {
    static let name = "Once", id = "once", kind = StrategyKind.ours
    private let once = Once()
    private var value = 0
    @inline(__always) func read() -> Int {
        once.run { value = benchReadsExpected() }
        return value
    }
}

/// Written once under `pthread_once` (a C callback cannot capture), read after every `pthread_once` returns.
nonisolated(unsafe) private var pthreadOnceValue = 0

/// Peer: `pthread_once` guarding a value. `@unchecked Sendable`: the once control is only used through
/// `pthread_once`, which synchronizes itself.
final class PeerPthreadOnce: BenchRead, @unchecked Sendable {
    static let name = "pthread_once", id = "pthread-once", kind = StrategyKind.peer
    private let control: UnsafeMutablePointer<pthread_once_t>
    init() {
        control = .allocate(capacity: 1)
        control.initialize(to: pthread_once_t())
        pthreadOnceValue = 0
    }
    deinit { control.deallocate() }
    @inline(__always) func read() -> Int {
        pthread_once(control) { pthreadOnceValue = benchReadsExpected() }
        return pthreadOnceValue
    }
}

/// The `static let` of the `once` family's peer.
enum StaticLetHolder {
    static let value = benchReadsExpected()
}

/// Peer: a Swift `static let` (lazily initialized through `swift_once`). `Sendable`: no state.
final class PeerStaticLet: BenchRead, Sendable {
    static let name = "static let", id = "static-let", kind = StrategyKind.peer
    @inline(__always) func read() -> Int { StaticLetHolder.value }
}

// MARK: - threadlocal

/// Ours: `ThreadLocal<Int>` read with `value`. `Sendable` because `ThreadLocal` is.
final class OursThreadLocal: BenchRead, Sendable {
    static let name = "ThreadLocal", id = "threadlocal", kind = StrategyKind.ours
    private let local: ThreadLocal<Int>
    init() {
        do {
            local = try ThreadLocal { benchReadsExpected() }
        } catch {
            fatalError("ThreadLocal: \(error)")
        }
    }
    @inline(__always) func read() -> Int { local.value }
}

/// Peer: a raw `pthread_key_t` holding the value in the pointer's bits (the floor: no box, no retain).
/// `@unchecked Sendable`: each thread only reaches its own slot.
final class PeerPthreadGetspecific: BenchRead, @unchecked Sendable {
    static let name = "pthread_getspecific", id = "pthread-getspecific", kind = StrategyKind.peer
    private let key: pthread_key_t
    init() {
        var key = pthread_key_t()
        precondition(pthread_key_create(&key, nil) == 0, "pthread_key_create failed")
        self.key = key
    }
    deinit { pthread_key_delete(key) }
    @inline(__always) func read() -> Int {
        if let bits = pthread_getspecific(key) { return Int(bitPattern: bits) }
        let value = benchReadsExpected()
        pthread_setspecific(key, UnsafeRawPointer(bitPattern: value))
        return value
    }
}

/// The box NIO's `ThreadSpecificVariable` needs (it holds objects).
final class BenchReadsBox: Sendable {
    let value: Int
    init(_ value: Int) { self.value = value }
}

/// Peer: swift-nio's `ThreadSpecificVariable<Box>`. `@unchecked Sendable`: each thread only reaches its own value.
final class PeerNIOThreadSpecificVariable: BenchRead, @unchecked Sendable {
    static let name = "NIO ThreadSpecificVariable", id = "nio-tsv", kind = StrategyKind.peer
    private let variable = ThreadSpecificVariable<BenchReadsBox>()
    @inline(__always) func read() -> Int {
        if let box = variable.currentValue { return box.value }
        let box = BenchReadsBox(benchReadsExpected())
        variable.currentValue = box
        return box.value
    }
}
