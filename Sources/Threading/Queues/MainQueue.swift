// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import CThreading

/// The serial queue whose tasks run on the process's main thread.
///
/// Linux has no run loop that drains it for you: the main thread runs main-queue tasks while it is inside
/// ``run()`` (a server's last call, never returns), ``drain(until:)`` or ``runUntilIdle()`` (tools and tests).
/// Inside them it also runs Dispatch's main queue, where the Swift runtime sends `@MainActor` jobs on Linux: an
/// `@MainActor` function called from a task completes on the main thread while it sits in ``run()`` (see
/// <doc:Concurrency>).
///
/// "Main thread" and "main queue" are different questions: ``PosixThread/isMainThread`` asks which thread runs;
/// `MainQueue.shared.isCurrent` asks which queue the running code was submitted to. Inside `serial.sync { }` called
/// on the main thread the first is true and the second false, because `sync` runs the closure on the calling thread
/// on behalf of `serial`. To mark the main queue the way RxSwift's `DispatchQueue.isMain` does, set a ``QueueKey`` on
/// it and read ``QueueKey/current``: that lookup also follows target queues.
///
/// `sync` from another thread hands the closure to the main thread and waits; `sync` on the main thread outside a
/// main-queue task runs the earlier main-queue tasks, then the closure, inline; `sync` from inside a main-queue
/// task is a deadlock and stops the program with a diagnostic.
///
/// A singleton reference type; `Sendable` because the pool core synchronises itself.
public final class MainQueue: WorkQueue {
    /// The main queue.
    public static let shared = MainQueue()

    private init() {}

    var core: SerialCore { MainLoop.shared.core }

    /// The queue's label, `threading.main`.
    public var label: String { core.label }

    /// The pool's handle on this queue (see ``WorkQueue/queueHandle``).
    public var queueHandle: QueueHandle { QueueHandle(core) }

    /// The queue's quality of service, ``QoS/userInteractive``.
    public var qos: QoS { core.qos }

    /// Submits `work` to run on the main thread, in order.
    ///
    /// - Parameter work: The closure; it is released after it ran.
    public func async(execute work: @escaping @Sendable () -> Void) {
        core.enqueue(.task(work))
    }

    /// Runs `work` on the main thread and returns its result (see the type's discussion for the three cases).
    ///
    /// - Parameter work: The closure.
    /// - Returns: What `work` returned.
    /// - Throws: What `work` threw.
    @available(*, noasync, message: "sync blocks the thread; use `try await MainQueue.shared.run { }`")
    public func sync<Result, Failure: Error>(execute work: () throws(Failure) -> Result) throws(Failure) -> Result {
        var result: Result?
        var failure: Failure?
        let context = SchedulerThread.current
        core.syncFast(context, eligible: context.pointee.isMainThread) {
            do throws(Failure) { result = try work() } catch { failure = error }
        }
        if let failure { throw failure }
        return result!
    }

    /// Runs main-queue tasks on the calling (main) thread forever.
    ///
    /// Traps when called on another thread. Called from inside the main queue (a main-queue task, or a `sync` onto
    /// it) it could never run a task, since the main queue runs one task at a time and the caller holds it: the
    /// program stops with a message naming the queue and the thread (`Threading: deadlock: MainQueue.run() …`)
    /// instead of hanging. (``drain(until:)`` and ``runUntilIdle()`` called there return without running a task.)
    public static func run() -> Never {
        let context = mainContext("MainQueue.run()")
        if context.frame(holding: MainLoop.shared.core) != nil {
            diagnoseWaitDeadlock(
                "MainQueue.run()",
                reason: "this thread is already executing the main queue '\(MainLoop.shared.core.label)' (a main-queue "
                    + "task or a sync onto it), which runs one task at a time, so run() could never run a task",
                context
            )
        }
        DispatchMainBridge.start()
        while true {
            MainLoop.shared.drainOnce(context, wait: true, deadline: .max)
        }
    }

    /// Runs main-queue tasks on the calling (main) thread until `deadline`, sleeping while there are none.
    ///
    /// Traps when called on another thread.
    ///
    /// - Parameter deadline: When to return (a task running at that moment finishes first).
    /// - Returns: Whether at least one batch of tasks ran.
    @discardableResult
    public static func drain(until deadline: ContinuousClock.Instant) -> Bool {
        let context = mainContext("MainQueue.drain(until:)")
        DispatchMainBridge.start()
        let end = monotonicDeadline(deadline)
        var ran = false
        while cthr_clock_now_ns() < end {
            if MainLoop.shared.drainOnce(context, wait: true, deadline: end) { ran = true }
        }
        return ran
    }

    /// Runs main-queue tasks on the calling (main) thread until none is pending, then returns.
    ///
    /// Traps when called on another thread.
    ///
    /// - Returns: Whether at least one batch of tasks ran.
    @discardableResult
    public static func runUntilIdle() -> Bool {
        let context = mainContext("MainQueue.runUntilIdle()")
        DispatchMainBridge.start()
        DispatchMainBridge.drainNow()
        var ran = false
        while MainLoop.shared.drainOnce(context, wait: false, deadline: 0) { ran = true }
        return ran
    }

    private static func mainContext(_ call: String) -> ThreadContext {
        let context = SchedulerThread.current
        require(context.pointee.isMainThread, "\(call) must be called on the main thread")
        return context
    }
}
