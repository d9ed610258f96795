// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import CThreading

/// Runs ``Job``s on the engine's shared worker pool once their dependencies ended: the `OperationQueue` of the
/// source documents, named so it never clashes with Foundation's.
///
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
/// - A queue released while it still has jobs keeps itself alive until they ended. (A *suspended* queue with jobs
///   therefore lives until it is resumed; drop it only after ``cancelAll()`` or ``resume()``.)
///
/// Reference semantics; `Sendable` because all mutable state is guarded by the queue's lock.
public final class JobQueue: @unchecked Sendable, CustomStringConvertible {
    /// The queue's name, used in diagnostics.
    public let name: String

    /// The pool lane of jobs whose own ``Job/qos`` is nil.
    public let qos: QoS

    /// `maxConcurrentJobs` meaning "as many as the worker pool runs".
    public static let unlimited = Int.max

    private let lock = EngineLock()
    // Guarded by `lock`.
    private var maxValue: Int
    private var suspended = false
    private var running = 0
    private var members: [ObjectIdentifier: Job] = [:]
    /// Ready jobs per priority (index 0 = veryLow). Entries may be stale (a job that was cancelled, or moved back
    /// to waiting by a new dependency): starting checks the job's state.
    private var ready = [EngineRing<Job>](repeating: EngineRing(), count: Job.Priority.allCases.count)
    /// Keeps the queue alive while it has jobs.
    private var keepAlive: JobQueue?
    /// 1 while the queue has no jobs (a futex word for `waitUntilAllFinished`).
    private let idle = EngineWord.allocate(1)

    /// Creates a queue.
    ///
    /// - Parameters:
    ///   - name: A name for diagnostics.
    ///   - qos: The pool lane of jobs without their own QoS (default ``QoS/default``).
    ///   - maxConcurrentJobs: The most jobs executing at once; 1 for a serial queue. Must be ≥ 1.
    public init(name: String = "JobQueue", qos: QoS = .default, maxConcurrentJobs: Int = JobQueue.unlimited) {
        require(
            maxConcurrentJobs >= 1,
            "JobQueue(name: \"\(name)\", maxConcurrentJobs: \(maxConcurrentJobs)): maxConcurrentJobs must be ≥ 1"
        )
        self.name = name
        self.qos = qos
        self.maxValue = maxConcurrentJobs
    }

    deinit {
        idle.deallocate()
        for index in ready.indices { ready[index].release() }
    }

    /// The queue's name.
    public var description: String { "JobQueue \"\(name)\"" }

    /// The most jobs executing at once (1 = serial). Raising it starts waiting ready jobs at once; lowering it
    /// lets running jobs finish. Setting a value below 1 traps.
    public var maxConcurrentJobs: Int {
        get { lock.withLock { maxValue } }
        set {
            require(newValue >= 1, "\(self).maxConcurrentJobs = \(newValue): must be ≥ 1")
            lock.lock()
            maxValue = newValue
            let starting = startLocked()
            lock.unlock()
            submit(starting)
        }
    }

    /// How many jobs the queue holds: added and not yet ended (waiting, ready or executing).
    public var jobCount: Int { lock.withLock { members.count } }

    /// The jobs the queue holds now, in no particular order.
    public var jobs: [Job] { lock.withLock { Array(members.values) } }

    /// Whether the queue is suspended.
    public var isSuspended: Bool { lock.withLock { suspended } }

    // MARK: Adding

