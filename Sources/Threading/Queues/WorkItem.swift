// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import CThreading

/// A closure with an identity: it can be cancelled before it starts, waited for, and observed.
///
/// Submit it with ``WorkQueue/async(execute:)-(WorkItem)`` or ``WorkQueue/asyncAfter(deadline:execute:)-(_,WorkItem)``,
/// or run it with ``perform()``. The closure runs at most once. ``cancel()`` before it starts means it never runs:
/// the item counts as finished at once (waiters return, notifications are submitted) and a pending `asyncAfter`
/// timer is removed. Cancelling a running item does not interrupt it; the closure may check ``isCancelled``.
///
/// Reference semantics; `Sendable` because its state is lock-protected and the closure is `@Sendable`.
public final class WorkItem: @unchecked Sendable {
    private enum State {
        case pending
        case running
        case finished
    }

    /// Submission flags (``QueueTaskFlags/barrier`` makes it a barrier on a concurrent queue).
    public let flags: QueueTaskFlags
    let lock = RuntimeLock.make(companionWord: 0)
    // The stored properties below are guarded by `lock`, which is what makes their accesses exclusive: they are
    // not checked again at run time.
    @exclusivity(unchecked) private var body: (@Sendable () -> Void)?
    @exclusivity(unchecked) private var state = State.pending
    /// Tasks suspended in the async `wait()` (see WorkItem+Async.swift).
    @exclusivity(unchecked) var asyncWaiters = AsyncWaitList()
    @exclusivity(unchecked) private var cancelled = false
    @exclusivity(unchecked) private var notifications: [(QueueCore, @Sendable () -> Void)] = []
    @exclusivity(unchecked) private var timer: TimerEntry?
    /// ``ForkRegistry/epoch`` when the item was last submitted to a queue, or nil if it never was.
    @exclusivity(unchecked) private var submittedEpoch: UInt32?
    /// The queue the item was last submitted to (weak: the queue holds the item's closure while it is queued, and
    /// nothing must keep a released queue alive).
    @exclusivity(unchecked) private weak var submittedQueue: QueueCore?
    /// A futex flag (``FutexWord/isFlagSet``), set when the item finished: what ``wait(timeout:)`` sleeps on. It is
    /// `lock`'s companion word (``RuntimeLock/make(companionWord:)``).
    let done: FutexWord
    /// Where the item was created, for the stall report, the snapshot and the dump.
    let origin: UnitOrigin

    /// Creates an item.
    ///
    /// While it runs on a pool's thread, the stall report, ``RuntimeSnapshot`` and ``RuntimeDump`` name it by
    /// where it was created (`serial queue 'db' (WorkItem created at Handlers/Search.swift:42)`), from `fileID` and
    /// `line`: leave them to their defaults.
    ///
    /// - Parameters:
    ///   - flags: Submission flags.
    ///   - fileID: The caller's `#fileID` (the default), naming the item in reports.
    ///   - line: The caller's `#line` (the default).
    ///   - body: The closure.
    public init(
        flags: QueueTaskFlags = [],
        fileID: StaticString = #fileID,
        line: UInt = #line,
        execute body: @escaping @Sendable () -> Void
    ) {
        self.flags = flags
        self.body = body
        self.origin = UnitOrigin(.workItem, fileID: fileID, line: line)
        done = FutexWord(at: lock.companionWord!)
    }

    /// Runs the closure on the calling thread, unless it was cancelled or already ran.
    public func perform() {
        lock.lock()
        guard state == .pending, !cancelled, let work = body else {
            lock.unlock()
            return
        }
        state = .running
        body = nil
        lock.unlock()
        // A pool worker publishes where the item came from while it runs (the reports read it).
        let worker = SchedulerThread.current.pointee.worker
        worker?._withUnsafeGuaranteedRef { $0.activity.publish(origin) }
        SchedulerThread.running(.item(Unmanaged.passUnretained(self)), work)
        worker?._withUnsafeGuaranteedRef { $0.activity.publish(.none) }
        finish()
    }

    /// Cancels the item: if it has not started, it never runs and counts as finished now.
    public func cancel() {
        lock.lock()
        cancelled = true
        let finishNow = state == .pending
        let timer = self.timer
        if finishNow { body = nil }
        lock.unlock()
        timer?.cancelled.store(true, ordering: .releasing)
        if finishNow { finish() }
    }

    /// Whether ``cancel()`` was called.
    public var isCancelled: Bool {
        lock.withLock { cancelled }
    }

