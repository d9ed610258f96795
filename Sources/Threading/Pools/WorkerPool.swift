// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import CThreading

/// A set of worker threads that runs the work of the queues, timers and job queues created on it.
///
/// Every ``SerialQueue``, ``ConcurrentQueue`` and ``JobQueue`` runs on one pool: the one named by its `pool:`
/// parameter, its target's, or ``shared``. Two pools are independent: each has its own lanes, threads and monitor,
/// so saturating one (every thread blocked) does not delay the other.
///
/// Two kinds (see <doc:Pools>):
/// - a **CPU pool** (``Kind/cpu``) runs at most ``threadCount`` tasks at once. A task that blocks in a wait the pool
///   can see (a `sync` on a busy queue, ``WorkGroup/wait(timeout:)``, ``Semaphore/wait()-7yygf``,
///   ``ConditionVariable/wait(_:)``, a ``withBlockingRegion(_:)``) gives its slot up meanwhile, and the pool adds a
///   thread for pending work, up to ``maxThreads`` = `max(40, 4 × threadCount + 32)` threads;
/// - a **blocking pool** (``Kind/blocking``) is for work that blocks (file and socket I/O, foreign locks): exactly
///   ``threadCount`` threads at most, made on demand, and idle ones exit after 2 s. ``blocking`` is the process-wide
///   one.
///
/// Saturation is never silent: when work has waited for longer than a short grace period (0.5 s) while every
/// thread the pool may have is busy, the pool prints one line on stderr naming itself, its cap, the queued count and
/// the advice (raise the cap, or use a blocking pool), at most once per episode and once every 10 s, and counts it
/// in ``WorkerPoolStatistics/saturations``.
///
/// ``run(fileID:line:_:)`` runs a closure on the pool and returns its value to an awaiting task: the way to offload a blocking
/// call from async code.
///
/// ``shutdown()-8p8u6`` stops the pool: it takes no more submissions from other threads, runs every task it accepted,
/// and joins its threads; ``shutdown(timeout:)`` bounds the wait and counts what it left. A fire-and-forget
/// submission (`async`) to a queue of a shut-down pool traps with a message naming the pool and the queue, never a
/// silent drop; code that may race the shutdown uses the forms that answer instead (``WorkQueue/tryAsync(flags:_:)``,
/// ``WorkQueue/tryAsyncAfter(delay:_:)``, ``QueueTimer/start(queue:delay:repeating:handler:)``,
/// ``JobQueue/tryAddJob(_:)``, ``run(fileID:line:_:)``): see <doc:Pools>. A pool that is never shut down keeps its threads (they
/// reference it) until the process exits; the process-wide pools are never shut down, so they take work while the
/// process exits too.
///
/// Reference semantics; `Sendable`: the pool's state lives in the pool, which synchronises itself.
public final class WorkerPool: Sendable {
    /// The kind of work a pool is sized for.
    ///
    /// A value type with no references, so it is `Sendable`.
    public enum Kind: Sendable, Hashable {
        /// Work that uses a CPU while it runs: ``threadCount`` tasks at once, and compensating threads while
        /// tasks block in waits the pool sees.
        case cpu
        /// Work that blocks: ``threadCount`` threads at most, made on demand, none kept when idle.
        case blocking
    }

    /// What ``shutdown(timeout:)`` left undone.
    ///
    /// A value type, so it is `Sendable`.
    public struct ShutdownResult: Sendable, Hashable {
        /// Whether every accepted task ran and every thread was joined before the timeout.
        public let isComplete: Bool
        /// Tasks accepted that never started: pending in the pool, its queues (a serial queue's drain gives up the
        /// items it took and had not started) or its job queues when the timeout passed. Each counts once, and none
        /// of them starts after ``shutdown(timeout:)`` returned.
        public let tasksNotRun: Int
        /// Threads that were still running a task when the timeout passed: each exits when its task returns.
        public let busyThreads: Int
    }

    let poolCore: PoolCore

    /// The pool's label: its threads carry it as their name (truncated to 15 bytes), and diagnostics name it.
    public var label: String { poolCore.label }

    /// The kind of the pool.
    public var kind: Kind { poolCore.isBlocking ? .blocking : .cpu }

    /// The most tasks that run at once (for a CPU pool, not counting tasks blocked in waits the pool sees).
    public var threadCount: Int { poolCore.cores }

    /// The most threads the pool ever has: for a CPU pool `max(40, 4 × threadCount + 32)`, for a blocking pool
    /// ``threadCount``; never above 4,096.
    public var maxThreads: Int { poolCore.maxThreads }

    /// Whether ``shutdown()-8p8u6`` or ``shutdown(timeout:)`` was called.
    public var isShutDown: Bool { poolCore.isShutDown }

    /// The pool's state now: threads, queued units, saturation counters.
    public var statistics: WorkerPoolStatistics { poolCore.observedStatistics() }

