// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import CThreading

/// What the main thread is blocked in, when it waits without a deadline in one of Threading's waits whose end a
/// main-queue `sync` could depend on: a `PosixThread.join()` or a `WorkGroup.wait()`.
///
/// Only the main queue's work needs the main thread, and a server's main thread typically sits in `join()` or a
/// group wait. A `sync` onto the main queue from the thread being joined, or from a task of the group being waited
/// for, can then never run: the main thread waits for the syncing thread, which waits for the main thread. Whichever
/// of the two blocks second stops the program with a message naming both, instead of hanging silently: the main
/// thread's wait is recorded (``recording(_:_:)``) and so are the threads blocked in such a `sync`
/// (``syncing(_:_:)``), both under one lock, so the second one always sees the first.
///
/// The same holds for every other wait of the library the main thread blocks in without a deadline (a semaphore, a
/// condition or monitor, a lock, a job, a work item, a `sync` onto another queue): ``beginWait(_:)`` records it (from
/// ``WaitRecording/begin(_:on:owner:deadline:context:)``, the slow path every wait goes through), and
/// - when the thread that must act for the wait to end (a lock's holder, the joined thread, the worker running the
///   queue the main thread syncs onto) is blocked in a `sync` onto the main queue, the deadlock is certain: whichever
///   of the two blocks second traps, naming both;
/// - when another thread is blocked in a `sync` onto the main queue but the wait has no known owner (a semaphore, a
///   condition: anyone may signal it), it is not certain, so the wait goes on; if both are still so a second later,
///   one `stalled wait` line names the main queue, the main thread's wait and the syncing thread.
///
/// Costs: a lock round trip around an untimed wait on the main thread (a slow path already), and around a main-queue
/// `sync` from another thread; nothing elsewhere.
enum MainThreadWait {
    /// The wait the main thread is in.
    enum Target {
        /// `PosixThread.join()` of the thread with this pthread handle.
        case join(pthread_t, name: String?)
        /// `WorkGroup.wait()` of this group.
        case group(ObjectIdentifier)
    }

    /// A thread blocked in a `sync` onto the main queue.
    private struct Syncer {
        let context: ThreadContext
        let handle: pthread_t
        let threadID: Int32
        let group: ObjectIdentifier?
        let description: String
    }

    /// Guards the state below; held across `fork()` (see `ThreadRegistry`). A leaf: nothing else is taken under it.
    static let lock = RuntimeLock.make()
    /// Guarded by `lock`.
    nonisolated(unsafe) private static var current: Target?
    /// Guarded by `lock`: threads blocked in a `sync` onto the main queue (usually none or one).
    nonisolated(unsafe) private static var syncers: [Syncer] = []
    /// Guarded by `lock`: the untimed wait the main thread is blocked in (any wait of the library), or nil; its
    /// target is alive while it is set (the main thread ends the wait under `lock` before it leaves the call).
    nonisolated(unsafe) private static var waiting: WaitState?
    /// Guarded by `lock`: counts the main thread's waits, so that a report armed for one wait stays silent for the next.
    nonisolated(unsafe) private static var generation: UInt64 = 0
    /// Guarded by `lock`: the kernel id of the thread in `waiting` (the main thread, or the one tests designate).
    nonisolated(unsafe) private static var waitingThreadID: Int32 = 0

    /// Runs `body` (an untimed wait on the main thread) with the record set; on other threads just runs it. Traps
    /// first if a thread that this wait would wait for is already blocked in a `sync` onto the main queue.
    @inline(__always)
    static func recording<R>(_ target: @autoclosure () -> Target, _ body: () -> R) -> R {
        guard RuntimeThread.current.pointee.isMainThread else { return body() }
        let record = target()
        let conflict: Syncer? = lock.withLock {
            current = record
            return syncers.first { blocks(record, $0.handle, $0.group) }
        }
        if let conflict { diagnose(record, syncer: conflict.description) }
        defer { lock.withLock { current = nil } }
        return body()
    }

    /// Runs `body` (a `sync` onto the main queue from another thread, which blocks until the main thread ran it)
    /// with this thread registered as blocked in it. Traps first if the main thread is blocked waiting for this
    /// very thread (joining it, or waiting for the group of the task it runs).
    static func syncing<R>(_ context: ThreadContext, _ body: () throws -> R) rethrows -> R {
        let group = context.innermostGroup.map { ObjectIdentifier($0) }
        let me = Syncer(
            context: context,
            handle: cthr_thread_self(),
            threadID: cthr_thread_id(),
            group: group,
            description: RuntimeThread.describeCurrent()
        )
        let found: SyncerFinding = lock.withLock {
            syncers.append(me)
            if let current, blocks(current, me.handle, me.group) { return .certain(current) }
            guard let waiting else { return .none }
            if waiting.target.waitOwnerThreadID == me.threadID { return .waitOwned(describe(waiting)) }
            return .stalled(generation)
        }
        switch found {
        case .none: break
        case .certain(let blockedMain): diagnose(blockedMain, syncer: me.description)
        case .waitOwned(let wait): diagnoseWait(wait, syncer: me.description)
        case .stalled(let generation): armReport(generation)
        }
        defer { served(context) }
        return try body()
    }

