// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import CThreading
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The non-generic face of a thread's box, so one C entry point serves every result type.
class PosixThreadRunnable: @unchecked Sendable {
    /// The thread's kernel thread id once it started (0 before): what a join waits for, in snapshots.
    let threadID = Atomic<Int32>(0)

    func run() {}
}

/// What a ``PosixThread`` runs and what it leaves behind: the body, and its result once it has returned.
///
/// Retained once for the new thread (released when the body has run) and once for the handle (released with the
/// handle). The box lets go of the body, and so of everything it captured, as soon as the body returned, on the
/// thread itself; a result nobody will join for (the thread was detached) is dropped as soon as both the thread
/// stored it and the handle detached, by whichever of the two comes second (`phase` decides). `body` is only
/// touched by the thread; `result` is written by the thread before it exits and read by the joiner after
/// `pthread_join`, which orders the two, or dropped by the side that comes second in `phase`, so the box is
/// `@unchecked Sendable`.
final class PosixThreadBox<Result>: PosixThreadRunnable, @unchecked Sendable {
    nonisolated(unsafe) var body: (@Sendable () -> sending Result)?
    nonisolated(unsafe) var result: Result?

    /// 0 = running, 1 = the body returned and its result is stored, 2 = the handle detached the thread.
    let phase = Atomic<UInt8>(0)

    init(_ body: @escaping @Sendable () -> sending Result) {
        self.body = body
    }

    override func run() {
        let body = self.body.take()!
        result = body()
        if phase.exchange(1, ordering: .acquiringAndReleasing) == 2 { result = nil }
    }

    /// Called by `detach()`: drops the result now if the body already returned, else lets the thread drop it.
    func detached() {
        if phase.exchange(2, ordering: .acquiringAndReleasing) == 1 { result = nil }
    }
}

/// The entry point of every ``PosixThread``: runs the box's body and drops the thread's reference to the box.
let posixThreadEntry: cthr_thread_body_t = { context in
    let box = Unmanaged<PosixThreadRunnable>.fromOpaque(context!).takeRetainedValue()
    box.threadID.store(cthr_thread_id(), ordering: .releasing)
    _ = RuntimeThread.current  // registers the thread for snapshots (at its start, not on a wait's path)
    box.run()
    return nil
}
