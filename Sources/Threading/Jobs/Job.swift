// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import CThreading

/// A unit of work with a life cycle, dependencies, cooperative cancellation and completion handlers, in the
/// manner of Foundation's `Operation` and named so it never clashes with it.
///
/// Make one from a closure:
///
/// ```swift
/// let job = Job(name: "log") { job in
///     if job.isCancelled { return }
///     print("running")
/// }
/// ```
///
/// The class is not open: a subclass would inherit the job's `Sendable` promise without the compiler checking the
/// properties it adds. What a job's work needs goes into its closure, whose captures the compiler checks; for a
/// typed output use ``ResultJob``, for work that ends later ``AsyncJob``.
///
/// Life cycle (``State``): a job is ``State/waiting`` while one of its dependencies has not ended, then
/// ``State/ready``; a ``JobQueue`` (or ``start()``) moves it to ``State/executing`` and runs its work once; it
/// ends ``State/finished`` (the body returned), ``State/failed`` (the body threw: ``error``) or
/// ``State/cancelled``. A job cancelled before it starts ends at once and never runs; a job cancelled while running
/// keeps running (cancellation is cooperative: the body checks ``isCancelled``) and ends ``State/cancelled`` when
/// its body returns (or throws `CancellationError`). Every end wakes ``waitUntilFinished(timeout:)``, runs the
/// completion handlers and lets the dependents go: a dependent runs whether its dependencies finished, failed or
/// were cancelled, and reads their outcome (``ResultJob/result``, ``input(_:)``).
///
/// Dependencies (``addDependency(_:)``) may cross queues. An edge that would close a cycle is refused when it is
/// added, with ``ThreadingError/deadlock``: Foundation accepts `a.addDependency(b); b.addDependency(a)` and both
/// operations then wait forever.
///
/// For a body that finishes later (a callback, another queue), use ``AsyncJob`` or the asynchronous
/// ``ResultJob``.
///
/// A reference type and `Sendable`: all mutable state is guarded by one internal lock and only `@Sendable`
/// closures are stored.
public class Job: @unchecked Sendable, CustomStringConvertible {
    /// The job's name, used in diagnostics (such as a refused cycle) and by ``description``: the one it was made
    /// with, or `job-N`.
    public var name: String { givenName ?? "job-\(number)" }

    /// The name the job was made with, if any.
    private let givenName: String?
    /// The job's number in the process (from 1), which names a job made without a name (formatted only when the
    /// name is read: making a job formats no string).
    private let number: Int

    /// Whether the job ends only when its body says so (``AsyncJob``, asynchronous ``ResultJob``).
    let isAsynchronous: Bool

    // Guarded by `JobGraph.lock`, which is what makes their accesses exclusive: they are not checked again at run
    // time.
    @exclusivity(unchecked) var stateValue: State = .ready
    @exclusivity(unchecked) var cancelled = false
    @exclusivity(unchecked) var failure: (any Error)?
    @exclusivity(unchecked) var dependencyList: [Job] = []
    @exclusivity(unchecked) var dependentList: [WeakJob] = []
    @exclusivity(unchecked) var unfinishedDependencies = 0
    /// The core of the queue the job was added to, until it ended (jobs never hold the public handle).
    @exclusivity(unchecked) var owner: JobQueueCore?
    @exclusivity(unchecked) var completionHandlers: [@Sendable (Job) -> Void] = []
    /// Tasks suspended in the async `waitUntilFinished()` (see Job+Async.swift).
    @exclusivity(unchecked) final var asyncWaiters = AsyncWaitList()
    @exclusivity(unchecked) var stateObservers: [@Sendable (Job, State) -> Void] = []
    @exclusivity(unchecked) var priorityValue: Priority
    /// Set in a forked child for a job its parent had added to a queue and that had not ended: it never runs here.
    @exclusivity(unchecked) var abandonedByFork = false
    @exclusivity(unchecked) var qosValue: QoS?
    /// The job's index among its queue's members while it is one (guarded by that queue's lock, not this one; see
    /// `JobQueueCore`).
    @exclusivity(unchecked) var memberIndex = 0
    let body: (@Sendable (Job) throws -> Void)?

    /// A futex flag (``FutexWord/isFlagSet``), set when the job ended: what ``waitUntilFinished(timeout:)`` sleeps on.
    let done = FutexWord.allocate()

    /// Creates a job that does nothing when it runs: a join point that dependents wait on.
    ///
    /// - Parameters:
    ///   - name: A name for diagnostics; nil gives `job-N`.
    ///   - priority: Its priority among the ready jobs of its queue.
    ///   - qos: The pool lane it runs in; nil uses its queue's.
    public init(name: String? = nil, priority: Priority = .normal, qos: QoS? = nil) {
        self.givenName = name
        self.number = name == nil ? Job.nextNumber() : 0
        self.priorityValue = priority
        self.qosValue = qos
        self.body = nil
        self.isAsynchronous = false
    }