    /// The main thread begins `state`, an untimed wait (``WaitRecording`` calls this on the main thread only). Traps
    /// if the thread that must act for it to end is blocked in a `sync` onto the main queue; arms the stalled-wait
    /// report if another thread is.
    static func beginWait(_ state: WaitState) {
        let owner = state.target.waitOwnerThreadID  // the main thread holds the target: read outside the lock
        let found: (syncer: Syncer?, any: Bool, generation: UInt64) = lock.withLock {
            generation &+= 1
            waiting = state
            waitingThreadID = cthr_thread_id()
            let syncer = owner.flatMap { owner in syncers.first { $0.threadID == owner } }
            return (syncer, !syncers.isEmpty, generation)
        }
        if let syncer = found.syncer { diagnoseWait(describe(state), syncer: syncer.description) }
        if found.any { armReport(found.generation) }
    }

    /// The main thread's wait ended.
    static func endWait() {
        lock.withLock { waiting = nil }
    }

    /// `state` as the messages say it: `waits on Semaphore at 0x… (value 0)`.
    private static func describe(_ state: WaitState) -> String {
        "\(state.kind.phrase) \(state.target.waitTargetDescription)"
    }

    /// In a second, reports the main thread's wait number `generation` if it is still going on and a thread is still
    /// blocked in a `sync` onto the main queue (one line; once per wait).
    private static func armReport(_ generation: UInt64) {
        ConcurrentQueue.global().asyncAfter(delay: .nanoseconds(Int64(WaitRecording.cycleGraceNanoseconds))) {
            let mainQueue = MainLoop.shared.core.label  // outside the lock: the lock stays a leaf
            let line: String? = lock.withLock {
                guard let waiting, Self.generation == generation, let syncer = syncers.first,
                    !reported.contains(generation)
                else { return nil }
                reported.insert(generation)
                if reported.count > 16, let oldest = reported.min() { reported.remove(oldest) }
                return
                    "Threading: stalled wait: the main thread (tid \(waitingThreadID)) \(describe(waiting)) and has been blocked for a second "
                    + "while the main queue '\(mainQueue)' holds a sync from thread "
                    + "\(syncer.description) that only the main thread can run; the main queue runs only when the main "
                    + "thread returns to it, so if what the main thread waits for needs that sync, neither can go on "
                    + "(use async onto the main queue, or wait with a deadline and drain the main queue meanwhile)"
            }
            if let line {
                RuntimeObservation.report(.waitStalled, .warning, line, ["queue": "threading.main"])
            }
        }
    }

    /// What a thread beginning a main-queue `sync` finds the main thread blocked in.
    private enum SyncerFinding {
        case none
        /// A join or group wait for this thread.
        case certain(Target)
        /// A wait only this thread can end (described).
        case waitOwned(String)
        /// A wait without a known owner: the report is armed for the main thread's wait of this generation.
        case stalled(UInt64)
    }

    /// Guarded by `lock`: the waits already reported.
    nonisolated(unsafe) private static var reported: Set<UInt64> = []

    /// The `sync` of the thread with `context` was run: it no longer waits for the main thread. Called on the main
    /// thread before it grants the waiter (so a `join()` right after cannot mistake it for a blocked one), and by the
    /// waiter when it returns (a no-op then, unless the sync threw before it was queued).
    static func served(_ context: ThreadContext) {
        lock.withLock {
            if let index = syncers.firstIndex(where: { $0.context == context }) { syncers.remove(at: index) }
        }
    }

    /// Whether the main thread's wait `target` waits for the thread `handle` running a task of `group`.
    private static func blocks(_ target: Target, _ handle: pthread_t, _ group: ObjectIdentifier?) -> Bool {
        switch target {
        case .join(let joined, _): cthr_thread_equal(joined, handle)
        case .group(let waited): group == waited
        }
    }

    private static func diagnoseWait(_ wait: String, syncer: String) -> Never {
        threadingFatal(
            "Threading: deadlock: the main thread \(wait), which only thread \(syncer) can end, and that thread is "
                + "blocked in a sync onto the main queue '\(MainLoop.shared.core.label)', which waits for the main "
                + "thread; the main queue only runs on the main thread, so neither can go on. The program stops "
                + "instead of hanging (use async onto the main queue, or wait with a deadline)."
        )
    }

    private static func diagnose(_ target: Target, syncer: String) -> Never {
        let blocked: String
        switch target {
        case .join(_, let name):
            blocked = "PosixThread\(name.map { " \"\($0)\"" } ?? "").join() of that thread"
        case .group:
            blocked = "WorkGroup.wait() for the group of the task that thread is running"
        }
        threadingFatal(
            "Threading: deadlock: a sync onto the main queue from thread \(syncer) waits for the main thread, which "
                + "is blocked in \(blocked); the main queue only runs on the main thread, so neither can go on. The "
                + "program stops instead of hanging (use async onto the main queue, or wait with a deadline)."
        )
    }
}
