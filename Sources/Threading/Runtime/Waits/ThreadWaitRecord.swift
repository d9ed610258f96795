// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import CThreading

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// What a thread waits in (``WaitSnapshot/kind`` gives the names).
enum WaitKind: UInt8, Sendable {
    case lock
    case readLock
    case writeLock
    case condition
    case semaphore
    case sync
    case join
    case job
    case group
    case workItem

    /// The name in ``WaitSnapshot/kind``.
    var name: String {
        switch self {
        case .lock: "lock"
        case .readLock: "read lock"
        case .writeLock: "write lock"
        case .condition: "condition"
        case .semaphore: "semaphore"
        case .sync: "sync"
        case .join: "join"
        case .job: "job"
        case .group: "group"
        case .workItem: "work item"
        }
    }

    /// The wait as a cycle line says it: "waits to lock", "waits in sync on".
    var phrase: String {
        switch self {
        case .lock: "waits to lock"
        case .readLock: "waits to read-lock"
        case .writeLock: "waits to write-lock"
        case .condition: "waits on"
        case .semaphore: "waits on"
        case .sync: "waits in sync on"
        case .join: "waits to join"
        case .job, .group, .workItem: "waits for"
        }
    }

    /// Whether the target is a lock (its owner holds it, and a cycle line says so).
    var isLock: Bool { self == .lock || self == .readLock || self == .writeLock }
}

/// An object a thread can wait for: a lock, a condition, a queue, a thread, a job, a group, a work item.
///
/// Its members are read by a snapshot, on the snapshot's thread, with the object retained: never on a wait's path.
protocol WaitTarget: AnyObject {
    /// The object as diagnostics name it (`MutexLock "cache"`, `SerialQueue 'db'`).
    var waitTargetDescription: String { get }
    /// The thread that must act for a wait on the object to end (a lock's holder, a joined thread), read now; nil
    /// when there is none or it is not known.
    var waitOwnerThreadID: Int32? { get }
}

extension WaitTarget {
    /// No thread is known to owe the end of the wait (jobs, groups, items: anyone may finish them).
    var waitOwnerThreadID: Int32? { nil }
}

/// The queues a waiting thread holds exclusively (a serial queue whose `sync` closure or item it runs, a barrier), by
/// address, innermost first: the two innermost, copied from the thread's queue stack when the wait begins, so that a
/// thread blocked in a `sync` on one of them can name this thread as the one that must act (a thread running a
/// `sync` closure holds its queue as a worker running the queue's item does). Two words, no allocation.
struct HeldQueues: Equatable {
    var innermost: UInt = 0
    var outer: UInt = 0

    /// Whether `queue` (an address, ``objectAddress(_:)``) is held.
    func contains(_ queue: UInt) -> Bool { queue != 0 && (innermost == queue || outer == queue) }

    init() {}
}

/// One wait of a thread: what, on what, since when, and the owner it found when it began.
///
/// `target` is not retained: the waiting thread is inside a call on the target (it holds a reference) for as long
/// as the wait is recorded, and a snapshot retains it under the record's lock, while the wait cannot end.
struct WaitState {
    var kind: WaitKind
    unowned(unsafe) var target: any WaitTarget
    /// The owner when the wait began (a lock's holder), 0 when unknown.
    var ownerAtStart: Int32
    /// When the wait began, in nanoseconds of `CLOCK_MONOTONIC`.
    var since: UInt64
    /// The queues the thread holds while it waits.
    var holds = HeldQueues()
    /// Whether the wait has a deadline (it ends by itself at the latest then).
    var timed = false
}

/// A wait as a snapshot read it, with its target retained.
struct WaitObservation {
    let kind: WaitKind
    let target: any WaitTarget
    let ownerAtStart: Int32
    let since: UInt64
    let holds: HeldQueues
    let timed: Bool
}

/// A thread's wait record: the wait it is blocked in, if any, written by the thread itself on the slow path of each
/// wait the library sees and read by snapshots.
///
/// One per thread, made with the thread's record (``RuntimeThread/current``) and registered in ``ThreadRegistry``
/// until the thread exits, so the cost is paid at thread start and exit; a wait costs two short critical sections of
/// the record's own lock (the waiting thread and a snapshot are the only users, so it is uncontended but for a
/// snapshot's instant). `@unchecked Sendable`: `state` is guarded by `lock`; `threadID` is immutable.
final class ThreadWaitRecord: @unchecked Sendable {
    /// The thread's kernel thread id.
    let threadID: Int32
    /// ``ForkRegistry/epoch`` when the record was made: a record of an older epoch is a `fork()`ed parent's thread
    /// (gone in this process, its record lock possibly held for ever), never read.
    let epoch: UInt32
    private let lock = RuntimeLock.make()
    private var state: WaitState?

    init(threadID: Int32) {
        self.threadID = threadID
        self.epoch = ForkRegistry.epoch.load(ordering: .relaxed)
    }