    /// Creates a job that runs `body`.
    ///
    /// - Parameters:
    ///   - name: A name for diagnostics; nil gives `job-N`.
    ///   - priority: Its priority among the ready jobs of its queue.
    ///   - qos: The pool lane it runs in; nil uses its queue's.
    ///   - body: The work; it receives the job (to check ``isCancelled`` or read ``input(_:)``). An error it
    ///     throws ends the job ``State/failed``.
    public init(
        name: String? = nil,
        priority: Priority = .normal,
        qos: QoS? = nil,
        _ body: @escaping @Sendable (Job) throws -> Void
    ) {
        self.givenName = name
        self.number = name == nil ? Job.nextNumber() : 0
        self.priorityValue = priority
        self.qosValue = qos
        self.body = body
        self.isAsynchronous = false
    }

    /// The designated initializer of the asynchronous subclasses.
    init(name: String?, priority: Priority, qos: QoS?, asynchronous: Bool) {
        self.givenName = name
        self.number = name == nil ? Job.nextNumber() : 0
        self.priorityValue = priority
        self.qosValue = qos
        self.body = nil
        self.isAsynchronous = asynchronous
    }

    private static func nextNumber() -> Int {
        JobGraph.counter.add(1, ordering: .relaxed).newValue
    }

    /// The job's work: the closure given to ``init(name:priority:qos:_:)`` (the library's subclasses override it).
    /// An error thrown here ends the job ``State/failed`` with that ``error``.
    func main() throws {
        try body?(self)
    }

    /// The job's name.
    public var description: String { "Job \"\(name)\"" }

    // MARK: State

    /// The job's state now (it may change as soon as it is read).
    public var state: State { JobGraph.lock.withLock { stateValue } }

    /// Whether the job can start: all its dependencies ended and it has not started.
    public var isReady: Bool { state == .ready }

    /// Whether the job's body is running (for an asynchronous job: until it called `finish`).
    public var isExecuting: Bool { state == .executing }

    /// Whether the job ended: finished, failed or cancelled.
    public var isFinished: Bool { state.isEnded }

    /// Whether ``cancel()`` was called.
    public var isCancelled: Bool { JobGraph.lock.withLock { cancelled } }

    /// The error the body threw, once the job ended ``State/failed``; nil otherwise.
    public var error: (any Error)? { JobGraph.lock.withLock { failure } }

    /// The job's priority among the ready jobs of its queue. Changing it after the job was added to a queue
    /// affects only how it is ordered the next time it becomes ready.
    public var priority: Priority {
        get { JobGraph.lock.withLock { priorityValue } }
        set { JobGraph.lock.withLock { priorityValue = newValue } }
    }

    /// The pool lane the job runs in; nil uses its queue's ``JobQueue/qos``.
    public var qos: QoS? {
        get { JobGraph.lock.withLock { qosValue } }
        set { JobGraph.lock.withLock { qosValue = newValue } }
    }

    /// The queue the job was added to, while it has not ended.
    ///
    /// It is the ``JobQueue`` object the caller added the job to while that object is alive. When every handle of
    /// the queue was released (the queue still runs its jobs), this makes a new handle on the same queue.
    public var queue: JobQueue? {
        let core = JobGraph.lock.withLock { owner }
        // The queue's lock is taken after JobGraph.lock was given back (lock order: queue, then graph).
        return core?.currentHandle()
    }

    // MARK: Cancellation and completion

    /// Asks the job to stop.
    ///
    /// A job that has not started ends ``State/cancelled`` now and never runs; its dependents may start. A running
    /// job only sees ``isCancelled`` become true and ends ``State/cancelled`` when its body returns. Cancelling an
    /// ended job changes nothing.
    public func cancel() {
        JobGraph.lock.lock()
        if stateValue.isEnded || cancelled {
            JobGraph.lock.unlock()
            return
        }
        cancelled = true
        guard stateValue == .waiting || stateValue == .ready else {
            JobGraph.lock.unlock()
            return
        }
        let ending = endLocked(.cancelled, error: nil)
        JobGraph.lock.unlock()
        ending.deliver(self, wasRunning: false)
    }

