// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import CBenchSupport
import Dispatch
import Foundation
import Glibc
import NIOConcurrencyHelpers
import Synchronization
import Threading

/// A lock as the `locks` family sees it: one critical section, entered and left.
///
/// Conforming types are small classes wrapping one lock; `Sendable` because a lock is shared by design.
public protocol BenchLock: AnyObject, Sendable {
    /// Display name.
    static var name: String { get }
    /// Command-line identifier.
    static var id: String { get }
    /// Ours, peer or reference.
    static var kind: StrategyKind { get }
    /// Creates an unlocked lock.
    init()
    /// Runs `body` while holding the lock.
    func withLock<R>(_ body: () -> R) -> R
}

/// The `locks` family: T threads, started together, each repeatedly take the lock, increment one shared counter
/// and release it. At 1 thread this is the uncontended lock/unlock cost; at 2+ threads the contended one. The counter
/// must equal the number of completed operations at the end, so a lock that lets two threads in is INVALID.
public enum Locks {
    /// A lock strategy as the CLI sees it.
    public struct Entry: Sendable {
        /// Display name.
        public var name: String
        /// Command-line identifier.
        public var id: String
        /// Ours, peer or reference.
        public var kind: StrategyKind
        /// One timed run.
        public var run: @Sendable (_ threads: Int, _ seconds: Double) -> RunSample
        /// One timed run that counts the lock protocol's costs and returns its `COUNTERS` line; `nil` for locks
        /// that are not the futex lock under ``LockProtocolCounters``.
        public var countersRun: (@Sendable (_ threads: Int, _ seconds: Double) -> String)?

        /// Wraps a lock type; `run` is specialized for it.
        public init<L: BenchLock>(_ type: L.Type) {
            name = L.name
            id = L.id
            kind = L.kind
            run = { threads, seconds in runWorkload(L.self, threads: threads, seconds: seconds) }
            if Locks.countedIDs.contains(L.id) {
                countersRun = { threads, seconds in Locks.countersLine(L.self, threads: threads, seconds: seconds) }
            } else {
                countersRun = nil
            }
        }

        /// The same lock run in a child process started in `MutexLock`'s opt-in membarrier mode, side by side with
        /// the default mode (the mode is per process and fixed before `main`).
        public init<L: BenchLock>(membarrierModeOf type: L.Type, runner: ChildProcessRunner = ChildProcessRunner()) {
            name = L.name + " (membarrier)"
            id = L.id + "-membarrier"
            kind = L.kind
            run = { threads, seconds in
                runner.runLocks(
                    lock: L.id,
                    threads: threads,
                    seconds: seconds,
                    environment: ChildProcessRunner.membarrierMode
                )
            }
        }
    }

    /// Every lock: ours, then the peers, then the C floor.
    public static let catalog: [Entry] = [
        Entry(OursMutexLock.self), Entry(membarrierModeOf: OursMutexLock.self), Entry(OursRecursiveLock.self),
        Entry(OursSpinLock.self),
        Entry(OursReadWriteLock.self), Entry(OursSemaphore.self), Entry(OursLockedValue.self),
        Entry(PeerNSLock.self), Entry(PeerNSRecursiveLock.self), Entry(PeerSynchronizationMutex.self),
        Entry(PeerNIOLock.self), Entry(PeerDispatchSemaphore.self), Entry(PeerPthreadMutex.self),
        Entry(PeerPthreadRecursiveMutex.self), Entry(PeerPthreadRWLock.self), Entry(PeerNIOLockedValueBox.self),
        Entry(ReferenceCASSpin.self),
    ]

    /// The strategies built on the futex lock whose protocol ``LockProtocolCounters`` counts.
    public static let countedIDs: Set<String> = ["mutexlock", "recursivelock", "lockedvalue"]

