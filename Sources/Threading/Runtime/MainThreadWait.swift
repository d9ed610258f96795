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
/// Costs: a lock round trip around an untimed `join()` or group wait on the main thread, and around a main-queue
/// `sync` from another thread (a slow path already); nothing elsewhere.
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
        let group: ObjectIdentifier?
        let description: String
    }

    private static let lock = RuntimeLock()
    /// Guarded by `lock`.
    nonisolated(unsafe) private static var current: Target?
    /// Guarded by `lock`: threads blocked in a `sync` onto the main queue (usually none or one).
    nonisolated(unsafe) private static var syncers: [Syncer] = []

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
            group: group,
            description: RuntimeThread.describeCurrent()
        )
        let blockedMain: Target? = lock.withLock {
            syncers.append(me)
            if let current, blocks(current, me.handle, me.group) { return current }
            return nil
        }
        if let blockedMain { diagnose(blockedMain, syncer: me.description) }
        defer { served(context) }
        return try body()
    }

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
