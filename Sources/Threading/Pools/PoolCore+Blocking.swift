// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import CThreading
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The blocking hooks: a worker that blocks in a wait the pool sees gives its running slot up meanwhile.
extension PoolCore {
    // MARK: Blocking hooks

    /// Called by the pool's own blocking waits before a pool worker sleeps: frees its slot so pending work runs.
    static func willBlock(_ context: ThreadContext) {
        guard let worker = context.pointee.worker?.takeUnretainedValue() else { return }
        worker.poolCore.workerWillBlock(worker)
    }

    /// Runs a blocking wait (`body`) so that a pool worker running it gives its slot up meanwhile: the hook for
    /// blocking primitives outside the worker pools (`Semaphore.wait`). Free on threads that are not pool workers
    /// (one TSD lookup).
    @inline(__always)
    static func blocking<R, E: Error>(_ body: () throws(E) -> R) throws(E) -> R {
        let context = RuntimeThread.current
        guard context.pointee.worker != nil else { return try body() }
        willBlock(context)
        defer { didUnblock(context) }
        return try body()
    }

    /// Called after such a wait returns.
    static func didUnblock(_ context: ThreadContext) {
        guard let worker = context.pointee.worker?.takeUnretainedValue() else { return }
        worker.poolCore.workerDidUnblock(worker)
    }

    func workerWillBlock(_ worker: PoolWorker) {
        // Its next-slot unit would wait for the wait: hand it to the others first (before the pool lock: no path
        // takes a run queue's lock after it).
        if let local = worker.local, local.nextHint.load(ordering: .relaxed) { spillNext(worker, local) }
        let spawnCount = state.withLock { synced in
            worker.blocked = true
            synced.running -= 1
            synced.blocked += 1
            return dispatch(&synced, allowSpawn: true)
        }
        for _ in 0..<spawnCount { spawn(PoolWorker(poolCore: self)) }
    }

    func workerDidUnblock(_ worker: PoolWorker) {
        state.withLock { synced in
            worker.blocked = false
            synced.running += 1
            synced.blocked -= 1
        }
    }
}