    /// One timed run of lock `L` with the process counting (``LockProtocolCounters/isCounting``), as one line:
    /// `COUNTERS locks: <strategy> T=<n> eagain_per_1k=<x> rmw_per_contended=<x> spinners_mean=<x>
    /// futex_calls_per_contended=<x> handoffs_per_ms=<x> owner_changes_per_1k=<x>`. Per 1,000 acquisitions or per
    /// contended acquisition as named; `spinners_mean` is the threads' total spinning (CPU) time over the wall time,
    /// `handoffs_per_ms` per millisecond of wall time. The owner changes are counted inside the critical section
    /// (the new owner compares itself with the last one), so they are exact.
    public static func countersLine<L: BenchLock>(_ type: L.Type, threads: Int, seconds: Double) -> String {
        let lock = L()
        let counter = CounterCell()
        let lastOwner = CounterCell()
        let counters = UnsafeMutablePointer<LockProtocolCounters>.allocate(capacity: threads)
        counters.initialize(repeating: LockProtocolCounters(), count: threads)
        let slots = CountersSlots(counters)
        let wasCounting = LockProtocolCounters.isCounting
        LockProtocolCounters.isCounting = true
        var sample = runTimed(threads: threads, seconds: seconds) { index, gate in
            var result = WorkerResult()
            var operations = 0
            var changes = 0
            gate.arriveAndWait()
            LockProtocolCounters.resetCurrentThread()
            repeat {
                for _ in 0..<LatencySampler.interval {
                    lock.withLock {
                        counter.increment()
                        if lastOwner.value != index + 1 {
                            changes &+= 1
                            lastOwner.set(index + 1)
                        }
                    }
                }
                operations &+= LatencySampler.interval
            } while !gate.isStopped
            result.endNanoseconds = monotonicNanoseconds()
            result.operations = operations
            result.badOperations = changes  // carried out of the worker; taken back below
            slots.store(index, LockProtocolCounters.currentThread)
            return result
        }
        LockProtocolCounters.isCounting = wasCounting
        let changes = sample.badOperations
        sample.badOperations = abs(lock.withLock { counter.value } - sample.operations)
        var total = LockProtocolCounters()
        for index in 0..<threads { total = total + counters[index] }
        counters.deallocate()
        counter.destroy()
        lastOwner.destroy()
        let acquisitions = Double(max(sample.operations, 1))
        let wallNanoseconds = acquisitions / max(sample.operationsPerSecond, 1) * 1e9
        let contended = Double(max(total.contendedAcquisitions, 1))
        func format(_ value: Double) -> String { String(format: "%.3f", value) }
        let fields = [
            "eagain_per_1k=\(format(Double(total.futexWaitsReturnedAtOnce) / acquisitions * 1000))",
            "rmw_per_contended=\(format(Double(total.readModifyWrites) / contended))",
            "spinners_mean=\(format(Double(total.spinNanoseconds) / wallNanoseconds))",
            "futex_calls_per_contended=\(format(Double(total.futexWaits + total.futexWakes) / contended))",
            "handoffs_per_ms=\(format(Double(total.handoffs) / (wallNanoseconds / 1e6)))",
            "owner_changes_per_1k=\(format(Double(changes) / acquisitions * 1000))",
        ]
        let validation = sample.badOperations == 0 ? "" : " INVALID(\(sample.badOperations) lost)"
        return "COUNTERS locks: \(L.id) T=\(threads) " + fields.joined(separator: " ")
            + " contended_per_1k=\(format(Double(total.contendedAcquisitions) / acquisitions * 1000))" + validation
    }

    /// One timed run of lock `L`, validated by the shared counter.
    public static func runWorkload<L: BenchLock>(_ type: L.Type, threads: Int, seconds: Double) -> RunSample {
        let lock = L()
        let counter = CounterCell()
        var sample = runTimed(threads: threads, seconds: seconds) { _, gate in
            worker(lock, counter: counter, gate: gate)
        }
        let final = lock.withLock { counter.value }
        sample.badOperations += abs(final - sample.operations)
        counter.destroy()
        return sample
    }

    @inline(__always)
    static func worker<L: BenchLock>(_ lock: L, counter: CounterCell, gate: StartGate) -> WorkerResult {
        var result = WorkerResult()
        var operations = 0
        gate.arriveAndWait()
        let cpuStart = threadCPUNanoseconds()
        repeat {
            let batchStart = monotonicNanoseconds()
            for step in 0..<LatencySampler.interval {
                let started = step == 0 ? monotonicNanoseconds() : 0
                lock.withLock { counter.increment() }
                if step == 0 {
                    _ = result.latency.record(monotonicNanoseconds() &- started)
                }
            }
            operations &+= LatencySampler.interval
            // The longest batch bounds this thread's longest wait for the lock (the fairness bound, measured).
            result.worstNanoseconds = max(result.worstNanoseconds, monotonicNanoseconds() &- batchStart)
        } while !gate.isStopped
        result.endNanoseconds = monotonicNanoseconds()
        result.cpuNanoseconds = threadCPUNanoseconds() &- cpuStart
        result.operations = operations
        return result
    }
}

/// A plain (non-atomic) shared counter in a fixed heap cell; only ever touched under the lock being measured.
struct CounterCell: @unchecked Sendable {
    private let pointer: UnsafeMutablePointer<Int>