    /// How long a worker of the pool may run one unit (a task, a queue item) before the stall watchdog reports it,
    /// or nil when it does not (see the Observing article).
    ///
    /// Five seconds for a CPU pool, a minute for a blocking pool, until set. A blocking pool's units block by design
    /// (file and socket I/O), so seconds are normal there; but a call still blocked after the 60 s that load
    /// balancers and proxies wait for an answer by default (an AWS ALB's idle timeout, nginx's `proxy_read_timeout`)
    /// serves no client any more: it is a hang. The watchdog samples the pool's workers every fifth of the smallest
    /// threshold (10 to 100 ms) and reports a stall once when it sees it (``RuntimeEvent/Kind/stallBegan``, naming
    /// the pool, the thread and the work: the queue, or where a ``run(fileID:line:_:)`` or a ``WorkItem`` was called
    /// from) and once when the unit returns
    /// (``RuntimeEvent/Kind/stallEnded``); ``WorkerPoolStatistics/stalls`` counts them. Workers pay no clock read
    /// for it. Setting it applies from the next sample on.
    public var stallThreshold: Duration? {
        get {
            let threshold = poolCore.observation.stallThreshold.load(ordering: .relaxed)
            return threshold == 0 ? nil : .nanoseconds(Int64(clamping: threshold))
        }
        set {
            var nanoseconds: UInt64 = 0
            if let newValue {
                require(
                    newValue > .zero,
                    "WorkerPool '\(label)'.stallThreshold = \(newValue): the threshold must be positive (nil turns it off)"
                )
                nanoseconds = Swift.max(1, RuntimeDump.nanoseconds(newValue))
            }
            poolCore.observation.stallThreshold.store(nanoseconds, ordering: .relaxed)
        }
    }

    /// Whether the pool records each unit's run time in ``WorkerPoolStatistics/runTimes`` (off until set).
    ///
    /// On, each unit costs two reads of the monotonic clock (about 20 ns each) and one relaxed atomic add; off, one
    /// relaxed load. Turning it off keeps what was recorded; turning it on again adds to it.
    public var recordsRunTimes: Bool {
        get { poolCore.observation.recordsRunTimes.load(ordering: .relaxed) }
        set { poolCore.observation.recordsRunTimes.store(newValue, ordering: .relaxed) }
    }

    /// Whether the pool records each unit's schedule delay, from its submission to a worker taking it, in
    /// ``WorkerPoolStatistics/scheduleDelays`` (off until set).
    ///
    /// A unit is what the pool schedules: a serial queue's turn on a worker (its drain), one concurrent queue item, a
    /// task or a plain job. A serial queue's items after the first in a turn wait in the queue, not in the pool: the
    /// queue's depth in the runtime snapshot shows them. On, each unit costs two reads of the monotonic clock (one at
    /// submission, outside the run queue's lock, one when taken) and one relaxed atomic add; off, one relaxed load at
    /// submission. Units submitted while it was off are not recorded. Turning it off keeps what was recorded.
    public var recordsScheduleDelays: Bool {
        get { poolCore.observation.recordsScheduleDelays.load(ordering: .relaxed) }
        set { poolCore.observation.recordsScheduleDelays.store(newValue, ordering: .relaxed) }
    }

    /// The number of CPUs the process may use: the calling thread's affinity mask lowered to the cgroup CPU quota
    /// (v2 `cpu.max` or v1 CFS quota, rounded up), at least 1. The default ``threadCount`` of a CPU pool.
    ///
    /// The corresponding C function is `cthr_cpu_effective_count`.
    public static var defaultThreadCount: Int { Int(cthr_cpu_effective_count()) }

    /// The default ``threadCount`` of a blocking pool and the cap of ``blocking``: 512 (Tokio's blocking pool cap).
    public static let defaultBlockingThreadCount = 512

    /// Creates a pool. No thread starts until work is submitted.
    ///
    /// - Parameters:
    ///   - label: A name for the pool's threads and diagnostics.
    ///   - threads: The most tasks that run at once, 1 through 4,096 (the most threads a pool may have). The
    ///     constructor commits a pointer per thread the pool may have (32 KB at most); each thread's structures
    ///     are made when the thread first starts. Default: ``defaultThreadCount`` for a CPU pool (above 4,096 CPUs, 4,096),
    ///     ``defaultBlockingThreadCount`` for a blocking pool. Outside that range the program stops with a message
    ///     naming the pool, the argument and the limit (see <doc:Misuse>).
    ///   - kind: ``Kind/cpu`` (default) or ``Kind/blocking``.
    public init(label: String, threads: Int? = nil, kind: Kind = .cpu) {
        require(
            (threads ?? 1) >= 1,
            "WorkerPool(label: \"\(label)\", threads: \(threads ?? 0)): the thread count must be ≥ 1"
        )
        require(
            (threads ?? 1) <= PoolCore.threadLimit,
            "WorkerPool(label: \"\(label)\", threads: \(threads ?? 0)): the thread count must be ≤ "
                + "\(PoolCore.threadLimit), the most threads a pool may have"
        )
        let count = threads ?? (kind == .cpu ? nil : WorkerPool.defaultBlockingThreadCount)
        poolCore = PoolCore(label: label, threads: count, blocking: kind == .blocking)
    }

