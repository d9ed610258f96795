// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import CThreading
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// `fork()`: the pool lock, every run queue's and the observation's held across the fork, and the child restarted
/// empty (see ``ForkRegistry``).
extension PoolCore {
    /// `fork()` prepare handler (see ``ForkRegistry``): holds the pool lock, every run queue's lock and the
    /// observation's lock across the fork (in that order; no path takes the pool lock while holding a run queue's,
    /// and nothing is taken while the observation's is held). A lock held by a thread of the parent that the child
    /// does not have would never be released there: a child whose workers attach to the observation (every new
    /// worker does) hung, its units never run, when a parent's worker was attaching, sampling or exiting at the fork.
    /// It also makes what the child handler needs: which slot the forking thread (the calling one) holds, and the
    /// child's free slots (see ``ForkRegistry`` on the runtime's types in a child).
    func forkPrepare() {
        let synced = lock.lockForFork()
        for index in 0..<shardCount { shards[index].forkPrepare() }
        let made = slotBound.load(ordering: .relaxed)  // no slot is made while the pool lock is held
        for index in 0..<made { slots[index].forkPrepare() }
        observation.lock.lock()
        var forkSlot = -1
        if let worker = SchedulerThread.current.pointee.worker?.takeUnretainedValue(), worker.poolCore === self {
            forkSlot = worker.slot
        }
        synced.pointee.forkSlot = forkSlot
        synced.pointee.forkFreeSlots = (0..<made).reversed().filter { $0 != forkSlot }
    }

    /// `fork()` handler in the parent.
    func forkParent() {
        observation.lock.unlock()
        lock.heldAcrossFork.pointee.forkFreeSlots = []
        for index in (0..<slotBound.load(ordering: .relaxed)).reversed() { slots[index].forkParent() }
        for index in (0..<shardCount).reversed() { shards[index].forkParent() }
        lock.unlockAfterFork()
    }

    /// `fork()` handler in the child (one thread, the locks held by `forkPrepare`): none of the parent's pool
    /// or monitor threads exist here, and none of the units the parent accepted may run here, so the pool restarts
    /// empty with no pending work and grows again on the child's first submission. The dropped units are abandoned,
    /// never released (see ``ForkRegistry``). If the forking thread is itself a worker of this pool, it stays one: it
    /// counts as the pool's one running thread and keeps its slot. A pool that was shutting down or stopped stays so.
    ///
    /// Index loops and stored values only (no closures, iterators, ranges or growing arrays), with what needs more
    /// made by ``forkPrepare()``: see ``ForkRegistry`` on the runtime's types in a child.
    func forkChild(_ forking: ThreadContext) {
        let synced = lock.heldAcrossFork
        let forkingSlot = synced.pointee.forkSlot
        let isWorker = forkingSlot >= 0
        var index = 0
        while index < shardCount {
            shards[index].forkChild(running: false)
            index += 1
        }
        index = 0
        let made = slotBound.load(ordering: .relaxed)
        while index < made {
            slots[index].forkChild(running: index == forkingSlot)
            index += 1
        }
        index = 0
        while index < synced.pointee.idle.count {
            _ = Unmanaged.passRetained(synced.pointee.idle[index])  // their threads are gone; nothing is freed here
            index += 1
        }
        synced.pointee.idle = []
        synced.pointee.freeSlots = synced.pointee.forkFreeSlots
        synced.pointee.threads = isWorker ? 1 : 0
        synced.pointee.running = isWorker ? 1 : 0
        searching.resetInForkChild()
        synced.pointee.wokenForWork = 0
        synced.pointee.retiring = 0
        synced.pointee.blocked = 0
        synced.pointee.extraSlots = 0
        synced.pointee.peakThreads = synced.pointee.threads
        synced.pointee.monitor = .notStarted
        monitorWord.store(0)
        // The parent's exited threads: nothing to join here.
        if case .stopped(_, let gone) = synced.pointee.life {
            synced.pointee.life = .stopped(exited: [], joinerGone: gone)
        }
        observation.lock.unlock()  // the parent's workers stay listed until a sample sweeps them (their epoch)
        lock.unlockAfterFork()
    }
}
