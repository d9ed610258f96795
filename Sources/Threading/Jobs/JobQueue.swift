// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import CThreading

/// Runs ``Job``s on the pool's shared worker pool once their dependencies ended, in the manner of
/// Foundation's `OperationQueue` and named so it never clashes with it.
///
/// <!-- sample-context
/// func loadBytes() -> [UInt8] { [] }
/// -->
/// ```swift
/// let queue = JobQueue(name: "images", maxConcurrentJobs: 2)
/// let load = ResultJob<[UInt8]>(name: "load") { _ in loadBytes() }
/// let decode = ResultJob<Int>(name: "decode") { job in try job.input([UInt8].self).count }
/// try decode.addDependency(load)
/// queue.addJobs([decode, load], waitUntilFinished: true)
/// ```
///
/// - At most ``maxConcurrentJobs`` jobs execute at once (1 makes the queue serial; an asynchronous job holds its
///   slot until it finished). Each running job is one unit on the shared worker pool in the lane of its
///   ``Job/qos`` (or the queue's ``qos``): no thread per job and no thread per queue.
/// - Ready jobs start by ``Job/priority`` (veryHigh first), equal priorities in the order they became ready.
/// - ``suspend()`` stops new jobs from starting (running jobs continue); ``resume()`` lets them start again.
/// - ``cancelAll()`` cancels every job of the queue: those that have not started end at once.
/// - A queue released while it still has jobs keeps running them: the jobs hold the queue's internal core, not
///   this handle, and the core lives until its last job ended. Releasing the last handle of a *suspended* queue
///   resumes it, because nobody could call ``resume()`` any more and its jobs would otherwise never run (submitted
///   work is never lost).
///
/// ``Job/queue`` gives back this object while the user holds it; when every handle was released, it makes a new
/// handle on the same core (releasing that one again resumes the queue if it was suspended through it).
///
/// Reference semantics; `Sendable` because all mutable state lives in the core and is guarded by its lock.
public final class JobQueue: @unchecked Sendable, CustomStringConvertible {
    /// The pool side: members, ready rings, suspension, keep-alive.
    let core: JobQueueCore

    /// The queue's name, used in diagnostics.
    public var name: String { core.name }

    /// The pool lane of jobs whose own ``Job/qos`` is nil.
    public var qos: QoS { core.qos }

    /// `maxConcurrentJobs` meaning "as many as the worker pool runs".
    public static let unlimited = Int.max

    /// Creates a queue.
    ///
    /// Traps when `maxConcurrentJobs` is below 1.
    ///
    /// - Parameters:
    ///   - name: A name for diagnostics.
    ///   - qos: The pool lane of jobs without their own QoS (default ``QoS/default``).
    ///   - maxConcurrentJobs: The most jobs executing at once; 1 for a serial queue. Must be ≥ 1.
    ///   - pool: The worker pool the jobs run on (default ``WorkerPool/shared``). Adding jobs after the pool was shut
    ///     down traps (see <doc:Pools>).
    public init(
        name: String = "JobQueue",
        qos: QoS = .default,
        maxConcurrentJobs: Int = JobQueue.unlimited,
        pool: WorkerPool = .shared
    ) {
        require(
            maxConcurrentJobs >= 1,
            "JobQueue(name: \"\(name)\", maxConcurrentJobs: \(maxConcurrentJobs)): maxConcurrentJobs must be ≥ 1"
        )
        core = JobQueueCore(name: name, qos: qos, maxConcurrentJobs: maxConcurrentJobs, poolCore: pool.poolCore)
        core.adopt(self)
    }

    /// A further handle on `core`; the caller counts it (`JobQueueCore.currentHandle()`, under the core's lock).
    init(core: JobQueueCore) {
        self.core = core
    }

    /// Resumes the queue if this was its last handle and it is suspended, so its jobs still run.
    deinit { core.handleReleased() }

    /// The queue's name.
    public var description: String { core.description }

    /// The most jobs executing at once (1 = serial). Raising it starts waiting ready jobs at once; lowering it
    /// lets running jobs finish. Setting a value below 1 traps.
    public var maxConcurrentJobs: Int {
        get { core.maxConcurrentJobs }
        set {
            require(newValue >= 1, "\(self).maxConcurrentJobs = \(newValue): must be ≥ 1")
            core.setMaxConcurrentJobs(newValue)
        }
    }

    /// How many jobs the queue holds: added and not yet ended (waiting, ready or executing).
    ///
    /// A job leaves the count before anything its end wakes runs (its waiters, observers, dependents and completion
    /// handlers, and ``waitUntilAllFinished(timeout:)``), so right after those return it no longer counts.
    public var jobCount: Int { core.jobCount }

    /// The jobs the queue holds now, in no particular order.
    public var jobs: [Job] { core.jobs }

    /// Whether the queue is suspended.
    public var isSuspended: Bool { core.isSuspended }

    // MARK: Adding

    /// Adds `job`; it starts once its dependencies ended, a slot is free and the queue is not suspended.
    ///
    /// A job cancelled before it is added is not added. Traps when the job already belongs to a queue or already
    /// started: a job runs at most once. Traps when the queue's pool was shut down (see ``WorkerPool``), except
    /// on a thread of that pool while it drains; use ``tryAddJob(_:)`` where the call may race with a shutdown.
    ///
    /// - Parameter job: The job.
    public func addJob(_ job: Job) {
        core.add(job)
    }