    init() {
        pointer = .allocate(capacity: 1)
        pointer.initialize(to: 0)
    }

    @inline(__always) func increment() { pointer.pointee &+= 1 }

    @inline(__always) func set(_ value: Int) { pointer.pointee = value }

    var value: Int { pointer.pointee }

    func destroy() { pointer.deallocate() }
}

/// Per-thread counter slots, each written once by its worker and read after the join.
///
/// `@unchecked Sendable`: each slot is written by exactly one thread and read only after `pthread_join`.
struct CountersSlots: @unchecked Sendable {
    let base: UnsafeMutablePointer<LockProtocolCounters>

    init(_ base: UnsafeMutablePointer<LockProtocolCounters>) { self.base = base }

    func store(_ index: Int, _ value: LockProtocolCounters) { base[index] = value }
}

// MARK: - Ours

/// Ours: `MutexLock`. `Sendable` because `MutexLock` is.
final class OursMutexLock: BenchLock, Sendable {
    static let name = "MutexLock", id = "mutexlock", kind = StrategyKind.ours
    private let lock = MutexLock()
    @inline(__always) func withLock<R>(_ body: () -> R) -> R { lock.withLock(body) }
}

/// Ours: `RecursiveLock`. `Sendable` because `RecursiveLock` is.
final class OursRecursiveLock: BenchLock, Sendable {
    static let name = "RecursiveLock", id = "recursivelock", kind = StrategyKind.ours
    private let lock = RecursiveLock()
    @inline(__always) func withLock<R>(_ body: () -> R) -> R { lock.withLock(body) }
}

/// Ours: `SpinLock`. `Sendable` because `SpinLock` is.
final class OursSpinLock: BenchLock, Sendable {
    static let name = "SpinLock", id = "spinlock", kind = StrategyKind.ours
    private let lock = SpinLock()
    @inline(__always) func withLock<R>(_ body: () -> R) -> R { lock.withLock(body) }
}

/// Ours: `ReadWriteLock`, write side. `Sendable` because `ReadWriteLock` is.
final class OursReadWriteLock: BenchLock, Sendable {
    static let name = "ReadWriteLock (write)", id = "rwlock", kind = StrategyKind.ours
    private let lock = ReadWriteLock()
    @inline(__always) func withLock<R>(_ body: () -> R) -> R { lock.withWriteLock(body) }
}

/// Ours: `Semaphore(value: 1)`. `Sendable` because `Semaphore` is.
final class OursSemaphore: BenchLock, Sendable {
    static let name = "Semaphore", id = "semaphore", kind = StrategyKind.ours
    private let semaphore = Semaphore(value: 1)
    @inline(__always) func withLock<R>(_ body: () -> R) -> R {
        semaphore.wait()
        defer { semaphore.signal() }
        return body()
    }
}

/// Ours: `LockedValue<Void>` (the lock of a guarded value, entered with `withLock`). `@unchecked Sendable`:
/// `LockedValue` is `Sendable` for a `Sendable` value, and the guarded value here is `Void`.
final class OursLockedValue: BenchLock, @unchecked Sendable {
    static let name = "LockedValue", id = "lockedvalue", kind = StrategyKind.ours
    private let value = LockedValue(())
    @inline(__always) func withLock<R>(_ body: () -> R) -> R { value.withLock { _ in body() } }
}

// MARK: - Peers

/// Peer: swift-nio `NIOLockedValueBox<Void>`. `@unchecked Sendable`: the box is `Sendable` for a `Sendable` value.
final class PeerNIOLockedValueBox: BenchLock, @unchecked Sendable {
    static let name = "NIOLockedValueBox", id = "nio-lockedvaluebox", kind = StrategyKind.peer
    private let box = NIOLockedValueBox(())
    @inline(__always) func withLock<R>(_ body: () -> R) -> R { box.withLockedValue { _ in body() } }
}

/// Peer: Foundation `NSLock`. `@unchecked Sendable`: `NSLock` is thread-safe.
final class PeerNSLock: BenchLock, @unchecked Sendable {
    static let name = "NSLock", id = "nslock", kind = StrategyKind.peer
    private let lock = NSLock()
    @inline(__always) func withLock<R>(_ body: () -> R) -> R {
        lock.lock()
        defer { lock.unlock() }
        return body()
    }
}

