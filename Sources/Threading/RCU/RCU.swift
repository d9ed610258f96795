// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import CThreading

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Process-wide read-copy-update controls shared by ``RCUValue`` and ``RCUMap``: grace periods, thread registration
/// and `fork()` support, over liburcu's memb flavour.
///
/// You rarely need these: ``RCUValue`` and ``RCUMap`` register threads and reclaim old values on their own. Use
/// ``synchronize()-46ekl`` or ``barrier()-4zb2m`` when you must know that old values are gone (tests, shutdown), and the fork
/// hooks around a `fork()` that is not followed at once by `exec`. See <doc:RCURules> for the rules.
///
/// The first use of RCU in a process (creating an ``RCUValue`` or ``RCUMap``, or calling ``synchronize()-46ekl``,
/// ``barrier()-4zb2m`` or ``registerCurrentThread()``) checks that the liburcu loaded at run time matches the liburcu
/// headers Threading was compiled with; on a mismatch the process stops with one line on standard error saying so.
public enum RCU {
    // The noasync advice below is one string literal (an attribute takes no concatenation).
    // swift-format-ignore
    /// Waits until every read section that was running when it was called has ended (a grace period).
    ///
    /// Afterwards no reader can still see a value that an ``RCUValue`` or ``RCUMap`` replaced before the call;
    /// their release may still be queued (use ``barrier()-4zb2m`` to wait for it).
    ///
    /// - Precondition: Not inside a read section (``RCUValue/read(_:)``, ``RCUMap/withValue(forKey:_:)``, an
    ///   iteration of a snapshot is fine). Calling it there would wait for itself forever, so it traps with a message
    ///   instead of deadlocking. Not in a read-only forked child (see ``writersAvailable``): traps.
    ///
    /// The corresponding C function is `cthr_rcu_synchronize` (liburcu's `synchronize_rcu`).
    @available(*, noasync, message: "synchronize() blocks the thread; use `await RCU.synchronize()` (top-level code, where the blocking overload wins: `await { await RCU.synchronize() }()`)")
    public static func synchronize() {
        waitChecked(cthr_rcu_synchronize, "synchronize", where: "inside an RCU read section")
    }

    // The noasync advice below is one string literal (an attribute takes no concatenation).
    // swift-format-ignore
    /// Waits until every deferred release scheduled so far (old values of ``RCUValue`` and ``RCUMap``) has run.
    ///
    /// - Precondition: Not inside a read section and not inside a deferred release (a `deinit` running on liburcu's
    ///   call_rcu thread); both would wait for themselves, so they trap with a message. Not in a read-only forked
    ///   child (see ``writersAvailable``): traps.
    ///
    /// The corresponding C function is `cthr_rcu_barrier` (liburcu's `rcu_barrier`).
    @available(*, noasync, message: "barrier() blocks the thread; use `await RCU.barrier()` (top-level code, where the blocking overload wins: `await { await RCU.barrier() }()`)")
    public static func barrier() {
        waitChecked(cthr_rcu_barrier, "barrier", where: "inside an RCU read section or a deferred release")
    }

    /// Runs `cthr_rcu_<name>`, a wait that fails where it would wait for itself (`place`) or in a read-only forked
    /// child, and traps with a message naming the call on either failure.
    private static func waitChecked(_ wait: () -> CInt, _ name: StaticString, where place: StaticString) {
        _ = liburcuChecked
        let code = wait()
        rcuRefuseInReadOnlyChild(code, "RCU.\(name)()")
        require(
            code == 0,
            "RCU.\(name)() called \(place): it would wait for itself forever "
                + "(cthr_rcu_\(name) returned \(ThreadingError.cName(of: code)))"
        )
    }

    /// Runs `callback` once, after a grace period: when every read section that was running at the time of the
    /// call has ended.
    ///
    /// liburcu's `call_rcu`, for any clean-up that must wait until no reader can still see something (an object
    /// unlinked from your own RCU-published structure, a slot that may be reused once nobody reads it). The call
    /// never waits: it queues the callback and returns, also inside a read section. ``barrier()-4zb2m`` waits until every
    /// callback queued before it has run.
    ///
    /// <!-- sample-context
    /// final class FileTable: Sendable { func closeFiles() {} }
    /// let table = RCUValue(FileTable())
    /// let newTable = FileTable()
    /// -->
    /// ```swift
    /// let old = table.exchange(newTable)
    /// RCU.callAfterGracePeriod { old.closeFiles() }  // no reader of `table` can still be using `old`
    /// ```
    ///
    /// The contract of `callback`:
    /// - It runs on liburcu's call_rcu worker thread, outside any read section, in no particular order with other
    ///   callbacks, and it holds up every deferred release of the process while it runs (the old values of
    ///   ``RCUValue`` and ``RCUMap`` included). Keep it short and never block in it: no waiting for a lock another
    ///   thread may hold for long, no queue `sync`, no ``synchronize()-46ekl``.
    /// - It must not call ``barrier()-4zb2m`` (that traps: it would wait for itself). It may read and write RCU data and
    ///   queue further callbacks.
    /// - Whatever it captured is released after it ran, on the call_rcu thread.
    ///
    /// - Parameter callback: The work to run after the grace period.
    /// - Precondition: Not in a read-only forked child (see ``writersAvailable``): traps, and the callback never
    ///   runs. liburcu cannot queue it (out of memory): traps.
    ///
    /// The corresponding C function is `cthr_rcu_call` (liburcu's `call_rcu`).
    public static func callAfterGracePeriod(_ callback: @escaping @Sendable () -> Void) {
        let box = Unmanaged.passRetained(RCUCallbackBox(callback)).toOpaque()
        let code = cthr_rcu_call(rcuRunCallback, box)
        if code != 0 { Unmanaged<RCUCallbackBox>.fromOpaque(box).release() }
        rcuRefuseInReadOnlyChild(code, "RCU.callAfterGracePeriod(_:)")
        require(
            code == 0,
            "RCU.callAfterGracePeriod(_:): \(ThreadingError(code: code, operation: "cthr_rcu_call"))"
        )
    }

