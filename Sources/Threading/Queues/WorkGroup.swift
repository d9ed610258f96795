// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import CThreading
import Synchronization

/// Counts outstanding work so a thread can wait for all of it, or be notified when it is done.
///
/// ``enter()`` adds one, ``leave()`` removes one; when the count returns to zero, waiters wake and the pending
/// ``notify(queue:execute:)`` closures are submitted. The group may then be reused for another round.
///
/// ``wait(timeout:)`` sleeps on a futex; on a pool worker it also tells the pool the worker is blocked, so other
/// work keeps running (the pool grows if needed).
///
/// Reference semantics; `Sendable` because the count is atomic and the notification list is lock-protected.
public final class WorkGroup: @unchecked Sendable {
    /// The outstanding work (the low 31 bits, a futex word) and ``sleeper``. The word is 0 exactly when nothing is
    /// outstanding: the sleeper bit is set only beside a nonzero count, and the `leave()` that reaches zero clears it.
    /// It is `lock`'s companion word (``RuntimeLock/make(companionWord:)``): `leave()` touches both.
    private let count: FutexWord
    /// The count's bits.
    private static let countMask: UInt32 = 0x7FFF_FFFF
    /// Set by a thread about to sleep until the count is zero, so that the `leave()` that reaches zero makes the
    /// wake system call only when one does.
    private static let sleeper: UInt32 = 0x8000_0000
    let lock = RuntimeLock.make(companionWord: 0)
    // The stored properties below are guarded by `lock`, which is what makes their accesses exclusive: they are
    // not checked again at run time.
    /// Guarded by `lock`.
    @exclusivity(unchecked) private var notifications: [(QueueCore, @Sendable () -> Void)] = []
    /// Tasks suspended in the async `wait()` (see WorkGroup+Async.swift). Guarded by `lock`.
    @exclusivity(unchecked) var asyncWaiters = AsyncWaitList()
    /// Guarded by `lock`, with `moreQueued`: the queues that hold tasks of this group (``async(group:execute:)``)
    /// that have not left it yet, and how many each holds, so that a wait can tell when one of them waits behind
    /// the waiting thread's own task. A task leaves this record when it leaves the group (in the same lock hold,
    /// ``leave(queuedOn:)``), not when it starts: a started task is never behind the waiting thread's hold, since a
    /// queue held exclusively runs nothing else meanwhile, and one that the waiting thread itself runs is diagnosed
    /// first (``diagnoseWaitFromOwnTask()``). The first such queue is kept here, without a dictionary (the common
    /// case: a group's tasks go to one queue). Unretained: each of those tasks (``GroupTask``) holds its queue until
    /// it leaves this record.
    @exclusivity(unchecked) private var firstQueued: (core: Unmanaged<QueueCore>, count: Int)?
    /// The other queues, while the first one is taken.
    @exclusivity(unchecked) private var moreQueued: [ObjectIdentifier: QueuedTasks] = [:]

    /// Tasks of the group waiting in one queue (the queue is weak: nothing keeps a queue alive for a diagnosis).
    private struct QueuedTasks {
        weak var core: QueueCore?
        var count: Int
    }
    /// ``ForkRegistry/epoch`` when the count last left zero: a larger epoch now means the outstanding work was
    /// entered by a parent process before a `fork()`.
    private let enteredEpoch = Atomic<UInt32>(0)

    /// Creates an empty group.
    public init() { count = FutexWord(at: lock.companionWord!) }

    /// Counts one more piece of outstanding work.
    public func enter() {
        if count.add(1) & WorkGroup.countMask == 0 {
            enteredEpoch.store(ForkRegistry.epoch.load(ordering: .relaxed), ordering: .relaxed)
        }
    }

    /// Marks one piece of work done. At zero, wakes the waiters and submits the notifications.
    ///
    /// Traps ("WorkGroup.leave() without a matching enter()") when the count is already zero.
    public func leave() { leave(queuedOn: nil) }

    /// ``leave()``; for a task queued on a queue (``GroupTask``, `core` its queue's identity), also its exit from the
    /// record of queued tasks, in the same lock hold.
    func leave(queuedOn core: ObjectIdentifier?) {
        lock.lock()
        if let core { removeQueuedLocked(from: core) }
        // `enter()` adds without the lock: the count goes down by compare-exchange, and at zero the sleeper bit goes
        // with it (the wake below is for the threads that set it).
        var value = count.load()
        while true {
            guard value & WorkGroup.countMask > 0 else {
                lock.unlock()
                threadingFatal("WorkGroup.leave() without a matching enter()")
            }
            let next = value & WorkGroup.countMask == 1 ? 0 : value - 1
            let (exchanged, original) = count.compareExchange(value, next)
            if exchanged { break }
            value = original
        }
        guard value & WorkGroup.countMask == 1 else {
            lock.unlock()
            return
        }
        let fired = notifications
        notifications = []
        let tasks = asyncWaiters.takeAll()
        lock.unlock()
        if value & WorkGroup.sleeper != 0 { count.wake(Int32.max) }
        for (core, work) in fired { core.enqueueFiring(.task(work)) }
        tasks.resumeAll()  // last (see `Job.Ending.deliver`)
    }