/// Peer: Foundation `NSRecursiveLock`. `@unchecked Sendable`: it is thread-safe.
final class PeerNSRecursiveLock: BenchLock, @unchecked Sendable {
    static let name = "NSRecursiveLock", id = "nsrecursivelock", kind = StrategyKind.peer
    private let lock = NSRecursiveLock()
    @inline(__always) func withLock<R>(_ body: () -> R) -> R {
        lock.lock()
        defer { lock.unlock() }
        return body()
    }
}

/// Peer: `Synchronization.Mutex<Void>`. `Sendable` because `Mutex` is.
final class PeerSynchronizationMutex: BenchLock, Sendable {
    static let name = "Synchronization.Mutex", id = "sync-mutex", kind = StrategyKind.peer
    private let mutex = Mutex<Void>(())
    @inline(__always) func withLock<R>(_ body: () -> R) -> R { mutex.withLock { _ in body() } }
}

/// Peer: swift-nio `NIOLock`. `Sendable` because `NIOLock` is.
final class PeerNIOLock: BenchLock, Sendable {
    static let name = "NIOLock", id = "nio-lock", kind = StrategyKind.peer
    private let lock = NIOLock()
    @inline(__always) func withLock<R>(_ body: () -> R) -> R { lock.withLock(body) }
}

/// Peer: `DispatchSemaphore(value: 1)`. `Sendable` because `DispatchSemaphore` is.
final class PeerDispatchSemaphore: BenchLock, Sendable {
    static let name = "DispatchSemaphore", id = "dispatch-semaphore", kind = StrategyKind.peer
    private let semaphore = DispatchSemaphore(value: 1)
    @inline(__always) func withLock<R>(_ body: () -> R) -> R {
        semaphore.wait()
        defer { semaphore.signal() }
        return body()
    }
}

/// Peer: a raw `pthread_mutex_t` (default attributes) in its own allocation. `@unchecked Sendable`: a mutex.
final class PeerPthreadMutex: BenchLock, @unchecked Sendable {
    static let name = "pthread_mutex", id = "pthread-mutex", kind = StrategyKind.peer
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    init() {
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        pthread_mutex_init(mutex, nil)
    }
    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }
    @inline(__always) func withLock<R>(_ body: () -> R) -> R {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return body()
    }
}

/// Peer: a raw `pthread_mutex_t` of kind `PTHREAD_MUTEX_RECURSIVE`, the C peer of `RecursiveLock`.
/// `@unchecked Sendable`: a mutex.
final class PeerPthreadRecursiveMutex: BenchLock, @unchecked Sendable {
    static let name = "pthread_mutex (recursive)", id = "pthread-recursive-mutex", kind = StrategyKind.peer
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    init() {
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        var attributes = pthread_mutexattr_t()
        pthread_mutexattr_init(&attributes)
        pthread_mutexattr_settype(&attributes, Int32(PTHREAD_MUTEX_RECURSIVE))
        pthread_mutex_init(mutex, &attributes)
        pthread_mutexattr_destroy(&attributes)
    }
    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }
    @inline(__always) func withLock<R>(_ body: () -> R) -> R {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return body()
    }
}

/// Peer: a raw `pthread_rwlock_t`, write side, in its own allocation. `@unchecked Sendable`: a lock.
final class PeerPthreadRWLock: BenchLock, @unchecked Sendable {
    static let name = "pthread_rwlock (write)", id = "pthread-rwlock", kind = StrategyKind.peer
    private let rwlock: UnsafeMutablePointer<pthread_rwlock_t>
    init() {
        rwlock = .allocate(capacity: 1)
        rwlock.initialize(to: pthread_rwlock_t())
        pthread_rwlock_init(rwlock, nil)
    }
    deinit {
        pthread_rwlock_destroy(rwlock)
        rwlock.deallocate()
    }
    @inline(__always) func withLock<R>(_ body: () -> R) -> R {
        pthread_rwlock_wrlock(rwlock)
        defer { pthread_rwlock_unlock(rwlock) }
        return body()
    }
}

// MARK: - Reference

/// Reference: the raw C compare-exchange spin lock (the hardware floor). `@unchecked Sendable`: a lock word.
final class ReferenceCASSpin: BenchLock, @unchecked Sendable {
    static let name = "C CAS spin (floor)", id = "cas-spin", kind = StrategyKind.reference
    private let word: UnsafeMutablePointer<cthr_bench_spin_word_t>
    init() {
        word = .allocate(capacity: 1)
        word.initialize(to: 0)
    }
    deinit { word.deallocate() }
    @inline(__always) func withLock<R>(_ body: () -> R) -> R {
        cthr_bench_spin_lock(word)
        defer { cthr_bench_spin_unlock(word) }
        return body()
    }
}