    // The noasync advice below is one string literal (an attribute takes no concatenation).
    // swift-format-ignore
    /// Waits until the item finished (ran, or was cancelled before starting), or `timeout` passed.
    ///
    /// Called without a timeout from the item's own closure (on the thread running it: directly, or inside a `sync`,
    /// a group task or a job the closure runs), the wait could never end, because the item finishes only when its
    /// closure returns (cancelling a running item does not finish it): the program stops with a message naming the
    /// item and the thread (`Threading: deadlock: WorkItem 0x….wait() …`) instead of hanging. So does a wait for an
    /// item that has not started and waits in a queue the calling thread holds exclusively (a serial queue, or a
    /// barrier, whose task is the caller: directly or through the queue's targets), since the item cannot start
    /// before the caller's task returns. With a timeout it returns false when the timeout passed.
    ///
    /// In a `fork()`ed child, an item the parent submitted and that had not finished never runs from its queue (see
    /// <doc:Misuse>): a wait with a timeout returns false, and a wait without one traps with a message saying so.
    ///
    /// - Parameter timeout: The longest wait; nil waits as long as needed.
    /// - Returns: True when finished, false on timeout.
    @available(*, noasync, message: "wait(timeout:) blocks the thread; use `try await item.wait()` (top-level code, where the blocking overload wins: `try await { try await item.wait() }()`)")
    public func wait(timeout: Duration? = nil) -> Bool {
        if done.isFlagSet { return true }
        if timeout == nil {
            let context = SchedulerThread.current
            if context.isRunning(self) {
                diagnoseWaitDeadlock(
                    "\(diagnosticName).wait()",
                    reason: "the item finishes only when its closure returns (cancel() does not end a running item)",
                    context
                )
            }
            let queued = lock.withLock { state == .pending && !cancelled ? submittedQueue : nil }
            if let queued, let held = context.exclusiveHold(onPathOf: queued) {
                diagnoseWaitDeadlock(
                    "\(diagnosticName).wait()",
                    reason: "the item waits in queue '\(queued.label)', which cannot start it before this thread's "
                        + "task on queue '\(held.label)' returns (it runs one task at a time there)",
                    context
                )
            }
            let epoch = ForkRegistry.epoch.load(ordering: .relaxed)
            let parents = lock.withLock { state != .finished && submittedEpoch.map { $0 != epoch } == true }
            if parents {
                threadingFatal(
                    "WorkItem.wait(): this process is a fork()ed child and the item was submitted by the parent "
                        + "before it forked; the parent's tasks never run in a child, so this wait would never end"
                )
            }
        }
        let deadline = timeout.map { monotonicDeadline(after: $0) } ?? .max
        return WaitRecording.recording(.workItem, on: self, deadline: deadline) { done.blockingWaitUntilFlagSet(deadline: deadline) }
    }

    /// Submits `work` to `queue` when the item finished (at once if it already has).
    ///
    /// Traps, as `async` does, when `queue`'s pool was shut down (see <doc:Pools>). When the pool shuts down
    /// between this call and the item's end, the notification is dropped and counted in the pool's
    /// ``WorkerPoolStatistics/cancelledFirings``, as a timer's firing is.
    ///
    /// - Parameters:
    ///   - queue: Where `work` runs.
    ///   - work: The closure.
    public func notify(queue: any WorkQueue, execute work: @escaping @Sendable () -> Void) {
        let core = queue.queueCore
        guard core.poolCore.requireAccepting("WorkItem.notify(queue:) on queue '\(core.label)'") else { return }
        lock.lock()
        if state == .finished {
            lock.unlock()
            core.enqueueFiring(.task(work))
            return
        }
        notifications.append((core, work))
        lock.unlock()
    }

    /// The notifications registered and not yet fired, and the tasks suspended in the async `wait()`: once it
    /// counts a task's `await wait()`, that task's continuation is installed, so a cancellation from then on resumes
    /// a suspended wait. Read under the item's lock; for tests.
    var registeredNotificationCount: Int { lock.withLock { notifications.count + asyncWaiters.count } }

    /// Whether the item finished. Under `lock`.
    var isFinishedLocked: Bool { state == .finished }

    /// The item's name in diagnostics (it has no label): `WorkItem 0x…`.
    var diagnosticName: String { "WorkItem \(Unmanaged.passUnretained(self).toOpaque())" }

    /// Records a submission to `queue` (for the fork rule of ``wait(timeout:)`` and its deadlock check).
    func markSubmitted(to queue: QueueCore) {
        let epoch = ForkRegistry.epoch.load(ordering: .relaxed)
        lock.withLock {
            submittedEpoch = epoch
            submittedQueue = queue
        }
    }

    func attachTimer(_ entry: TimerEntry) {
        lock.lock()
        timer = entry
        let cancelNow = cancelled
        lock.unlock()
        if cancelNow { entry.cancelled.store(true, ordering: .releasing) }
    }

    private func finish() {
        lock.lock()
        guard state != .finished else {
            lock.unlock()
            return
        }
        state = .finished
        let fired = notifications
        notifications = []
        let tasks = asyncWaiters.takeAll()
        timer = nil
        lock.unlock()
        done.setFlag()
        for (core, work) in fired { core.enqueueFiring(.task(work)) }
        tasks.resumeAll()  // last (see `Job.Ending.deliver`)
    }
}