    /// Whether this process can write RCU data (run grace periods).
    ///
    /// `false` only in a child forked from a process where other threads had used RCU (the queue pool's workers
    /// usually have) or where a deferred release or an ``RCUMap`` had started liburcu's worker threads: liburcu 0.13
    /// keeps those dead threads' registrations, and the child's new threads would reuse their thread-local storage,
    /// so a grace period there could spin forever or crash. In such a child reads keep working on every thread, and
    /// every write (``RCUValue`` and ``RCUMap`` updates, creating an ``RCUMap``, ``synchronize()-46ekl``, ``barrier()-4zb2m``)
    /// traps with a message that says so; dropping an ``RCUValue`` frees it, dropping an ``RCUMap`` leaks it. A
    /// child that needs to write should `exec`, or the process should fork before its threads use RCU.
    ///
    /// The corresponding C function is `cthr_rcu_writers_available`.
    public static var writersAvailable: Bool { cthr_rcu_writers_available() != 0 }

    /// Whether the calling thread is inside a read section.
    ///
    /// The corresponding C function is `cthr_rcu_read_ongoing`.
    public static var isInReadSection: Bool { cthr_rcu_read_ongoing() != 0 }

    /// Whether the calling thread is registered with liburcu.
    ///
    /// Threads register automatically on their first read or update; see ``registerCurrentThread()``.
    public static var isCurrentThreadRegistered: Bool { cthr_rcu_is_registered() != 0 }

    /// Whether liburcu uses the `membarrier` system call.
    ///
    /// With it, entering and leaving a read section costs a few instructions; without it (an old kernel, or a
    /// seccomp filter that refuses the call) liburcu falls back silently to a full memory fence on each, which is
    /// correct but several times slower. Benchmarks print this.
    ///
    /// The corresponding C function is `cthr_rcu_uses_membarrier` (liburcu's `urcu_memb_has_sys_membarrier`).
    public static var usesMembarrier: Bool { cthr_rcu_uses_membarrier() != 0 }

    /// Registers the calling thread as a reader ahead of its first read section.
    ///
    /// Optional: every read and update registers the thread automatically, and the thread is unregistered when it
    /// exits. Registering early only moves the one-time cost (a mutex in liburcu) out of the first read.
    ///
    /// - Returns: `true` if the thread was registered now, `false` if it already was.
    ///
    /// The corresponding C function is `cthr_rcu_register_thread`.
    @discardableResult
    public static func registerCurrentThread() -> Bool {
        _ = liburcuChecked
        return cthr_rcu_register_thread() != EEXIST
    }

    /// Unregisters the calling thread before it exits (it would be unregistered at exit anyway).
    ///
    /// A thread that stays alive but will not read again (a worker parked for a long time) costs nothing in the memb
    /// flavour, so this is rarely needed; a later read registers the thread again.
    ///
    /// - Returns: `true` if the thread was unregistered now, `false` if it was not registered.
    /// - Precondition: Not inside a read section, and not on liburcu's call_rcu thread (traps with a message).
    ///
    /// The corresponding C function is `cthr_rcu_unregister_thread`.
    @discardableResult
    public static func unregisterCurrentThread() -> Bool {
        let code = cthr_rcu_unregister_thread()
        if code == ENOENT { return false }
        require(
            code == 0,
            "RCU.unregisterCurrentThread() inside a read section or on the call_rcu thread "
                + "(cthr_rcu_unregister_thread returned \(ThreadingError.cName(of: code)))"
        )
        return true
    }

    /// Prepares RCU for a `fork()`: call right before it (pauses liburcu's worker threads and takes their locks).
    ///
    /// The corresponding C function is `cthr_rcu_before_fork` (liburcu's `call_rcu_before_fork`).
    public static func prepareForFork() { cthr_rcu_before_fork() }

    /// Call in the parent right after `fork()` returns: resumes what ``prepareForFork()`` paused.
    ///
    /// The corresponding C function is `cthr_rcu_after_fork_parent`.
    public static func resumeAfterForkInParent() { cthr_rcu_after_fork_parent() }

    /// Call in the child right after `fork()` returns (unless it calls `exec` at once): starts a fresh call_rcu
    /// worker, since the child inherits none of the parent's threads.
    ///
    /// The corresponding C function is `cthr_rcu_after_fork_child`.
    public static func resumeAfterForkInChild() { cthr_rcu_after_fork_child() }
}