    /// Adds `job` as ``addJob(_:)`` does unless the queue's pool no longer takes work: the recoverable form for
    /// code that may run while the pool shuts down (a request handler during a graceful shutdown).
    ///
    /// An added job runs (a graceful ``WorkerPool/shutdown()-8p8u6`` runs it) or, when a
    /// ``WorkerPool/shutdown(timeout:)`` gives up first, is counted in its
    /// ``WorkerPool/ShutdownResult/tasksNotRun`` and ends ``Job/State/cancelled`` without running (its waiters,
    /// dependents and completion handlers see that end). Misuse still traps, as in ``addJob(_:)``.
    ///
    /// - Parameter job: The job.
    /// - Returns: True when the job was added; false when the pool was shut down (the job was not added, and it may
    ///   be added to another queue).
    public func tryAddJob(_ job: Job) -> Bool {
        core.tryAdd([job], operation: "tryAddJob(_:)")
    }

    /// Adds a job that runs `body` and returns it.
    ///
    /// - Parameters:
    ///   - name: A name for diagnostics; nil gives `job-N`.
    ///   - priority: Its priority among the queue's ready jobs.
    ///   - qos: Its pool lane; nil uses the queue's.
    ///   - body: The work.
    /// - Returns: The new job (to cancel it, wait for it, or make other jobs depend on it).
    @discardableResult
    public func addJob(
        name: String? = nil,
        priority: Job.Priority = .normal,
        qos: QoS? = nil,
        _ body: @escaping @Sendable (Job) throws -> Void
    ) -> Job {
        let job = Job(name: name, priority: priority, qos: qos, body)
        addJob(job)
        return job
    }

    /// Adds `jobs` at once and, if asked, waits until all of them ended.
    ///
    /// The batch is added atomically: none of its jobs starts before all of them are in the queue, so among those
    /// that are ready, priority decides the order, as with `OperationQueue.addOperations(_:waitUntilFinished:)`.
    /// Adding four ready jobs of priorities normal, low, very high and very low to a queue of width 1 runs the very
    /// high one first and the very low one last. (Adding them one by one with ``addJob(_:)`` starts the first at
    /// once, before the others arrive.) Jobs cancelled before the call are skipped, as in ``addJob(_:)``.
    ///
    /// - Parameters:
    ///   - jobs: The jobs (each as in ``addJob(_:)``; traps, naming the job, when one belongs to a queue or already
    ///     started).
    ///   - waitUntilFinished: Whether to return only after every one of them ended (without a deadline: use
    ///     ``Job/waitUntilFinished(timeout:)`` or ``waitUntilAllFinished(timeout:)`` for one). Each job is waited for
    ///     as by ``Job/waitUntilFinished(timeout:)``, so a wait that could never end (from a job of a serial queue
    ///     adding to its own queue) stops the program with a message instead of hanging.
    public func addJobs(_ jobs: [Job], waitUntilFinished: Bool) {
        core.add(jobs)
        if waitUntilFinished {
            for job in jobs { _ = job.waitUntilFinished(timeout: nil) }
        }
    }

    // MARK: Control

    /// Stops jobs from starting; running jobs continue. Suspending a suspended queue changes nothing.
    ///
    /// Releasing the queue's last handle while it is suspended resumes it: its jobs still run.
    public func suspend() {
        core.suspend()
    }

    /// Lets jobs start again (in priority order). Resuming a queue that is not suspended changes nothing.
    public func resume() {
        core.resume()
    }

    /// Cancels every job of the queue (see ``Job/cancel()``): jobs that have not started end at once, running
    /// jobs see ``Job/isCancelled``.
    public func cancelAll() {
        let snapshot = jobs
        for job in snapshot { job.cancel() }
    }

    // The noasync advice below is one string literal (an attribute takes no concatenation).
    // swift-format-ignore
    /// Waits until the queue holds no jobs, or `timeout` passed.
    ///
    /// Jobs added meanwhile are waited for too. When it returns true, ``jobCount`` counts no ended job: a queue
    /// counts a job out before anyone waiting for it is woken. On a pool worker, the wait lets the pool start
    /// another worker. Called from one of this queue's own jobs it waits for that job as well: with a timeout it can
    /// only time out; without one it could never return, and the program stops with a message naming the queue, the
    /// job and the thread (`Threading: deadlock: JobQueue "…".waitUntilAllFinished() …`) instead of hanging. The same
    /// holds for every other wait ``Job/waitUntilFinished(timeout:)`` stops, and a job the queue needs that belongs to
    /// no queue and has not started, or that waits on a suspended queue, gets the same `stalled wait` line.
    ///
    /// - Parameter timeout: The longest wait; nil waits as long as needed.
    /// - Returns: True when the queue was empty, false on timeout.
    @available(
        *,
        noasync,
        message: "waitUntilAllFinished(timeout:) blocks the thread; await each job: `for job in jobQueue.jobs { try await job.waitUntilFinished() }` (top-level code, where the blocking overload wins: `try await { for job in jobQueue.jobs { try await job.waitUntilFinished() } }()`)"
    )
    public func waitUntilAllFinished(timeout: Duration? = nil) -> Bool {
        JobWait.wait(core.idle, timeout: timeout, wait: "\(self).waitUntilAllFinished()", on: core, queue: core) {
            core.jobs
        }
    }
}