    /// Calls `handler` once the job ended (finished, failed or cancelled); at once, on the calling thread, if it
    /// already has. Otherwise it runs on the thread that ended the job, after the job's waiters were woken (for a
    /// job that a timed ``WorkerPool/shutdown(timeout:)`` gave up on, the shutdown's thread: a trapping submission
    /// to the stopped pool from there traps, as from any thread outside the pool).
    ///
    /// - Parameter handler: Receives the job (read ``state``, ``error`` or ``ResultJob/result``).
    public func addCompletionHandler(_ handler: @escaping @Sendable (Job) -> Void) {
        JobGraph.lock.lock()
        if stateValue.isEnded {
            JobGraph.lock.unlock()
            handler(self)
            return
        }
        completionHandlers.append(handler)
        JobGraph.lock.unlock()
    }

    /// Calls `observer` with every later state change of the job (waiting, ready, executing, and the end).
    ///
    /// Observers run on the thread that made the change, outside the job's lock, in the order of the changes for
    /// one thread; they are dropped when the job ends.
    ///
    /// - Parameter observer: Receives the job and its new state.
    public func observeState(_ observer: @escaping @Sendable (Job, State) -> Void) {
        JobGraph.lock.withLock {
            if !stateValue.isEnded { stateObservers.append(observer) }
        }
    }

    // The noasync advice below is one string literal (an attribute takes no concatenation).
    // swift-format-ignore
    /// Waits until the job ended, or `timeout` passed.
    ///
    /// On a worker of the pool the wait lets the pool start another worker, so jobs that wait for jobs do not
    /// starve it.
    ///
    /// In a `fork()`ed child, a job that the parent had added to a queue and that had not ended never runs (see
    /// <doc:Misuse>): a wait with a timeout returns false, and a wait without one traps with a message saying so.
    ///
    /// A wait without a timeout that could never end stops the program with a message naming the jobs, the queue
    /// and the thread (`Threading: deadlock: Job "…".waitUntilFinished() …`) instead of hanging: called from the
    /// job's own body (the job ends only when its body returns); from the body of a job this one depends on,
    /// directly or through others; or from a job of a queue all of whose ``JobQueue/maxConcurrentJobs`` slots are
    /// held by the jobs this thread is running, while this job (or one it depends on) waits for a slot there, such as
    /// a job of a serial queue waiting for a job it added to the same queue. Only another thread cancelling the job
    /// or raising `maxConcurrentJobs` could end such a wait; a program that counts on that waits with a timeout. An
    /// asynchronous job (``AsyncJob``) can be finished by another thread while its body runs, so its body may wait.
    ///
    /// A wait for a job that needs a job which belongs to no queue and has not started (a dependency never added)
    /// cannot end until some thread adds, starts or cancels that job; one that needs a job of a suspended queue, until
    /// a thread resumes that queue. Neither is provably a deadlock, so neither is stopped: after waiting a second the
    /// thread prints `Threading: stalled wait: …` once on stderr, naming the jobs, the queue and itself, and waits on.
    ///
    /// - Parameter timeout: The longest wait; nil waits as long as needed.
    /// - Returns: True when the job ended, false on timeout.
    @available(
        *,
        noasync,
        message: "waitUntilFinished(timeout:) blocks the thread; use `try await job.waitUntilFinished()` (top-level code, where the blocking overload wins: `try await { try await job.waitUntilFinished() }()`)"
    )
    public func waitUntilFinished(timeout: Duration? = nil) -> Bool {
        if timeout == nil && !done.isFlagSet && JobGraph.lock.withLock({ abandonedByFork && !stateValue.isEnded }) {
            threadingFatal(
                "\(self).waitUntilFinished(): this process is a fork()ed child and the job belonged to a queue of the "
                    + "parent when it forked; the parent's jobs never run in a child, so this wait would never end"
            )
        }
        return JobWait.wait(done, timeout: timeout, wait: "\(self).waitUntilFinished()", on: self) { [self] }
    }

    /// Runs a ready job that belongs to no queue on the calling thread, and returns when its body returned (an
    /// asynchronous job may still be executing then).
    ///
    /// A cancelled job is not run. Traps when the job is waiting for dependencies, belongs to a queue, or already
    /// started: running it anyway would break the promise that it runs once, after its dependencies.
    public func start() {
        JobGraph.lock.lock()
        if stateValue.isEnded && cancelled {
            JobGraph.lock.unlock()
            return
        }
        guard stateValue == .ready, owner == nil else {
            let why = owner != nil ? "it belongs to \(owner!)" : "its state is \(stateValue)"
            JobGraph.lock.unlock()
            threadingFatal("Job.start(): \(self) cannot start because \(why)")
        }
        stateValue = .executing
        let observers = stateObservers
        JobGraph.lock.unlock()
        execute(observers: observers)
    }

    // MARK: Running (internal)

