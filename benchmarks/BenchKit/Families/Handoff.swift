// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import Dispatch
import Foundation
import Glibc
import Synchronization
import Threading

/// A two-sided baton for the `handoff` family: side 0 and side 1 take turns.
///
/// `pass(to:)` hands the turn to the other side and `await(_:)` blocks until it is this side's turn. `Sendable`
/// because both sides share it.
public protocol Baton: AnyObject, Sendable {
    /// Display name.
    static var name: String { get }
    /// Command-line identifier.
    static var id: String { get }
    /// Ours, peer or reference.
    static var kind: StrategyKind { get }
    /// Creates a baton; side 0 has the turn.
    init()
    /// Gives the turn to `side`.
    func pass(to side: Int)
    /// Blocks until `side` has the turn.
    func await(_ side: Int)
}

/// The `handoff` family: pairs of threads ping-pong a baton (condition variables, semaphores, monitors). One
/// operation is one round trip; latency is the round trip seen by the side that starts it. Threads come in pairs.
public enum Handoff {
    /// A baton strategy as the CLI sees it.
    public struct Entry: Sendable {
        /// Display name.
        public var name: String
        /// Command-line identifier.
        public var id: String
        /// Ours, peer or reference.
        public var kind: StrategyKind
        /// One timed run with `threads / 2` pairs.
        public var run: @Sendable (_ threads: Int, _ seconds: Double) -> RunSample

        /// Wraps a baton type.
        public init<B: Baton>(_ type: B.Type) {
            name = B.name
            id = B.id
            kind = B.kind
            run = { threads, seconds in runWorkload(B.self, pairs: max(threads / 2, 1), seconds: seconds) }
        }
    }

    /// Every baton: ours, then the peers.
    public static let catalog: [Entry] = [
        Entry(SemaphoreBaton.self), Entry(ConditionVariableBaton.self), Entry(MonitorBaton.self),
        Entry(DispatchSemaphoreBaton.self), Entry(NSConditionBaton.self), Entry(PthreadCondBaton.self),
        Entry(NSConditionLockBaton.self),
    ]

    /// One timed run: `pairs` independent pairs, each with its own baton.
    public static func runWorkload<B: Baton>(_ type: B.Type, pairs: Int, seconds: Double) -> RunSample {
        let batons = (0..<pairs).map { _ in B() }
        let done = (0..<pairs).map { _ in DoneFlag() }
        var sample = runTimed(threads: pairs * 2, seconds: seconds) { index, gate in
            let pair = index / 2
            return index % 2 == 0
                ? starter(batons[pair], done: done[pair], gate: gate)
                : responder(batons[pair], done: done[pair], gate: gate)
        }
        // Each round trip was counted on both sides.
        sample.operationsPerSecond /= 2
        sample.operations /= 2
        sample.cpuNanosecondsPerOperation *= 2
        return sample
    }

    static func starter<B: Baton>(_ baton: B, done: DoneFlag, gate: StartGate) -> WorkerResult {
        var result = WorkerResult()
        var operations = 0
        gate.arriveAndWait()
        let cpuStart = threadCPUNanoseconds()
        repeat {
            for step in 0..<LatencySampler.interval {
                let started = step == 0 ? monotonicNanoseconds() : 0
                baton.pass(to: 1)
                baton.await(0)
                if step == 0 { _ = result.latency.record(monotonicNanoseconds() &- started) }
            }
            operations &+= LatencySampler.interval
        } while !gate.isStopped
        done.flag.store(true, ordering: .releasing)
        baton.pass(to: 1)
        result.endNanoseconds = monotonicNanoseconds()
        result.cpuNanoseconds = threadCPUNanoseconds() &- cpuStart
        result.operations = operations
        return result
    }

    static func responder<B: Baton>(_ baton: B, done: DoneFlag, gate: StartGate) -> WorkerResult {
        var result = WorkerResult()
        var operations = 0
        gate.arriveAndWait()
        let cpuStart = threadCPUNanoseconds()
        while true {
            baton.await(1)
            if done.flag.load(ordering: .acquiring) { break }
            baton.pass(to: 0)
            operations &+= 1
        }
        result.endNanoseconds = monotonicNanoseconds()
        result.cpuNanoseconds = threadCPUNanoseconds() &- cpuStart
        result.operations = operations
        return result
    }
}

/// Set by the starter when it stops, so the responder leaves after its last wake-up.
final class DoneFlag: Sendable {
    let flag = Atomic<Bool>(false)
}

