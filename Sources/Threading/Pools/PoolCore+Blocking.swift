// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import CThreading
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The blocking hooks: a worker that blocks in a wait the runtime sees (``BlockingHook``) gives its running slot up
/// meanwhile.
extension PoolCore {
    // MARK: Blocking hooks (a worker's answer to ``BlockingHook``)

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