    init(poolCore: PoolCore) {
        self.poolCore = poolCore
    }

    /// The process-wide CPU pool that queues naming no pool run on, sized ``defaultThreadCount``. Never shut down.
    public static let shared = WorkerPool(poolCore: .shared)

    /// The process-wide blocking pool, ``defaultBlockingThreadCount`` threads at most. Never shut down; for another
    /// cap, create a pool of kind ``Kind/blocking``.
    public static let blocking = WorkerPool(poolCore: .sharedBlocking)

    /// Shuts the pool down and waits until it stopped: from now on only the pool's own threads may submit to its
    /// queues (tasks it accepted may still queue follow-up work); every task it accepted runs, then its threads
    /// exit and are joined. Delayed work (``WorkQueue/asyncAfter(delay:execute:)``, ``QueueTimer``) whose
    /// deadline has not passed never runs. Calling it again waits again.
    ///
    /// Work held by a suspended queue or job queue counts as accepted: this call waits for it (use
    /// ``shutdown(timeout:)`` to bound the wait).
    ///
    /// Traps for ``shared`` and ``blocking`` (the process-wide pools are never shut down) and when called from a
    /// thread of this pool (it would wait for itself).
    @available(*, noasync, message: "shutdown() blocks the calling thread; use `await pool.shutdownGracefully()`")
    public func shutdown() {
        _ = stop(deadline: .max, "shutdown()")
    }

    /// Shuts the pool down as ``shutdown()-8p8u6`` does, waiting at most `timeout` for the accepted tasks.
    ///
    /// When the timeout passes first, the tasks not yet started never run (they are released) and threads busy
    /// with a task exit when it returns; the call returns what was left.
    ///
    /// - Parameter timeout: The longest wait for the accepted tasks (zero or negative: none).
    /// - Returns: Whether the shutdown completed, and what it left.
    @available(
        *,
        noasync,
        message: "shutdown(timeout:) blocks the calling thread; use `await pool.shutdownGracefully(timeout: timeout)`"
    )
    @discardableResult
    public func shutdown(timeout: Duration) -> ShutdownResult {
        stop(deadline: monotonicDeadline(after: timeout), "shutdown(timeout:)")
    }

    func stop(deadline: UInt64, _ operation: String) -> ShutdownResult {
        if poolCore.isProcessWide {
            threadingFatal("Threading: WorkerPool '\(label)'.\(operation): the process-wide pools are never shut down")
        }
        if SchedulerThread.current.pointee.worker?.takeUnretainedValue().poolCore === poolCore {
            threadingFatal(
                "Threading: WorkerPool '\(label)'.\(operation) called from a thread of the pool itself, which would "
                    + "wait for its own task to end; call it from another thread"
            )
        }
        let leftover = poolCore.shutdown(deadline: deadline, members: ForkRegistry.poolMembers)
        return ShutdownResult(
            isComplete: leftover.tasksNotRun == 0 && leftover.busyThreads == 0,
            tasksNotRun: leftover.tasksNotRun,
            busyThreads: leftover.busyThreads
        )
    }

    /// Runs `body`, a call that blocks (file or socket I/O, a foreign lock, `sleep`), so that the pool running the
    /// calling task compensates: the task gives its slot up while `body` runs and the pool may start another
    /// thread for pending work (Java's `ForkJoinPool.ManagedBlocker`). On a thread that is not a pool worker it
    /// just runs `body`.
    ///
    /// The library's own waits do this already (`sync`, ``WorkGroup/wait(timeout:)``, ``Semaphore/wait()-7yygf``,
    /// ``ConditionVariable/wait(_:)``, ``Monitor`` waits, ``Job/waitUntilFinished(timeout:)``,
    /// ``JobQueue/waitUntilAllFinished(timeout:)``). A CPU pool compensates up to its ``maxThreads``; long or many
    /// blocking calls belong on a blocking pool.
    ///
    /// - Parameter body: The blocking call.
    /// - Returns: What `body` returned.
    /// - Throws: What `body` threw.
    /// - Complexity: Off a pool thread, one thread-local lookup; on one, two pool lock round trips.
    public static func withBlockingRegion<Result, Failure: Error>(
        _ body: () throws(Failure) -> Result
    ) throws(Failure) -> Result {
        try BlockingHook.around(body)
    }
}