/// Ours: two `Semaphore`s. `Sendable` because `Semaphore` is.
final class SemaphoreBaton: Baton, Sendable {
    static let name = "Semaphore pair", id = "semaphore", kind = StrategyKind.ours
    private let sides = [Semaphore(value: 0), Semaphore(value: 0)]
    func pass(to side: Int) { sides[side].signal() }
    func await(_ side: Int) { sides[side].wait() }
}

/// Ours: `MutexLock` + `ConditionVariable` guarding a turn. `@unchecked Sendable`: `turn` is guarded by `lock`.
final class ConditionVariableBaton: Baton, @unchecked Sendable {
    static let name = "ConditionVariable", id = "condition", kind = StrategyKind.ours
    private let lock = MutexLock()
    private let condition = ConditionVariable()
    private var turn = 0
    func pass(to side: Int) {
        lock.withLock { turn = side }
        condition.broadcast()
    }
    func await(_ side: Int) {
        lock.lock()
        while turn != side { condition.wait(lock) }
        lock.unlock()
    }
}

/// Ours: `Monitor<Int>` holding the turn. `@unchecked Sendable`: the state is only reached through the monitor.
final class MonitorBaton: Baton, @unchecked Sendable {
    static let name = "Monitor", id = "monitor", kind = StrategyKind.ours
    private let monitor = Monitor(0)
    func pass(to side: Int) { monitor.withLock { $0 = side } }
    func await(_ side: Int) { monitor.withLock(when: { $0 == side }, { _ in }) }
}

/// Peer: two `DispatchSemaphore`s. `Sendable` because `DispatchSemaphore` is.
final class DispatchSemaphoreBaton: Baton, Sendable {
    static let name = "DispatchSemaphore pair", id = "dispatch-semaphore", kind = StrategyKind.peer
    private let sides = [DispatchSemaphore(value: 0), DispatchSemaphore(value: 0)]
    func pass(to side: Int) { sides[side].signal() }
    func await(_ side: Int) { sides[side].wait() }
}

/// Peer: Foundation `NSCondition` guarding a turn. `@unchecked Sendable`: `turn` is guarded by the condition's lock.
final class NSConditionBaton: Baton, @unchecked Sendable {
    static let name = "NSCondition", id = "nscondition", kind = StrategyKind.peer
    private let condition = NSCondition()
    private var turn = 0
    func pass(to side: Int) {
        condition.lock()
        turn = side
        condition.broadcast()
        condition.unlock()
    }
    func await(_ side: Int) {
        condition.lock()
        while turn != side { condition.wait() }
        condition.unlock()
    }
}

/// Peer: Foundation `NSConditionLock` whose condition is the turn (the peer of `Monitor`). `@unchecked Sendable`:
/// `NSConditionLock` is thread-safe.
final class NSConditionLockBaton: Baton, @unchecked Sendable {
    static let name = "NSConditionLock", id = "nsconditionlock", kind = StrategyKind.peer
    private let lock = NSConditionLock(condition: 0)
    func pass(to side: Int) {
        lock.lock()
        lock.unlock(withCondition: side)
    }
    func await(_ side: Int) {
        // `lock(whenCondition:)` is `lock(whenCondition:before: .distantFuture)`, which traps on this Foundation
        // for Linux (the far date overflows the conversion to a timespec): a deadline an hour away is the same
        // call path without the trap.
        guard lock.lock(whenCondition: side, before: Date(timeIntervalSinceNow: 3_600)) else {
            fatalError("NSConditionLock: no turn within an hour")
        }
        lock.unlock()
    }
}

/// Peer: raw `pthread_mutex_t` + `pthread_cond_t`, each in its own allocation. `@unchecked Sendable`: `turn` is
/// guarded by the mutex.
final class PthreadCondBaton: Baton, @unchecked Sendable {
    static let name = "pthread_cond", id = "pthread-cond", kind = StrategyKind.peer
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private let cond: UnsafeMutablePointer<pthread_cond_t>
    private var turn = 0
    init() {
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        pthread_mutex_init(mutex, nil)
        cond = .allocate(capacity: 1)
        cond.initialize(to: pthread_cond_t())
        pthread_cond_init(cond, nil)
    }
    deinit {
        pthread_cond_destroy(cond)
        pthread_mutex_destroy(mutex)
        cond.deallocate()
        mutex.deallocate()
    }
    func pass(to side: Int) {
        pthread_mutex_lock(mutex)
        turn = side
        pthread_cond_broadcast(cond)
        pthread_mutex_unlock(mutex)
    }
    func await(_ side: Int) {
        pthread_mutex_lock(mutex)
        while turn != side { pthread_cond_wait(cond, mutex) }
        pthread_mutex_unlock(mutex)
    }
}
