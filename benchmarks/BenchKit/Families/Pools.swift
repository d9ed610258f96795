// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import Dispatch
import Glibc
import NIOPosix
import Threading

/// The `pools` and `blocking` families: the cost of a pool's whole life, and blocking work on a blocking pool. Each
/// strategy is a ``ThreadSpawner`` ("start work that returns a number and wait for it"), so the `threads` family's
/// harness measures it: one operation is one life or one batch, and the returned number is checked.
public enum Pools {
    /// A pool's life (`bench pools`): ours, then the peer; a bare `PosixThread` spawn + join for scale.
    public static let lifeCatalog: [Threads.Entry] = [
        Threads.Entry(WorkerPoolLife.self), Threads.Entry(DispatchQueueLife.self),
        Threads.Entry(PosixThreadSpawner.self),
    ]

    /// Blocking batches (`bench blocking`): ours, then the peers (NIO's thread pool of the same size, Dispatch).
    public static let blockingCatalog: [Threads.Entry] = [
        Threads.Entry(BlockingPoolBatch.self), Threads.Entry(NIOThreadPoolBatch.self),
        Threads.Entry(DispatchBlockingBatch.self),
    ]

    /// Tasks in one blocking batch, and how long each blocks.
    public static let batchTasks = 10_000
    static let blockMicroseconds: UInt32 = 1_000
    /// Threads of the blocking pool (the batch's parallelism).
    static let blockingThreads = 64
}

/// Ours: create a one-thread `WorkerPool`, run one task on a queue of it, shut it down (threads joined).
enum WorkerPoolLife: ThreadSpawner {
    static let name = "WorkerPool create+task+shutdown", id = "workerpool-life", kind = StrategyKind.ours
    static func spawnAndJoin(_ value: Int) -> Int {
        let pool = WorkerPool(label: "bench.pool", threads: 1)
        let box = ResultBox()
        SerialQueue(label: "bench.pool.q", pool: pool).async { box.value = value &+ 1 }
        pool.shutdown()  // joins the pool's threads: the task's write happens before this returns
        return box.value
    }
}

/// Peer: a new `DispatchQueue`, one task, waited for (Dispatch's queues own no threads: there is nothing to shut
/// down, so this is the floor a pool's life competes with).
enum DispatchQueueLife: ThreadSpawner {
    static let name = "DispatchQueue create+task+wait", id = "dispatch-life", kind = StrategyKind.peer
    static func spawnAndJoin(_ value: Int) -> Int {
        let queue = DispatchQueue(label: "bench.dispatch")
        let box = ResultBox()
        queue.async { box.value = value &+ 1 }
        queue.sync {}
        return box.value
    }
}

/// Ours: 10,000 tasks that each block 1 ms (`usleep`), on a 64-thread blocking `WorkerPool`; one operation is the
/// whole batch.
enum BlockingPoolBatch: ThreadSpawner {
    static let name = "WorkerPool(.blocking, 64) 10,000 x 1 ms", id = "blocking-pool", kind = StrategyKind.ours
    static let pool = WorkerPool(label: "bench.blocking", threads: Pools.blockingThreads, kind: .blocking)
    static let queue = ConcurrentQueue(label: "bench.blocking.q", pool: pool)

    static func spawnAndJoin(_ value: Int) -> Int {
        let group = WorkGroup()
        for _ in 0..<Pools.batchTasks {
            queue.async(group: group) { usleep(Pools.blockMicroseconds) }
        }
        return group.wait(timeout: .seconds(60)) ? value &+ 1 : -1
    }
}

/// Peer: the same batch on swift-nio's `NIOThreadPool` with the same thread count (started once, like ours), each
/// task leaving a `DispatchGroup`.
enum NIOThreadPoolBatch: ThreadSpawner {
    static let name = "NIOThreadPool(64) 10,000 x 1 ms", id = "nio-threadpool", kind = StrategyKind.peer
    static let pool: NIOThreadPool = {
        let pool = NIOThreadPool(numberOfThreads: Pools.blockingThreads)
        pool.start()
        return pool
    }()

    static func spawnAndJoin(_ value: Int) -> Int {
        let group = DispatchGroup()
        for _ in 0..<Pools.batchTasks {
            group.enter()
            pool.submit { _ in
                usleep(Pools.blockMicroseconds)
                group.leave()
            }
        }
        return group.wait(timeout: .now() + 60) == .success ? value &+ 1 : -1
    }
}

/// Peer: the same batch on Dispatch's global concurrent queue (which adds threads for blocked work on its own).
enum DispatchBlockingBatch: ThreadSpawner {
    static let name = "Dispatch global 10,000 x 1 ms", id = "dispatch-blocking", kind = StrategyKind.peer
    static func spawnAndJoin(_ value: Int) -> Int {
        let group = DispatchGroup()
        for _ in 0..<Pools.batchTasks {
            DispatchQueue.global().async(group: group) { usleep(Pools.blockMicroseconds) }
        }
        return group.wait(timeout: .now() + 60) == .success ? value &+ 1 : -1
    }
}
