// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

// How the takeover is done (decided by experiment on Swift 6.3.1, Linux; see the Concurrency article):
// - Swift 6.3's executor factory (`_createExecutors(factory:)`, SPI `ExperimentalCustomExecutors`) replaces the
//   runtime's default executor, the one `swift_task_enqueueGlobal` and `Task.sleep` both use. An `@_spi` import needs
//   no compiler flag, so a consumer builds it as any other source.
// - The runtime's exported hooks (`swift_task_enqueueGlobal_hook` and its delay and deadline siblings, what
//   swift-nio's takeover sets) still see the global enqueues, but on 6.3 `Task.sleep` never reaches the delay or
//   deadline hooks (it asks the default executor, a `SchedulingExecutor`, directly: 0 hook calls for 2 sleeps in
//   the experiment), so delayed jobs would stay on Dispatch's timers; and the hooks' types are C function pointers
//   with the Swift calling convention that Swift can only pun (swift-nio 2.101 sets only the immediate hook, for
//   the compilers it tested).

import CThreading
import Synchronization

#if compiler(>=6.3)
@_spi(ExperimentalCustomExecutors) @_spi(ExperimentalScheduling) import _Concurrency
#endif

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

extension WorkerPool {
    /// Makes ``shared``, the process-wide CPU pool, Swift Concurrency's global concurrent executor: the executor of
    /// every task that prefers no other and of all nonisolated async code.
    ///
    /// Call it once, at the top of `main` (or of your `@main` type's `main()`), before the first task starts:
    ///
    /// ```swift
    /// try WorkerPool.installAsGlobalConcurrentExecutor()
    /// ```
    ///
    /// What changes (see <doc:Concurrency>):
    /// - each job of a task runs as one unit of ``shared``, in the lane of its priority (`high` in
    ///   ``QoS/userInitiated``, `medium` in ``QoS/default``, `low` in ``QoS/utility``, `background` in
    ///   ``QoS/background``; see ``QoS``);
    /// - a task that blocks in a call the pool cannot see (a synchronous driver, `usleep`, a `.wait()` on a future)
    ///   no longer starves the others: the pool's monitor adds a worker for a stalled one within a tick (10 ms), up to
    ///   ``maxThreads``, as it does for queue work; the library's own waits give their slot up at once;
    /// - delayed jobs (`Task.sleep`, timeouts, `ContinuousClock` and `SuspendingClock` deadlines) wait on the library's
    ///   timer thread, then run as above;
    /// - the stall watchdog names a task that runs too long (its priority and for how long), the runtime snapshot and
    ///   dump list the running tasks, and the schedule-delay and run-time histograms of ``shared`` cover every task.
    ///
    /// What does not: the main actor keeps the runtime's main executor (Dispatch's main queue, which ``MainQueue``
    /// drains on the main thread); an actor whose executor is a ``SerialQueue`` runs there; a task with an executor
    /// preference (`withTaskExecutorPreference`, `Task(executorPreference:)`) runs on that executor. A process that
    /// never calls this method runs exactly as before.
    ///
    /// Installing after tasks have run works for the jobs enqueued from then on (a job already queued on the
    /// default executor runs there), which is why the documented place is before the first task.
    ///
    /// The takeover uses Swift 6.3's executor factory (an SPI of the standard library: no compiler flag is needed,
    /// but a later toolchain may change it; this method then throws ``ThreadingError/notSupported`` until the
    /// library follows).
    ///
    /// - Throws: ``ThreadingError/busy`` when the global executor was installed already (by this method, or by other
    ///   code that replaced the default executor or set the runtime's global-enqueue hook, as swift-nio's
    ///   `unsafeTryInstallSingletonPosixEventLoopGroupAsConcurrencyGlobalExecutor()` does); ``ThreadingError/notSupported`` when the compiler or the Concurrency
    ///   runtime lacks the executor factory (Swift before 6.3).
    /// - Complexity: O(1); afterwards each job costs one pool submission (no allocation beyond the run queues' rings).
    public static func installAsGlobalConcurrentExecutor() throws(ThreadingError) {
        #if compiler(>=6.3)
        let operation = "WorkerPool.installAsGlobalConcurrentExecutor()"
        guard dlsym(UnsafeMutableRawPointer(bitPattern: 0), "swift_createExecutors") != nil else {
            throw ThreadingError(
                code: ThreadingError.notSupported.code,
                operation: operation,
                detail: "this Swift Concurrency runtime has no executor factory (swift_createExecutors)"
            )
        }
        let claimed = GlobalPoolExecutor.installed.compareExchange(expected: false, desired: true, ordering: .acquiring)
        guard claimed.exchanged else {
            throw ThreadingError(
                code: ThreadingError.busy.code,
                operation: operation,
                detail: "WorkerPool.shared is Swift Concurrency's global executor already"
            )
        }
        // A takeover through the runtime's hook (swift-nio's) would get the immediate jobs before any executor.
        if let hook = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "swift_task_enqueueGlobal_hook"),
            hook.load(as: UnsafeRawPointer?.self) != nil
        {
            GlobalPoolExecutor.installed.store(false, ordering: .releasing)
            throw ThreadingError(
                code: ThreadingError.busy.code,
                operation: operation,
                detail: "another takeover set swift_task_enqueueGlobal_hook (swift-nio's?) already"
            )
        }
        guard Task.defaultExecutor === PlatformExecutorFactory.defaultExecutor else {
            GlobalPoolExecutor.installed.store(false, ordering: .releasing)
            throw ThreadingError(
                code: ThreadingError.busy.code,
                operation: operation,
                detail: "another executor (\(type(of: Task.defaultExecutor))) replaced the default executor already"
            )
        }
        _createExecutors(factory: GlobalExecutorFactory.self)
        #else
        throw ThreadingError(
            code: ThreadingError.notSupported.code,
            operation: "WorkerPool.installAsGlobalConcurrentExecutor()",
            detail: "taking over the global executor needs Swift 6.3's executor factory"
        )
        #endif
    }

    /// Whether ``installAsGlobalConcurrentExecutor()`` made ``shared`` the global concurrent executor.
    public static var isGlobalConcurrentExecutor: Bool {
        GlobalPoolExecutor.installed.load(ordering: .acquiring)
    }
}