    /// Whether the count is zero now (a snapshot).
    var isEmpty: Bool { count.load() == 0 }

    // The noasync advice below is one string literal (an attribute takes no concatenation).
    // swift-format-ignore
    /// Waits until the count is zero, or `timeout` passed.
    ///
    /// Called without a timeout from a task of this group (submitted with `async(group:)`, on this thread: directly,
    /// or inside a `sync` or a job that task runs), the wait could never end, because the group counts that task
    /// until it returns: the program stops with a message naming the group, the thread and what it runs
    /// (`Threading: deadlock: WorkGroup 0x….wait() …`) instead of hanging. So does an untimed wait while a task of
    /// the group waits unstarted in a queue the calling thread holds exclusively (a serial queue whose task the
    /// caller is, directly or through the queue's targets, or a barrier): that task cannot start before the caller's
    /// returns. With a timeout it returns false when the timeout passed. A group waited on from a task of another
    /// group is an ordinary wait.
    ///
    /// On the main thread, an untimed wait for a group one of whose tasks is blocked in a `sync` onto the main queue
    /// (or blocks in one during the wait) would never return: the program stops with a message naming both.
    ///
    /// In a `fork()`ed child, work the parent had entered before the fork never leaves (its tasks do not run in the
    /// child; see <doc:Misuse>): a wait with a timeout returns false, and a wait without one traps with a message
    /// saying so instead of hanging.
    ///
    /// - Parameter timeout: The longest wait; nil waits as long as needed.
    /// - Returns: True when the count reached zero, false on timeout.
    @available(*, noasync, message: "wait(timeout:) blocks the thread; use `try await group.wait()` (top-level code, where the blocking overload wins: `try await { try await group.wait() }()`)")
    public func wait(timeout: Duration? = nil) -> Bool {
        if count.load() == 0 { return true }
        if timeout == nil { diagnoseWaitFromOwnTask() }
        if timeout == nil && enteredEpoch.load(ordering: .relaxed) != ForkRegistry.epoch.load(ordering: .relaxed) {
            threadingFatal(
                "WorkGroup.wait(): this process is a fork()ed child and the group still counts \(count.load() & WorkGroup.countMask) "
                    + "piece(s) of work entered by the parent before it forked; the parent's tasks never run in a "
                    + "child, so this wait would never end"
            )
        }
        guard let timeout else { return MainThreadWait.recording(.group(ObjectIdentifier(self))) { waitCount(.max) } }
        return waitCount(monotonicDeadline(after: timeout))
    }

    /// Traps if the calling thread is running a task of this group, or holds (as a serial queue's task, or a barrier)
    /// a queue on whose path a task of this group waits unstarted (see ``wait(timeout:)``). Slow path only.
    private func diagnoseWaitFromOwnTask() {
        let context = SchedulerThread.current
        if context.isRunning(self) {
            diagnoseWaitDeadlock(
                "\(diagnosticName).wait()",
                reason: "the group counts that task until it returns, so it cannot reach zero while the task waits",
                context
            )
        }
        lock.lock()
        var behind: (waiting: QueueCore, held: QueueCore)?
        if let first = firstQueued, let held = context.exclusiveHold(onPathOf: first.core.takeUnretainedValue()) {
            behind = (first.core.takeUnretainedValue(), held)
        }
        for entry in moreQueued.values where behind == nil && entry.count > 0 {
            if let core = entry.core, let held = context.exclusiveHold(onPathOf: core) {
                behind = (core, held)
                break
            }
        }
        lock.unlock()
        guard let behind else { return }
        diagnoseWaitDeadlock(
            "\(diagnosticName).wait()",
            reason: "a task of the group waits in queue '\(behind.waiting.label)', which cannot start it before this "
                + "thread's task on queue '\(behind.held.label)' returns (it runs one task at a time there)",
            context
        )
    }

