// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import CThreading

/// What a thread's blocking waits report to (the substrate's side of blocking; Tokio's `block_in_place` shape).
///
/// A pool worker is one (``PoolWorker``): when it blocks in a wait the runtime sees, it gives its running slot up
/// meanwhile, so the pool wakes or creates another worker for its pending work. The primitives below the pools
/// (locks, conditions, semaphores, joins, futex waits) call ``BlockingHook`` and never name a pool. A subclass
/// overrides both methods.
class BlockingObserver: @unchecked Sendable {
    /// The calling thread, which is this observer's, is about to block.
    func willBlock() {}
    /// The wait that ``willBlock()`` announced returned.
    func didUnblock() {}
}

/// The calling thread's ``BlockingObserver``, if any, in the thread's record (``ThreadRecord/blockingObserver``): a
/// thread that is not a pool worker pays one thread-local load per blocking wait, and nothing else (a thread without
/// a record gets none made).
enum BlockingHook {
    /// Makes `observer` the calling thread's (nil: none). The caller keeps it alive while it is installed.
    static func install(_ observer: BlockingObserver?) {
        RuntimeThread.current.pointee.blockingObserver = observer.map { Unmanaged.passUnretained($0) }
    }

    /// The calling thread's observer, or nil.
    @inline(__always)
    static var current: BlockingObserver? {
        RuntimeThread.existing?.pointee.blockingObserver?.takeUnretainedValue()
    }

    /// Runs `body`, a call that blocks, announced to the calling thread's observer before and after.
    @inline(__always)
    static func around<R, E: Error>(_ body: () throws(E) -> R) throws(E) -> R {
        guard let observer = current else { return try body() }
        observer.willBlock()
        defer { observer.didUnblock() }
        return try body()
    }

    /// Announces a wait that is about to block (pair it with ``didUnblock()``).
    @inline(__always)
    static func willBlock() { current?.willBlock() }

    /// Announces that the wait ``willBlock()`` announced returned.
    @inline(__always)
    static func didUnblock() { current?.didUnblock() }
}
