// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

/// A worker pool is a task executor (SE-0417): tasks that prefer it run their nonisolated code on its threads.
///
/// <!-- sample-context
/// func readWholeFile(_ path: String) -> [UInt8] { [] }
/// let path = "/etc/hostname"
/// -->
/// ```swift
/// let bytes = await withTaskExecutorPreference(WorkerPool.blocking) {
///     readWholeFile(path)  // blocking I/O: a blocking-pool thread, never a cooperative one
/// }
/// ```
///
/// `Task(executorPreference: pool) { … }` starts a task there; `withTaskExecutorPreference(pool) { … }` moves the
/// rest of a scope there. Actor-isolated code still runs on its actor's executor. A job of a preferring task is
/// one pool task in the lane that matches its priority; a CPU pool compensates for jobs that block in the waits it
/// sees, as for any task (see ``WorkerPool``), and ``WorkerPool/blocking`` is the home of blocking calls.
extension WorkerPool: TaskExecutor {
    /// Runs `job` as a task of this pool.
    ///
    /// Called by the Swift runtime. Once the pool was shut down, the jobs of tasks that still prefer it (a task that
    /// awaited the shutdown from inside `withTaskExecutorPreference(pool)`, a task that outlived its pool) run on
    /// the runtime's global concurrent executor instead: a task is never dropped, and its preference cannot be
    /// honoured any more.
    ///
    /// - Parameter job: The job.
    /// - Complexity: O(1): one pool submission (a lock round trip, a wake-up when a thread is idle).
    public func enqueue(_ job: consuming ExecutorJob) {
        if poolCore.isShutDown {
            globalConcurrentExecutor.enqueue(job)
            return
        }
        let lane = QoS(jobPriority: job.priority).rawValue
        submitAccepted(UnownedJob(job), lane: lane)
    }

    /// Submits a job that passed the shut-down check. The pool may have stopped since (a shutdown that finished in
    /// between): then it refuses the unit, and the job runs on the global concurrent executor instead of never.
    ///
    /// A unit the pool takes but drops unrun (a shutdown that stopped it right after this submission closed its run
    /// queues) releases its ``PreferringJob``, which then hands the job to the global concurrent executor: the task
    /// is never left suspended.
    func submitAccepted(_ job: UnownedJob, lane: Int) {
        let pending = PreferringJob(job, asUnownedTaskExecutor())
        if !poolCore.trySchedule(.job({ pending.run() }, origin: .task), lane: lane) {
            pending.runElsewhereIfUnrun()
        }
    }

    /// This pool as an unowned task executor.
    ///
    /// - Returns: The unowned executor.
    public func asUnownedTaskExecutor() -> UnownedTaskExecutor {
        UnownedTaskExecutor(ordinary: self)
    }
}

/// A job of a task that prefers a pool, as the pool queues it: run once on the pool, or, if the pool drops it
/// unrun (released without ``run()``), on the global concurrent executor.
final class PreferringJob: @unchecked Sendable {
    private let job: UnownedJob
    private let executor: UnownedTaskExecutor
    /// Set by whoever runs the job (it runs once); only the pool thread that runs the unit, or the deinitializer
    /// after it, touch it, so no atomics are needed.
    private var ran = false

    init(_ job: UnownedJob, _ executor: UnownedTaskExecutor) {
        self.job = job
        self.executor = executor
    }

    func run() {
        ran = true
        job.runSynchronously(on: executor)
    }

    func runElsewhereIfUnrun() {
        guard !ran else { return }
        ran = true
        globalConcurrentExecutor.enqueue(ExecutorJob(job))
    }

    deinit { runElsewhereIfUnrun() }
}

extension QoS {
    /// The lane of a job of `priority`: the task priorities map to the classes of the same name (`userInteractive` and above to ``userInteractive``, `high` to
    /// ``userInitiated``, `medium` to ``default``, `low` to ``utility``, `background` to ``background``).
    init(jobPriority priority: JobPriority) {
        self.init(priorityValue: priority.rawValue)
    }

    /// The lane of a task of `priority` (the same mapping as ``init(jobPriority:)``).
    init(taskPriority priority: TaskPriority) {
        self.init(priorityValue: priority.rawValue)
    }

    private init(priorityValue: UInt8) {
        switch priorityValue {
        case 0x21...: self = .userInteractive
        case 0x19..<0x21: self = .userInitiated
        case 0x15..<0x19: self = .default
        case 0x11..<0x15: self = .utility
        case 0x01..<0x11: self = .background
        default: self = .default
        }
    }
}

extension WorkerPool {
    /// Shuts the pool down as the synchronous ``shutdown()-8p8u6`` does, suspending the task (never blocking its
    /// thread) until every accepted task ran and the pool's threads were joined.
    ///
    /// The async form has a name of its own so that `await pool.shutdownGracefully()` compiles in every context,
    /// top-level code of a `main.swift` included (where an `await` of an overload that shares its name with a
    /// synchronous one picks the synchronous one). The wait runs on a thread of ``blocking``, so a task that itself
    /// ran on this pool may call it (it is suspended, so its thread is free to finish). Not cancellable: a
    /// shutdown, once started, completes.
    ///
    /// Traps for ``shared`` and ``blocking``, as ``shutdown()-8p8u6`` does.
    public func shutdownGracefully() async {
        await awaitOnBlockingPool { self.shutdown() }
    }

    /// Shuts the pool down as the synchronous ``shutdown(timeout:)`` does, suspending the task (never blocking its
    /// thread) for at most about `timeout`: the deadline of a SIGTERM grace period, from async code.
    ///
    /// When the timeout passes first, the tasks not yet started never run (they are released and counted) and
    /// threads busy with a task exit when it returns.
    ///
    /// - Parameter timeout: The longest wait for the accepted tasks (zero or negative: none).
    /// - Returns: Whether the shutdown completed, and what it left.
    @discardableResult
    public func shutdownGracefully(timeout: Duration) async -> ShutdownResult {
        let deadline = monotonicDeadline(after: timeout)
        return await awaitOnBlockingPool { self.stop(deadline: deadline, "shutdownGracefully(timeout:)") }
    }
}