    /// Records `wait` as the thread's wait; returns the wait it replaces (an outer wait, when the thread runs work
    /// while it waits), for ``end(restoring:)``.
    func begin(_ wait: WaitState) -> WaitState? {
        lock.lock()
        let previous = state
        state = wait
        lock.unlock()
        return previous
    }

    /// Ends the wait ``begin(_:)`` recorded, restoring what it returned.
    func end(restoring previous: WaitState?) {
        lock.lock()
        state = previous
        lock.unlock()
    }

    /// The wait the thread is in now, with its target retained, or nil.
    func observe() -> WaitObservation? {
        lock.lock()
        defer { lock.unlock() }
        guard let state else { return nil }
        let target: any WaitTarget = state.target  // retained while the wait cannot end
        return WaitObservation(
            kind: state.kind,
            target: target,
            ownerAtStart: state.ownerAtStart,
            since: state.since,
            holds: state.holds,
            timed: state.timed
        )
    }
}

/// Every thread that has a record (``RuntimeThread/current``): pool workers, ``PosixThread``s, the timer thread,
/// and every thread that used a queue or waited in a wait the library sees. Registration happens when the record is
/// made and ends when the thread exits; a snapshot reads the list under the registry's lock.
enum ThreadRegistry {
    private static let lock = RuntimeLock.make()
    nonisolated(unsafe) private static var records: [ObjectIdentifier: ThreadWaitRecord] = [:]

    /// Makes and registers the calling thread's record (when its record is made).
    static func registerCurrent() -> ThreadWaitRecord {
        _ = forkHandlersInstalled
        let record = ThreadWaitRecord(threadID: cthr_thread_id())
        lock.withLock { records[ObjectIdentifier(record)] = record }
        return record
    }

    /// Holds the wait records' locks across `fork()`: this registry's, ``NamedLockRegistry``'s, ``MainThreadWait``'s
    /// and ``WaitCycleDetector``'s, so a child never inherits one held by a thread it does not have (it would hang in
    /// its next thread record, named lock, main-thread wait or cycle report). Each is a leaf: nothing else is taken
    /// under it, and the last two take none of the others. The prepare handler makes the forking thread's record
    /// first (which registers it), so it never takes the lock it then holds. The parent's records stay in the child,
    /// where their epoch tells them apart (see ``ThreadWaitRecord/epoch``); the child handler only unlocks (it
    /// allocates nothing).
    private static let forkHandlersInstalled: Bool = {
        let code = pthread_atfork(
            {
                _ = RuntimeThread.current
                ThreadRegistry.lock.lock()
                NamedLockRegistry.lockForFork()
                MainThreadWait.lock.lock()
                WaitCycleDetector.lock.lock()
            },
            { ThreadRegistry.unlockAfterFork() },
            { ThreadRegistry.unlockAfterFork() }
        )
        return code == 0
    }()

    /// Gives back what the prepare handler took, in reverse order (in the parent and in the child).
    private static func unlockAfterFork() {
        WaitCycleDetector.lock.unlock()
        MainThreadWait.lock.unlock()
        NamedLockRegistry.unlockAfterFork()
        ThreadRegistry.lock.unlock()
    }

    /// Removes a record (when its thread's record is freed, at thread exit).
    static func unregister(_ record: ThreadWaitRecord) {
        lock.withLock { _ = records.removeValue(forKey: ObjectIdentifier(record)) }
    }

    /// Runs `body` with the registered records, under the registry's lock (no thread starts or exits meanwhile).
    /// In a `fork()`ed child, the parent's records (an older epoch) are left out, the forking thread's too (its
    /// kernel id changed, so the child's first thread is not listed).
    static func withRecords<R>(_ body: ([ThreadWaitRecord]) -> R) -> R {
        let epoch = ForkRegistry.epoch.load(ordering: .relaxed)
        return lock.withLock { body(records.values.filter { $0.epoch == epoch }) }
    }
}

/// The hooks the slow paths of the library's waits call to record what the calling thread waits for.
///
/// Every blocking wait of the library goes through ``begin(_:on:owner:deadline:context:)`` and
/// ``end(_:restoring:)`` (directly, or through ``recording(_:on:deadline:_:)`` and
/// ``recordingCycleChecked(_:on:owner:deadline:_:)``), on its slow path only, when the thread is about to block.
/// Beginning a wait:
/// - refuses it inside an RCU read section (one thread-local read: ``refuseInReadSection(_:on:)``);
/// - records it, with the queues the thread holds (``HeldQueues``), for snapshots and the wait-cycle finder;
/// - on the main thread, checks it against the main queue's pending work (``MainThreadWait``).
enum WaitRecording {
    /// How long a lock or join wait lasts before the waiting thread looks for a wait cycle it is part of (the grace
    /// period of the library's other stalled-wait reports).
    static let cycleGraceNanoseconds: UInt64 = 1_000_000_000