#if compiler(>=6.3)
/// The executors the runtime takes from ``WorkerPool/installAsGlobalConcurrentExecutor()``: the main executor it
/// already has, and ``GlobalPoolExecutor``.
enum GlobalExecutorFactory: ExecutorFactory {
    static var mainExecutor: any MainExecutor { MainActor.executor }
    static var defaultExecutor: any TaskExecutor { GlobalPoolExecutor.shared }
}
#endif

/// Swift Concurrency's global concurrent executor once ``WorkerPool/installAsGlobalConcurrentExecutor()`` ran: the
/// jobs go to ``PoolCore/shared`` as ``PoolUnit/globalTask(_:origin:)`` units, delayed jobs to the timer thread.
///
/// An object of its own, not ``WorkerPool/shared``: a task that prefers ``WorkerPool/shared`` as its task executor
/// keeps that meaning (its jobs carry the preference), and the runtime's identity checks of the default executor
/// compare with this one.
///
/// `@unchecked Sendable`: immutable; the pool synchronises itself.
final class GlobalPoolExecutor: TaskExecutor, @unchecked Sendable {
    static let shared = GlobalPoolExecutor()

    /// Whether the takeover was installed (once per process; never undone).
    static let installed = Atomic<Bool>(false)

    /// Delayed jobs handed to the timer thread so far (`Task.sleep`, deadlines): the tests check that delays reach
    /// the library's timer.
    static let delayedJobs = Atomic<UInt64>(0)

    /// The executor jobs run on, made once.
    static let unowned = UnownedTaskExecutor(ordinary: shared)

    let poolCore = PoolCore.shared

    /// Queues `job` on the shared pool in the lane of its priority.
    func enqueue(_ job: consuming ExecutorJob) {
        let priority = job.priority
        schedule(UnownedJob(job), priority: priority.rawValue)
    }

    @inline(__always)
    func schedule(_ job: UnownedJob, priority: UInt8) {
        let lane = QoS(jobPriority: JobPriority(rawValue: priority)).rawValue
        // The shared pool is never shut down, so it takes every unit (a forked child's pools are new and empty).
        poolCore.schedule(.globalTask(job, origin: .globalTask(priority: priority)), lane: lane)
    }

    /// Runs a job taken from the pool (a worker thread).
    @inline(__always)
    static func run(_ job: UnownedJob) {
        job.runSynchronously(on: unowned)
    }

    func asUnownedTaskExecutor() -> UnownedTaskExecutor { GlobalPoolExecutor.unowned }

    /// Queues `job` on the pool once `nanoseconds` passed, from the timer thread.
    func schedule(_ job: UnownedJob, afterNanoseconds nanoseconds: UInt64) {
        if nanoseconds == 0 {
            schedule(job, priority: ExecutorJob(job).priority.rawValue)
            return
        }
        GlobalPoolExecutor.delayedJobs.wrappingAdd(1, ordering: .relaxed)
        let now = cthr_clock_now_ns()
        let (deadline, overflow) = now.addingReportingOverflow(nanoseconds)
        let entry = TimerEntry(deadline: overflow ? .max : deadline, interval: 0) {
            GlobalPoolExecutor.shared.schedule(job, priority: ExecutorJob(job).priority.rawValue)
        }
        TimerThread.shared.schedule(entry)
    }
}

#if compiler(>=6.3)
/// Delayed jobs: `Task.sleep` and the clocks' deadlines reach the default executor here.
extension GlobalPoolExecutor: SchedulingExecutor {
    func enqueue<C: Clock>(
        _ job: consuming ExecutorJob,
        after delay: C.Duration,
        tolerance: C.Duration?,
        clock: C
    ) {
        guard let duration = delay as? Duration else {
            return enqueue(job, at: clock.now.advanced(by: delay), tolerance: tolerance, clock: clock)
        }
        schedule(UnownedJob(job), afterNanoseconds: monotonicNanoseconds(duration))
    }

    func enqueue<C: Clock>(
        _ job: consuming ExecutorJob,
        at instant: C.Instant,
        tolerance: C.Duration?,
        clock: C
    ) {
        guard let duration = clock.now.duration(to: instant) as? Duration else {
            // A clock whose durations are not `Duration`: its deadline is left to the runtime's own executor, and
            // the job runs there.
            let fallback = PlatformExecutorFactory.defaultExecutor as? any SchedulingExecutor
            if let fallback {
                fallback.enqueue(job, at: instant, tolerance: tolerance, clock: clock)
            } else {
                enqueue(job)
            }
            return
        }
        schedule(UnownedJob(job), afterNanoseconds: monotonicNanoseconds(duration))
    }
}
#endif