    /// Runs the body of a job claimed for execution (its state is already `executing`), after telling `observers`,
    /// the state observers the claim found under `JobGraph.lock` when it made the job executing (the change they
    /// hear of), so that this takes that lock no more before the body.
    func execute(observers: [@Sendable (Job, State) -> Void]) {
        var thrown: (any Error)?
        if isAsynchronous {
            for observer in observers { observer(self, .executing) }
            do { try main() } catch { thrown = error }
        } else {
            // Recorded as what this thread runs, so a wait for the job from its own body (or an observer) is
            // diagnosed instead of hanging (see `JobWait`).
            SchedulerThread.running(.job(Unmanaged.passUnretained(self))) {
                for observer in observers { observer(self, .executing) }
                do { try main() } catch { thrown = error }
            }
        }
        if !isAsynchronous || thrown != nil {
            end(error: thrown)
        }
    }

    /// Ends an executing job: `finished`, `failed` (with `error`) or `cancelled`.
    ///
    /// - Returns: False when the job had already ended (an asynchronous job finished twice).
    @discardableResult
    func end(error: (any Error)?) -> Bool {
        JobGraph.lock.lock()
        guard stateValue == .executing else {
            JobGraph.lock.unlock()
            return false
        }
        // A cancelled job whose body gave up by throwing `CancellationError` ended cancelled, not failed.
        let gaveUp = cancelled && error is CancellationError
        let final: State = error != nil && !gaveUp ? .failed : (cancelled ? .cancelled : .finished)
        let ending = endLocked(final, error: gaveUp ? nil : error)
        JobGraph.lock.unlock()
        ending.deliver(self, wasRunning: true)
        return true
    }

    /// Ends the job cancelled, never run, once its pool will not run it: `started`, its queue had started it and the
    /// stopped pool dropped its unit (``PoolCore/unitDropped(_:)``); else it was waiting for a slot when the pool
    /// stopped (``JobQueueCore/abandonAtStop()``). A job in any other state (running, ended) is left as it is.
    func endUnrun(started: Bool) {
        JobGraph.lock.lock()
        guard started ? stateValue == .executing : stateValue == .waiting || stateValue == .ready else {
            JobGraph.lock.unlock()
            return
        }
        cancelled = true
        let ending = endLocked(.cancelled, error: nil)
        JobGraph.lock.unlock()
        ending.deliver(self, wasRunning: started)
    }

    /// The work to do after a job ended, collected under the lock and delivered outside it.
    struct Ending {
        var state: State
        var dependents: [WeakJob]
        var handlers: [@Sendable (Job) -> Void]
        var tasks: AsyncWaitList.Taken
        var observers: [@Sendable (Job, State) -> Void]
        var owner: JobQueueCore?

        /// The queue counts the job out first, so whoever the job's end wakes (its waiters, observers, dependents,
        /// a `waitUntilAllFinished`) never sees it in ``JobQueue/jobCount``; the queue starts its next jobs once the
        /// dependents are ready, so they compete by priority for the freed slot.
        func deliver(_ job: Job, wasRunning: Bool) {
            let mayStartMore = owner?.jobEnded(job, wasRunning: wasRunning) ?? false
            job.done.setFlag()
            for observer in observers { observer(job, state) }
            for entry in dependents { entry.job?.dependencyEnded() }
            if mayStartMore { owner?.startAfterJobEnded() }
            for handler in handlers { handler(job) }
            // Last: a resumed task may take this thread's core at once (its wake-up preempts the caller on a busy
            // host), and nothing of the job's end is left to do then.
            tasks.resumeAll()
        }
    }

    /// Moves the job to an end state and takes what must be notified. `JobGraph.lock` held.
    func endLocked(_ final: State, error: (any Error)?) -> Ending {
        stateValue = final
        failure = error
        let ending = Ending(
            state: final,
            dependents: dependentList,
            handlers: completionHandlers,
            tasks: asyncWaiters.takeAll(),
            observers: stateObservers,
            owner: owner.take()  // moved: no retain and release of the core (the slower kind, see JobQueueCore)
        )
        dependentList = []
        completionHandlers = []
        stateObservers = []
        return ending
    }

    /// Called when one of the job's dependencies ended.
    func dependencyEnded() {
        JobGraph.lock.lock()
        unfinishedDependencies -= 1
        guard unfinishedDependencies == 0, stateValue == .waiting else {
            JobGraph.lock.unlock()
            return
        }
        stateValue = .ready
        let queue = owner
        let observers = stateObservers
        JobGraph.lock.unlock()
        for observer in observers { observer(self, .ready) }
        queue?.jobBecameReady(self)
    }
}