    /// A task of the group was queued on `core` (``GroupTask``): entered, and recorded until it leaves.
    func enterQueued(on core: QueueCore) {
        enter()
        let unmanaged = Unmanaged.passUnretained(core)
        lock.lock()
        if let first = firstQueued {
            if first.core.toOpaque() == unmanaged.toOpaque() {
                firstQueued = (unmanaged, first.count + 1)
            } else {
                moreQueued[ObjectIdentifier(core), default: QueuedTasks(core: core, count: 0)].count += 1
            }
        } else {
            firstQueued = (unmanaged, 1)
        }
        lock.unlock()
    }

    /// A task queued on `core` left the group (it ran, or was dropped unrun): no longer recorded there. `lock` held.
    private func removeQueuedLocked(from core: ObjectIdentifier) {
        if let first = firstQueued, ObjectIdentifier(first.core.takeUnretainedValue()) == core {
            firstQueued = first.count <= 1 ? nil : (first.core, first.count - 1)
        } else if let entry = moreQueued[core] {
            if entry.count <= 1 { moreQueued[core] = nil } else { moreQueued[core]?.count = entry.count - 1 }
        }
    }

    /// The group's name in diagnostics (it has no label): `WorkGroup 0x…`.
    var diagnosticName: String { "WorkGroup \(Unmanaged.passUnretained(self).toOpaque())" }

    private func waitCount(_ deadline: UInt64) -> Bool {
        BlockingHook.willBlock()
        defer { BlockingHook.didUnblock() }
        return WaitRecording.recording(.group, on: self, deadline: deadline) { waitCountRecorded(deadline) }
    }

    /// ``waitCount(_:)``'s loop, with the wait recorded.
    private func waitCountRecorded(_ deadline: UInt64) -> Bool {
        count.sleepUntil(marking: WorkGroup.sleeper, deadline: deadline) { $0 & WorkGroup.countMask == 0 }
    }

    /// Runs `work`, a task of `group`, with the group recorded as what the calling thread runs (for
    /// ``MainThreadWait`` and the diagnosis of a wait for the group from its own task, see ``RunningEntry``).
    static func running(_ group: WorkGroup, _ work: () -> Void) {
        SchedulerThread.running(.group(Unmanaged.passUnretained(group)), work)
    }

    /// Submits `work` to `queue` once the count is zero (at once if it is zero now).
    ///
    /// Traps, as `async` does, when `queue`'s pool was shut down (see <doc:Pools>). When the pool shuts down
    /// between this call and the moment the count reaches zero, the notification is dropped and counted in the
    /// pool's ``WorkerPoolStatistics/cancelledFirings``, as a timer's firing is.
    ///
    /// - Parameters:
    ///   - queue: Where `work` runs.
    ///   - work: The closure.
    public func notify(queue: any WorkQueue, execute work: @escaping @Sendable () -> Void) {
        let core = queue.queueCore
        guard core.poolCore.requireAccepting("WorkGroup.notify(queue:) on queue '\(core.label)'") else { return }
        lock.lock()
        if count.load() == 0 {
            lock.unlock()
            core.enqueueFiring(.task(work))
            return
        }
        notifications.append((core, work))
        lock.unlock()
    }

    /// The notifications registered and not yet fired, and the tasks suspended in the async `wait()`: once
    /// it counts a task's `await wait()`, that task's continuation is installed, so a cancellation from then on
    /// resumes a suspended wait. Read under the group's lock; for tests.
    var registeredNotificationCount: Int { lock.withLock { notifications.count + asyncWaiters.count } }
}

/// A task submitted with ``WorkQueue/async(group:execute:)``: enters the group when made, and leaves it after `work`
/// ran, or, when it is released unrun (a stopped pool dropped it: a timed shutdown gave up on it), without running,
/// so that the group's waiters are not left waiting for work that will never run.
/// `@unchecked Sendable`: `ran` is touched by the one thread that runs the task, or by the deinitializer after it.
final class GroupTask: @unchecked Sendable {
    let group: WorkGroup
    let core: QueueCore
    private let work: @Sendable () -> Void
    private var ran = false

    /// `core` is consumed: the reference the caller got from the queue's handle becomes the task's, with no retain
    /// and release of its own (a queue core's are the slower kind: the fork registry holds it weakly).
    init(_ group: WorkGroup, _ core: consuming QueueCore, _ work: @escaping @Sendable () -> Void) {
        group.enterQueued(on: core)
        self.group = group
        self.core = core
        self.work = work
    }

    func run() {
        ran = true
        WorkGroup.running(group, work)
        group.leave(queuedOn: ObjectIdentifier(core))
    }

    deinit {
        guard !ran else { return }
        group.leave(queuedOn: ObjectIdentifier(core))
    }
}
