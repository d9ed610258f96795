// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import CBenchSupport
import Glibc
import NIOConcurrencyHelpers
import Synchronization
import Threading

/// A shared value read by many threads, for the `rcu` family's read-side study.
///
/// `Sendable` because every reader shares it.
public protocol SharedReadable: AnyObject, Sendable {
    /// Display name.
    static var name: String { get }
    /// Command-line identifier.
    static var id: String { get }
    /// Ours, peer or reference.
    static var kind: StrategyKind { get }
    /// Creates the value holding `initial`.
    init(_ initial: Int)
    /// Reads the value.
    func read() -> Int
}

/// The `rcu` family: read-side cost as readers are added (every thread only reads one shared value; the value is
/// checked), and grace-period latency (one thread waits for grace periods in a loop while the others read), ours
/// (`RCU.synchronize()`) against raw liburcu (`synchronize_rcu`).
public enum RCUFamily {
    /// A strategy of either study as the CLI sees it.
    public struct Entry: Sendable {
        /// Display name.
        public var name: String
        /// Command-line identifier.
        public var id: String
        /// Ours, peer or reference.
        public var kind: StrategyKind
        /// One timed run of `threads` readers.
        public var run: @Sendable (_ threads: Int, _ seconds: Double) -> RunSample

        /// Wraps a readable type.
        public init<S: SharedReadable>(_ type: S.Type) {
            name = S.name
            id = S.id
            kind = S.kind
            run = { threads, seconds in readers(S.self, threads: threads, seconds: seconds) }
        }

        /// A grace-period strategy: `synchronize` waits for one grace period.
        public init(name: String, id: String, kind: StrategyKind, synchronize: @escaping @Sendable () -> Void) {
            self.name = name
            self.id = id
            self.kind = kind
            run = { threads, seconds in gracePeriods(threads: threads, seconds: seconds, synchronize: synchronize) }
        }
    }

    /// Every read-side strategy.
    public static let catalog: [Entry] = [
        Entry(RCUValueReader.self), Entry(MutexReader.self), Entry(NIOBoxReader.self), Entry(RWLockReader.self),
        Entry(AtomicReader.self),
    ]

    /// Every grace-period strategy: ours, and liburcu's own `synchronize_rcu` called straight from C (no Swift
    /// wrapper, no read-section check), the floor ours is measured against. Nothing a peer offers waits for readers
    /// this way, so the study has no peer.
    public static let graceCatalog: [Entry] = [
        Entry(name: "RCU.synchronize", id: "synchronize", kind: .ours) { RCU.synchronize() },
        Entry(name: "synchronize_rcu (raw liburcu)", id: "urcu-synchronize", kind: .reference) {
            cthr_bench_urcu_synchronize()
        },
    ]

    static let magic = 0x5EED_0004

    /// `threads` readers of one shared value.
    public static func readers<S: SharedReadable>(_ type: S.Type, threads: Int, seconds: Double) -> RunSample {
        let shared = S(magic)
        return runTimed(threads: threads, seconds: seconds) { _, gate in
            var result = WorkerResult()
            var operations = 0
            var bad = 0
            gate.arriveAndWait()
            let cpuStart = threadCPUNanoseconds()
            repeat {
                for step in 0..<LatencySampler.interval {
                    let started = step == 0 ? monotonicNanoseconds() : 0
                    if shared.read() != magic { bad &+= 1 }
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

    /// Grace periods: thread 0 calls `synchronize` in a loop (one operation each, latency = grace period); the
    /// other `threads - 1` threads read an `RCUValue` continuously (their reads are not counted, only checked).
    ///
    /// - Parameters:
    ///   - threads: Worker threads, the synchronizer included.
    ///   - seconds: Measured seconds.
    ///   - synchronize: Waits for one grace period (an entry of ``graceCatalog``).
    /// - Returns: The run's sample.
    public static func gracePeriods(
        threads: Int,
        seconds: Double,
        synchronize: @escaping @Sendable () -> Void
    ) -> RunSample {
        let value = RCUValue(magic)
        var sample = runTimed(threads: threads, seconds: seconds) { index, gate in
            var result = WorkerResult()
            gate.arriveAndWait()
            let cpuStart = threadCPUNanoseconds()
            if index == 0 {
                repeat {  // at least one grace period, however short the run
                    let started = monotonicNanoseconds()
                    synchronize()
                    _ = result.latency.record(monotonicNanoseconds() &- started)
                    result.operations += 1
                } while !gate.isStopped
            } else {
                repeat {
                    for _ in 0..<LatencySampler.interval where value.read({ $0 }) != magic {
                        result.badOperations += 1
                    }
                } while !gate.isStopped
            }
            result.endNanoseconds = monotonicNanoseconds()
            result.cpuNanoseconds = threadCPUNanoseconds() &- cpuStart
            return result
        }
        sample.fairness = 1  // only thread 0 counts operations
        return sample
    }
}

/// Ours: `RCUValue<Int>.read`. `Sendable` because `RCUValue` is.
final class RCUValueReader: SharedReadable, Sendable {
    static let name = "RCUValue.read", id = "rcuvalue", kind = StrategyKind.ours
    private let value: RCUValue<Int>
    init(_ initial: Int) { value = RCUValue(initial) }
    @inline(__always) func read() -> Int { value.read { $0 } }
}

/// Peer: `Synchronization.Mutex<Int>`. `Sendable` because `Mutex` is.
final class MutexReader: SharedReadable, Sendable {
    static let name = "Synchronization.Mutex", id = "sync-mutex", kind = StrategyKind.peer
    private let value: Mutex<Int>
    init(_ initial: Int) { value = Mutex(initial) }
    @inline(__always) func read() -> Int { value.withLock { $0 } }
}

/// Peer: `NIOLockedValueBox<Int>`. `Sendable` because the box is.
final class NIOBoxReader: SharedReadable, Sendable {
    static let name = "NIOLockedValueBox", id = "nio-locked-value-box", kind = StrategyKind.peer
    private let value: NIOLockedValueBox<Int>
    init(_ initial: Int) { value = NIOLockedValueBox(initial) }
    @inline(__always) func read() -> Int { value.withLockedValue { $0 } }
}

/// Peer: a raw `pthread_rwlock_t` read lock. `@unchecked Sendable`: `value` is only read, under the read lock.
final class RWLockReader: SharedReadable, @unchecked Sendable {
    static let name = "pthread_rwlock (read)", id = "pthread-rwlock", kind = StrategyKind.peer
    private let rwlock: UnsafeMutablePointer<pthread_rwlock_t>
    private let value: Int
    init(_ initial: Int) {
        value = initial
        rwlock = .allocate(capacity: 1)
        rwlock.initialize(to: pthread_rwlock_t())
        pthread_rwlock_init(rwlock, nil)
    }
    deinit {
        pthread_rwlock_destroy(rwlock)
        rwlock.deallocate()
    }
    @inline(__always) func read() -> Int {
        pthread_rwlock_rdlock(rwlock)
        defer { pthread_rwlock_unlock(rwlock) }
        return value
    }
}

/// Reference: an acquiring atomic load, the floor for reading a shared word. `Sendable`: an `Atomic`.
final class AtomicReader: SharedReadable, Sendable {
    static let name = "Atomic load (floor)", id = "atomic", kind = StrategyKind.reference
    private let value: Synchronization.Atomic<Int>
    init(_ initial: Int) { value = Synchronization.Atomic(initial) }
    @inline(__always) func read() -> Int { value.load(ordering: .acquiring) }
}
