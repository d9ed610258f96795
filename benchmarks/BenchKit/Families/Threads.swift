// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import Dispatch
import Foundation
import Glibc
import Threading

/// A way to start a thread and wait for it to finish, for the `threads` family.
public protocol ThreadSpawner: Sendable {
    /// Display name.
    static var name: String { get }
    /// Command-line identifier.
    static var id: String { get }
    /// Ours, peer or reference.
    static var kind: StrategyKind { get }
    /// Starts a thread that returns `value` and waits for it; returns what the thread returned.
    static func spawnAndJoin(_ value: Int) -> Int
}

/// The `threads` family: T threads, started together, each repeatedly spawn a thread that returns a number and
/// join it. One operation is one spawn + join; the returned number is checked.
public enum Threads {
    /// A spawner as the CLI sees it.
    public struct Entry: Sendable {
        /// Display name.
        public var name: String
        /// Command-line identifier.
        public var id: String
        /// Ours, peer or reference.
        public var kind: StrategyKind
        /// One timed run.
        public var run: @Sendable (_ threads: Int, _ seconds: Double) -> RunSample

        /// Wraps a spawner.
        public init<S: ThreadSpawner>(_ type: S.Type) {
            name = S.name
            id = S.id
            kind = S.kind
            run = { threads, seconds in
                runTimed(threads: threads, seconds: seconds) { index, gate in worker(S.self, index: index, gate: gate) }
            }
        }
    }

    /// Every spawner: ours, then the peers.
    public static let catalog: [Entry] = [
        Entry(PosixThreadSpawner.self), Entry(RawPthreadSpawner.self), Entry(FoundationThreadSpawner.self),
    ]

    static func worker<S: ThreadSpawner>(_ type: S.Type, index: Int, gate: StartGate) -> WorkerResult {
        var result = WorkerResult()
        gate.arriveAndWait()
        let cpuStart = threadCPUNanoseconds()
        var value = index
        repeat {
            let started = monotonicNanoseconds()
            if S.spawnAndJoin(value) != value &+ 1 { result.badOperations += 1 }
            _ = result.latency.record(monotonicNanoseconds() &- started)
            result.operations += 1
            value &+= 1
        } while !gate.isStopped
        result.endNanoseconds = monotonicNanoseconds()
        result.cpuNanoseconds = threadCPUNanoseconds() &- cpuStart
        return result
    }
}

/// Ours: `PosixThread` with a typed result.
enum PosixThreadSpawner: ThreadSpawner {
    static let name = "PosixThread", id = "posixthread", kind = StrategyKind.ours
    static func spawnAndJoin(_ value: Int) -> Int {
        do {
            return try PosixThread { value &+ 1 }.join()
        } catch {
            return -1
        }
    }
}

/// Peer: raw `pthread_create` + `pthread_join` (the harness's own thread helper, a boxed closure).
enum RawPthreadSpawner: ThreadSpawner {
    static let name = "pthread_create+join", id = "pthread", kind = StrategyKind.peer
    static func spawnAndJoin(_ value: Int) -> Int {
        let box = ResultBox()
        joinThread(spawnThread { box.value = value &+ 1 })
        return box.value
    }
}

/// Peer: Foundation `Thread`, which cannot be joined: completion is signalled with a `DispatchSemaphore`.
enum FoundationThreadSpawner: ThreadSpawner {
    static let name = "Foundation Thread", id = "foundation-thread", kind = StrategyKind.peer
    static func spawnAndJoin(_ value: Int) -> Int {
        let box = ResultBox()
        let finished = DispatchSemaphore(value: 0)
        let thread = Thread {
            box.value = value &+ 1
            finished.signal()
        }
        thread.start()
        finished.wait()
        return box.value
    }
}

/// A result written by the spawned thread and read after the join (or the semaphore), which orders the two.
final class ResultBox: @unchecked Sendable {
    var value = -1
}