    /// Begins recording a blocking wait of kind `kind` on `target` for the thread with `context` (the calling
    /// thread); returns the outer wait, for ``end(_:restoring:)``. `owner` is the owner the wait found (a lock's
    /// holder), 0 when unknown; `deadline` is when the wait gives up (`.max`: never).
    @inline(__always)
    static func begin(
        _ kind: WaitKind,
        on target: some WaitTarget,
        owner: Int32 = 0,
        deadline: UInt64 = .max,
        context: RuntimeThreadRecord,
        now: UInt64 = cthr_clock_now_ns()
    ) -> WaitState? {
        refuseInReadSection(kind, on: target)
        let state = WaitState(
            kind: kind,
            target: target,
            ownerAtStart: owner,
            since: now,
            holds: context.pointee.upper.map { $0.heldQueues($0.part) } ?? HeldQueues(),
            timed: deadline != .max
        )
        let previous = context.pointee.waitRecord.begin(state)
        if context.pointee.isMainThread && deadline == .max { MainThreadWait.beginWait(state) }
        return previous
    }

    /// Ends the wait ``begin(_:on:owner:deadline:context:)`` recorded, restoring what it returned.
    @inline(__always)
    static func end(_ context: RuntimeThreadRecord, restoring previous: WaitState?) {
        if context.pointee.isMainThread { MainThreadWait.endWait() }
        context.pointee.waitRecord.end(restoring: previous)
    }

    /// Traps when the calling thread is inside an RCU read section: RCU's first rule, a read section must not block
    /// (a writer's `RCU.synchronize()` waits for the section to end, so a wait for a lock, a queue or a thread that
    /// such a writer holds up can never end: the deadlock that `RCU.synchronize()` inside a read section traps on,
    /// at one remove). One thread-local read (`cthr_rcu_read_ongoing`), on the slow path of the wait only.
    ///
    /// The locks call it through ``recordingCycleChecked(_:on:owner:deadline:_:)`` (or ``recording(_:on:deadline:_:)``).
    @inline(__always)
    static func refuseInReadSection(_ kind: WaitKind, on target: some WaitTarget) {
        if cthr_rcu_read_ongoing() != 0 { diagnoseReadSectionWait(kind, target) }
    }

    @inline(never)
    private static func diagnoseReadSectionWait(_ kind: WaitKind, _ target: some WaitTarget) -> Never {
        threadingFatal(
            "Threading: a blocking wait inside an RCU read section: thread \(RuntimeThread.describeCurrent()) "
                + "\(kind.phrase) \(target.waitTargetDescription) inside RCUValue.read / RCUMap.withValue; a read "
                + "section must not block (RCU rule 1): a writer's RCU.synchronize() waits for this section to end, so "
                + "if what this wait needs is held up behind a grace period (a thread in RCU.synchronize(), a lock its "
                + "holder keeps while it synchronizes) neither can go on. Copy what you need out of the read section "
                + "and wait after it. The program stops instead of risking a silent hang."
        )
    }

    /// Runs `body`, a blocking wait of kind `kind` on `target`, with the wait recorded for the calling thread.
    /// `deadline` is when the wait gives up (`.max`: never).
    @inline(never)
    static func recording<R, E: Error>(
        _ kind: WaitKind,
        on target: some WaitTarget,
        deadline: UInt64 = .max,
        _ body: () throws(E) -> R
    ) throws(E) -> R {
        let context = RuntimeThread.current
        let previous = begin(kind, on: target, deadline: deadline, context: context)
        defer { end(context, restoring: previous) }
        return try body()
    }

    /// Runs a lock's or a join's blocking wait, recorded: `wait(deadline)` waits until a deadline (returning 0 or an
    /// errno value, `ETIMEDOUT` when it passed). A wait whose `deadline` lies beyond the grace period first waits
    /// out the grace period; if it has not ended by then, the thread looks for a wait cycle it is part of (reported
    /// once through ``RuntimeObservation``) and waits on until `deadline`.
    ///
    /// The locks' slow paths call this (it refuses a wait inside an RCU read section and checks a main-thread wait
    /// against the main queue, through ``begin(_:on:owner:deadline:context:)``).
    @inline(never)
    static func recordingCycleChecked(
        _ kind: WaitKind,
        on target: some WaitTarget,
        owner: UInt32,
        deadline: UInt64,
        _ wait: (UInt64) -> CInt
    ) -> CInt {
        let context = RuntimeThread.current
        let now = cthr_clock_now_ns()
        let previous = begin(
            kind,
            on: target,
            owner: Int32(bitPattern: owner),
            deadline: deadline,
            context: context,
            now: now
        )
        defer { end(context, restoring: previous) }
        let grace = now &+ cycleGraceNanoseconds
        if deadline > grace {
            let code = wait(grace)
            if code != ETIMEDOUT_VALUE { return code }
            WaitCycleDetector.check(from: context.pointee.waitRecord.threadID)
        }
        return wait(deadline)
    }
}
