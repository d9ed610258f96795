// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import CThreading
import Synchronization

/// A fixed set of serial queues of one ``QoS``, handed out round-robin, after YYKit's YYDispatchQueuePool.
///
/// Code that wants "a serial queue for this job" without creating a queue per job takes ``next()``: jobs given the
/// same queue stay ordered, jobs on different queues run in parallel, and the number of queues (hence of workers
/// those jobs can occupy at once) is bounded.
///
/// Size: the default is ``defaultCount`` = `cthr_cpu_effective_count() + 1` (the CPUs the affinity mask and the
/// cgroup CPU quota allow), clamped to 2...32. The reasoning: with
/// CPU-bound work the best number of concurrently running serial streams is the core count, plus one so a core is
/// not wasted when a job briefly stalls (a page fault, a short lock wait); YYDispatchQueuePool caps at 32, which we
/// keep as the upper bound. (On libdispatch every busy serial queue can mean a thread; here the queues share one
/// worker pool, so the count bounds parallelism, not threads.)
///
/// Reference semantics; `Sendable`: the queues are immutable and the cursor is atomic.
public final class QueuePool: Sendable {
    /// The pool's label; its queues are labelled `label.0`, `label.1`, ...
    public let label: String
    /// The quality of service of every queue.
    public let qos: QoS
    /// The queues, in hand-out order.
    public let queues: [SerialQueue]
    private let cursor = Atomic<Int>(0)

    /// `cthr_cpu_effective_count() + 1` (affinity mask and cgroup CPU quota), clamped to 2...32.
    public static var defaultCount: Int {
        Swift.min(32, Swift.max(2, Int(cthr_cpu_effective_count()) + 1))
    }

    /// The most queues a pool may have: 4,096, the most threads a ``WorkerPool`` has (more serial queues than
    /// threads add no parallelism). The queues are made by the constructor, so this bounds what it commits.
    public static let maximumCount = 4096

    /// Creates a pool.
    ///
    /// The queues are made here, all of them: `count` is a size, not a cap.
    ///
    /// - Parameters:
    ///   - label: The pool's label.
    ///   - qos: The queues' quality of service.
    ///   - count: How many queues, 1 through ``maximumCount`` (default ``defaultCount``). Outside that range the
    ///     program stops with a message naming the argument and the limit (see <doc:Misuse>).
    ///   - pool: The worker pool the queues run on (default ``WorkerPool/shared``).
    public init(
        label: String,
        qos: QoS = .default,
        count: Int = QueuePool.defaultCount,
        pool: WorkerPool = .shared
    ) {
        require(count >= 1, "QueuePool(label: \"\(label)\", count: \(count)): count must be ≥ 1")
        require(
            count <= QueuePool.maximumCount,
            "QueuePool(label: \"\(label)\", count: \(count)): count must be ≤ \(QueuePool.maximumCount) "
                + "(QueuePool.maximumCount)"
        )
        self.label = label
        self.qos = qos
        self.queues = (0..<count).map { SerialQueue(label: "\(label).\($0)", qos: qos, pool: pool) }
    }

    /// The next queue, round-robin.
    ///
    /// - Returns: A queue of the pool.
    /// - Complexity: O(1), one atomic increment.
    public func next() -> SerialQueue {
        let index = cursor.add(1, ordering: .relaxed).oldValue
        return queues[Int(UInt(bitPattern: index) % UInt(queues.count))]
    }

    /// The process-wide pool of a QoS (created on first use with the default size).
    ///
    /// Its queues are shared by every user in the process, so they cannot be suspended: ``WorkQueue/suspend()``
    /// on one of them stops the program with a message naming the queue (one user would stall all the others).
    /// To pause your own work, give it a queue of your own (it may target a shared queue) and suspend that.
    ///
    /// - Parameter qos: The quality of service.
    /// - Returns: The shared pool.
    public static func shared(for qos: QoS) -> QueuePool {
        sharedPools[qos.rawValue]
    }

    private static let sharedPools: [QueuePool] = QoS.allCases.map { qos in
        let pool = QueuePool(label: "threading.pool.\(qos)", qos: qos)
        for queue in pool.queues { queue.core.markProcessWide("QueuePool.shared(for: .\(qos))") }
        return pool
    }
}