    /// Adds `job`; it starts once its dependencies ended, a slot is free and the queue is not suspended.
    ///
    /// A job cancelled before it is added is not added. Traps when the job already belongs to a queue or already
    /// started: a job runs at most once.
    ///
    /// - Parameter job: The job.
    public func addJob(_ job: Job) {
        lock.lock()
        JobGraph.lock.lock()
        if job.stateValue.isEnded && job.cancelled {
            JobGraph.lock.unlock()
            lock.unlock()
            return
        }
        guard job.owner == nil, job.stateValue == .waiting || job.stateValue == .ready else {
            let why = job.owner.map { "it already belongs to \($0)" } ?? "it is already \(job.stateValue)"
            JobGraph.lock.unlock()
            lock.unlock()
            threadingFatal("\(self).addJob(_:): cannot add \(job) because \(why)")
        }
        job.owner = self
        let isReady = job.stateValue == .ready
        let priority = job.priorityValue
        JobGraph.lock.unlock()
        members[ObjectIdentifier(job)] = job
        if members.count == 1 {
            keepAlive = self
            idle.store(0)
        }
        if isReady { ready[priority.index].append(job) }
        let starting = startLocked()
        lock.unlock()
        submit(starting)
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

    /// Adds `jobs` in order and, if asked, waits until all of them ended.
    ///
    /// - Parameters:
    ///   - jobs: The jobs (each as in ``addJob(_:)``).
    ///   - waitUntilFinished: Whether to return only after every one of them ended (without a deadline: use
    ///     ``Job/waitUntilFinished(timeout:)`` or ``waitUntilAllFinished(timeout:)`` for one).
    public func addJobs(_ jobs: [Job], waitUntilFinished: Bool) {
        for job in jobs { addJob(job) }
        if waitUntilFinished {
            for job in jobs { _ = job.waitUntilFinished(timeout: nil) }
        }
    }

    // MARK: Control

    /// Stops jobs from starting; running jobs continue. Suspending a suspended queue changes nothing.
    public func suspend() {
        lock.withLock { suspended = true }
    }

    /// Lets jobs start again (in priority order). Resuming a queue that is not suspended changes nothing.
    public func resume() {
        lock.lock()
        suspended = false
        let starting = startLocked()
        lock.unlock()
        submit(starting)
    }

    /// Cancels every job of the queue (see ``Job/cancel()``): jobs that have not started end at once, running
    /// jobs see ``Job/isCancelled``.
    public func cancelAll() {
        let snapshot = jobs
        for job in snapshot { job.cancel() }
    }

    /// Waits until the queue holds no jobs, or `timeout` passed.
    ///
    /// Jobs added meanwhile are waited for too. On a pool worker, the wait lets the pool start another worker.
    /// Called from one of this queue's own jobs it waits for that job as well, so it can only time out.
    ///
    /// - Parameter timeout: The longest wait; nil waits as long as needed.
    /// - Returns: True when the queue was empty, false on timeout.
    public func waitUntilAllFinished(timeout: Duration? = nil) -> Bool {
        jobWait(idle, timeout: timeout)
    }

    // MARK: Engine hooks (internal)

    /// A job of this queue became ready (its last dependency ended).
    func jobBecameReady(_ job: Job) {
        let priority = JobGraph.lock.withLock { job.priorityValue }
        lock.lock()
        guard members[ObjectIdentifier(job)] != nil else {
            lock.unlock()
            return
        }
        ready[priority.index].append(job)
        let starting = startLocked()
        lock.unlock()
        submit(starting)
    }

    /// A job of this queue ended (ran, or was cancelled before it started).
    func jobEnded(_ job: Job, wasRunning: Bool) {
        lock.lock()
        if wasRunning { running -= 1 }
        members[ObjectIdentifier(job)] = nil
        let starting = startLocked()
        var released: JobQueue?
        let nowIdle = members.isEmpty
        if nowIdle {
            released = keepAlive
            keepAlive = nil
            // Stale ready entries of cancelled jobs would keep them alive; none can start any more.
            for index in ready.indices { _ = ready[index].removeAll() }
            idle.store(1)
        }
        lock.unlock()
        if nowIdle { idle.wake(Int32.max) }
        submit(starting)
        _ = released
    }

    /// Claims ready jobs while slots are free. Queue lock held.
    private func startLocked() -> [(Job, QoS)] {
        var starting: [(Job, QoS)] = []
        guard !suspended else { return starting }
        var index = ready.count - 1
        while running < maxValue && index >= 0 {
            guard let job = ready[index].popFirst() else {
                index -= 1
                continue
            }
            let lane: QoS? = JobGraph.lock.withLock {
                guard job.stateValue == .ready, job.owner === self else { return nil }
                job.stateValue = .executing
                return job.qosValue ?? qos
            }
            if let lane {
                running += 1
                starting.append((job, lane))
            }
        }
        return starting
    }

    private func submit(_ starting: [(Job, QoS)]) {
        for (job, lane) in starting {
            Engine.shared.submit(.job { job.execute() }, lane: lane.rawValue)
        }
    }
}
