// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import CThreading
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The blocking kind of pool (``isBlocking``, ``WorkerPool/blocking``): how it keeps its thread count level, a thread
/// per call in flight and no more, under a steady load.
extension PoolCore {
    // The blocking kind's rules of the idle protocol (see `PoolIdle.swift`): a worker counts as searching whenever
    // it searches (from its start, from its wake-up, which its waker counts: `dispatch`, and from the end of each
    // unit) until it takes a unit (`workerMain`) or is back on the idle list (`park`, under the pool lock). A
    // submission wakes an idle worker whenever there is one, but makes a thread only for a unit that no searcher
    // covers (`notifyBlocking`, then `dispatchBlocking`; the monitor through `dispatch`: pending minus searching),
    // and only while more units are in flight than the pool has threads: otherwise each queued unit has a thread
    // that is not running one and will take it. A `run` call counts as completed, and its worker as searching,
    // right before it resumes its caller (`unitIsFinishing`): the caller's next call can come before the worker is
    // back in its loop, and would make a thread for a unit that the finishing worker takes moments later. A
    // searcher that takes a unit passes the wake-up on for the units no other searcher covers
    // (`passBlockingWakeUpOn`). Its workers spin only while searching, only after a short call
    // (`shortCallNanoseconds`) or a wake-up, and stop as soon as a yield gives the CPU away (busy cores); its idle
    // list is first in, first out: workers take turns, so none idles for the timeout while the pool is loaded, and
    // all exit after it once the load stops.
    //
    // One queue for every unit, as `NIOThreadPool` and Tokio's blocking pool have: a blocking pool puts every unit
    // in its shared shards, its own workers' units too (`trySchedule`), never in a worker's local queue or next slot.
    // A unit placed behind a call that blocks would wait for that call, and idle workers would have to scan every
    // worker's queue to find it: a slot per thread (64 in `bench http`), a cache miss each, at every search (`steal`,
    // and `hasWork` in every spin round and before every park), the blocking pool's largest cost of its own there.
    // Its workers take from the shards only: `findWork` steals nothing and `hasWork` reads the shards alone.

    /// Called by a unit right before its last act, when that act hands control back to its submitter (a
    /// ``WorkerPool/run(fileID:line:_:)`` resuming its caller): on a blocking pool's worker, the unit counts as completed and the
    /// worker as searching from here, not from the unit's end (`workerMain`). The caller's next call often comes
    /// before the worker is back in its loop (on busy cores it may be preempted in between), and would otherwise
    /// count as one call more in flight than there are threads, and make one. Anywhere else (not a worker, a CPU
    /// pool) it does nothing.
    static func unitIsFinishing() {
        // Nothing is retained: the worker is the calling thread's own (alive while it runs), and its pool, shared by
        // every worker, would otherwise have its reference count written by each call, a line all workers write.
        SchedulerThread.current.pointee.worker?._withUnsafeGuaranteedRef { worker in
            guard worker.poolCore.isBlocking, !worker.finishedEarly, let local = worker.local else { return }
            worker.finishedEarly = true
            local.completed.wrappingAdd(1, ordering: .sequentiallyConsistent)
            worker.poolCore.searching.start()
        }
    }

    /// A blocking pool's worker that stopped searching (it took a unit) passes the wake-up on when units wait that no
    /// other searching worker covers: a submitter that saw it searching and no idle worker woke nobody. Units that
    /// another searcher covers (a worker a submitter woke for its unit, which may not have run yet) get no second
    /// worker: woken for nothing, that worker would find the unit gone, search with yields and park again, two
    /// context switches and a search per call. The test is the one a parking worker and a
    /// submitter make: sequentially consistent counts, so a unit pushed before a searcher left is covered by it, and a
    /// searcher that leaves afterwards looks again (`park`) or passes the wake-up on itself.
    @inline(__always)
    func passBlockingWakeUpOn() {
        guard hasWork() else { return }
        if pendingTotal() > searching.current { notify() }
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
            || (searching.current == 0
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
    func dispatchBlocking(_ synced: inout PoolState) -> (wake: PoolWorker?, spawnCount: Int) {
        // `hasWork` stops at the first run queue with a unit (usually the shard just pushed to); the count, which
        // reads every run queue, only when a thread may have to be made.
        guard synced.running < synced.limit && hasWork() else { return (nil, 0) }
        if let worker = synced.wakeIdleWorker(.searching) {
            searching.start()
            return (worker, 0)
        }
        let pending = pendingTotal()
        let searchers = searching.current
        // Searchers cover the first units; the rest get a thread each, unless every unit in flight has one
        // already: then a running unit finishes first (a steady load makes no thread, see `unitIsFinishing`).
        guard pending > searchers && synced.threads < maxThreads && unitsInFlight(outnumber: synced.threads) else {
            return (nil, 0)
        }
        synced.addThread()
        searching.start()
        return (nil, 1)
    }
}
