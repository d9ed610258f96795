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

/// The calling thread's ``BlockingObserver``, if any, in a thread-specific slot of its own: a thread that is not a
/// pool worker pays one thread-local load per blocking wait, and nothing else.
enum BlockingHook {
    private static let key: pthread_key_t = {
        var key = pthread_key_t()
        let code = cthr_tsd_create(&key, nil)
        require(code == 0, "cthr_tsd_create failed for the blocking hook: \(code)")
        return key
    }()

    /// Makes `observer` the calling thread's (nil: none). The caller keeps it alive while it is installed.
    static func install(_ observer: BlockingObserver?) {
        let raw = observer.map { Unmanaged.passUnretained($0).toOpaque() }
        let code = cthr_tsd_set(key, raw)
        require(code == 0, "cthr_tsd_set failed for the blocking hook: \(code)")
    }

    /// The calling thread's observer, or nil.
    @inline(__always)
    static var current: BlockingObserver? {
        guard let raw = cthr_tsd_get(key) else { return nil }
        return Unmanaged<BlockingObserver>.fromOpaque(raw).takeUnretainedValue()
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
