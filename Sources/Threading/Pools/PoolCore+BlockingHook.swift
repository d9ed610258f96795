// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import CThreading

/// A worker's answer to the substrate's blocking hook (``BlockingHook``, ``PoolWorker`` is the observer): a worker
/// that blocks in a wait the runtime sees gives its running slot up meanwhile, so the pool wakes or makes another
/// worker for its pending work (Tokio's `block_in_place`), and takes a slot again when the wait returns.
extension PoolCore {
    func workerWillBlock(_ worker: PoolWorker) {
        // Its next-slot unit would wait for the wait: hand it to the others first (before the pool lock: no path
        // takes a run queue's lock after it).
        if let local = worker.local, local.nextHint.load(ordering: .relaxed) { spillNext(worker, local) }
        let spawnCount = lock.withLock { synced in
            synced.workerBlocks(worker)
            return dispatch(&synced, allowSpawn: true)
        }
        for _ in 0..<spawnCount { spawn(PoolWorker(poolCore: self)) }
    }

    func workerDidUnblock(_ worker: PoolWorker) {
        lock.withLock { synced in synced.workerUnblocks(worker) }
    }
}
