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
/// meanwhile. And how a blocking pool (``isBlocking``) keeps its thread count level under a steady load.
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

    // MARK: Blocking pools

    /// The parker value of a blocking pool's worker woken as a searcher (counted in `spinning` by its waker); a CPU
    /// pool's worker woken for work gets ``wokenForWork``, and shutdown's wake-ups store 1.
    static let wokenSearching: UInt32 = 2

    // A blocking pool runs calls that sleep: it needs a thread per call in flight and no more. A CPU pool's worker
    // counts in `spinning` only while it spins, and a submission seen by no spinner wakes or makes a worker. For a
    // blocking pool that made threads for units a worker was about to take: one between two units, one woken and not
    // yet running, one just made. Under a steady load the pool grew past the calls in flight, the surplus sat at the
    // bottom of the idle list (the most recently parked worker is woken first), exited after the idle timeout, and
    // was made again at the next peak; meanwhile idle workers spun, taking turns from the threads that feed the pool.
    //
    // So a blocking pool's worker counts in `spinning` whenever it searches: from its start, from its wake-up (its
    // waker counts it: `dispatch`), and from the end of each unit, until it takes a unit (`workerMain`) or is back on
    // the idle list (`park`, under the pool lock). A submission wakes an idle worker whenever there is one
    // (waking is cheap; a searcher may be preempted), but makes a thread only for a unit that no searcher covers
    // (`notifyBlocking`, then `dispatchBlocking`; the monitor through `dispatch`: pending minus `spinning`), and only
    // while more units are in flight than the pool has threads: otherwise each queued unit has a thread that is not
    // running one and will take it. A `run` call counts as completed, and its worker as searching, right before it
    // resumes its caller (`unitIsFinishing`): the caller's next call can come before the worker is back in its loop.
    // (Measured in the example server, 64 clients each keeping one 2 ms call in flight on 2 busy cores: without the
    // two rules the pool made 0 to 5 threads in 5 s, for units that a finishing worker took moments later.) A
    // searcher that takes a unit passes the wake-up on for the units no other searcher covers
    // (`passBlockingWakeUpOn`). Its workers spin only while searching, only
    // after a short call (`shortCallNanoseconds`) or a wake-up, and stop as soon as a yield gives the CPU away (busy
    // cores); its idle list is first in, first out: workers take turns, so none idles for the timeout while the pool
    // is loaded, and all exit after it once the load stops.

    /// Called by a unit right before its last act, when that act hands control back to its submitter (a
    /// ``WorkerPool/run(fileID:line:_:)`` resuming its caller): on a blocking pool's worker, the unit counts as completed and the
    /// worker as searching from here, not from the unit's end (`workerMain`). The caller's next call often comes
    /// before the worker is back in its loop (on busy cores it may be preempted in between), and would otherwise
    /// count as one call more in flight than there are threads, and make one. Anywhere else (not a worker, a CPU
    /// pool) it does nothing.
    static func unitIsFinishing() {
        guard let worker = RuntimeThread.current.pointee.worker?.takeUnretainedValue(),
            worker.poolCore.isBlocking, !worker.finishedEarly, let local = worker.local
        else { return }
        worker.finishedEarly = true
        local.completed.wrappingAdd(1, ordering: .sequentiallyConsistent)
        worker.poolCore.spinning.add(1, ordering: .sequentiallyConsistent)
    }

    /// A blocking pool's worker that stopped searching (it took a unit) passes the wake-up on when units wait that no
    /// other searching worker covers: a submitter that saw it searching and no idle worker woke nobody. Units that
    /// another searcher covers (a worker a submitter woke for its unit, which may not have run yet) get no second
    /// worker: woken for nothing, that worker found the unit gone, searched with yields and parked again, two context
    /// switches and a search per call (measured in the example server, 64 clients each keeping one 2 ms call in
    /// flight on 2 busy cores: a third of the pool's wake-ups were such). The test is the one a parking worker and a
    /// submitter make: sequentially consistent counts, so a unit pushed before a searcher left is covered by it, and a
    /// searcher that leaves afterwards looks again (`park`) or passes the wake-up on itself.
    @inline(__always)
    func passBlockingWakeUpOn() {
        guard hasWork() else { return }
        if pendingTotal() > spinning.load(ordering: .sequentiallyConsistent) { notify() }
    }

    /// Whether more units are in flight (submitted, not completed: queued or running) than the pool has threads. The
    /// completions are read first, so a unit that completes meanwhile only makes the count larger: it errs towards
    /// a thread, never towards a unit left with none.
    func unitsInFlight(outnumber threads: Int) -> Bool {
        let completed = completedTotal()
        return Int(truncatingIfNeeded: submittedTotal() &- completed) > threads
    }

    /// After a push to a blocking pool: wakes an idle worker whenever there is one, as `NIOThreadPool` signals a
    /// waiting thread for each submission (a searching worker may be preempted, and the unit must not wait for it);
    /// otherwise, with no searching worker and room for a thread, makes one. Lock-free when neither is possible (a
    /// pool whose every thread is busy takes submissions without the pool lock).
    @inline(__always)
    func notifyBlocking() {
        if hints.monitor.load(ordering: .sequentiallyConsistent) != MonitorState.running.hint
            || hints.idle.load(ordering: .sequentiallyConsistent) > 0
            || (spinning.load(ordering: .sequentiallyConsistent) == 0
                && hints.running.load(ordering: .sequentiallyConsistent)
                    < hints.limit.load(ordering: .sequentiallyConsistent))
        {
            notifySlow()
        }
    }

    /// A blocking pool's submission path (inside the pool's lock section): takes the next idle worker (counted
    /// searching) for the caller to wake once the lock is released, or, when none is idle and the units waiting
    /// outnumber the searching workers, room for a new thread (counted searching too). Returns the worker to wake and
    /// the threads to create.
    func dispatchBlocking(_ synced: inout PoolSynced) -> (wake: PoolWorker?, spawnCount: Int) {
        // `hasWork` stops at the first run queue with a unit (usually the shard just pushed to); the count, which
        // reads every run queue, only when a thread may have to be made.
        guard synced.running < synced.limit && hasWork() else { return (nil, 0) }
        if let worker = synced.idle.popLast() {
            worker.parker.store(PoolCore.wokenSearching)
            spinning.add(1, ordering: .sequentiallyConsistent)
            synced.running += 1
            return (worker, 0)
        }
        let pending = pendingTotal()
        let searching = spinning.load(ordering: .sequentiallyConsistent)
        // Searchers cover the first units; the rest get a thread each, unless every unit in flight has one
        // already: then a running unit finishes first (a steady load makes no thread, see `unitIsFinishing`).
        guard pending > searching && synced.threads < maxThreads && unitsInFlight(outnumber: synced.threads) else {
            return (nil, 0)
        }
        synced.addThread()
        spinning.add(1, ordering: .sequentiallyConsistent)
        return (nil, 1)
    }
}
