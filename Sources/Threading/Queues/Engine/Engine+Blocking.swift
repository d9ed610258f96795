// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import CThreading
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The blocking hooks: a worker that blocks in a wait the engine sees gives its running slot up meanwhile. And how a
/// blocking pool (``isBlocking``) keeps its thread count level under a steady load.
extension Engine {
    // MARK: Blocking hooks

    /// Called by the engine's own blocking waits before a pool worker sleeps: frees its slot so pending work runs.
    static func willBlock(_ context: EngineContext) {
        guard let worker = context.pointee.worker?.takeUnretainedValue() else { return }
        worker.engine.workerWillBlock(worker)
    }

    /// Runs a blocking wait (`body`) so that a pool worker running it gives its slot up meanwhile: the hook for
    /// blocking primitives outside the queue engine (`Semaphore.wait`). Free on threads that are not pool workers
    /// (one TSD lookup).
    @inline(__always)
    static func blocking<R, E: Error>(_ body: () throws(E) -> R) throws(E) -> R {
        let context = EngineThread.current
        guard context.pointee.worker != nil else { return try body() }
        willBlock(context)
        defer { didUnblock(context) }
        return try body()
    }

    /// Called after such a wait returns.
    static func didUnblock(_ context: EngineContext) {
        guard let worker = context.pointee.worker?.takeUnretainedValue() else { return }
        worker.engine.workerDidUnblock(worker)
    }

    func workerWillBlock(_ worker: EngineWorker) {
        // Its next-slot unit would wait for the wait: hand it to the others first (before the engine lock: no path
        // takes a run queue's lock after it).
        if let local = worker.local, local.nextHint.load(ordering: .relaxed) { spillNext(worker, local) }
        lockEngine()
        worker.blocked = true
        running -= 1
        blockedCount += 1
        let spawnCount = dispatchLocked(allowSpawn: true)
        lock.unlock()
        for _ in 0..<spawnCount { spawn(EngineWorker(engine: self)) }
    }

    func workerDidUnblock(_ worker: EngineWorker) {
        lockEngine()
        worker.blocked = false
        running += 1
        blockedCount -= 1
        publishLocked()
        lock.unlock()
    }

    // MARK: Blocking pools

    /// The parker value of a blocking pool's worker woken as a searcher (counted in `spinning` by its waker); other
    /// wake-ups (shutdown) store 1.
    static let wokenSearching: UInt32 = 2

    // A blocking pool runs calls that sleep: it needs a thread per call in flight and no more. A CPU pool's worker
    // counts in `spinning` only while it spins, and a submission seen by no spinner wakes or makes a worker. For a
    // blocking pool that made threads for units a worker was about to take: one between two units, one woken and not
    // yet running, one just made. Under a steady load the pool grew past the calls in flight, the surplus sat at the
    // bottom of the idle list (the most recently parked worker is woken first), exited after the idle timeout, and
    // was made again at the next peak; meanwhile idle workers spun, taking turns from the threads that feed the pool.
    //
    // So a blocking pool's worker counts in `spinning` whenever it searches: from its start, from its wake-up (its
    // waker counts it: `dispatchLocked`), and from the end of each unit, until it takes a unit (`workerMain`) or is
    // back on the idle list (here, under the engine lock). A submission wakes an idle worker whenever there is one
    // (waking is cheap; a searcher may be preempted), but makes a thread only for a unit that no searcher covers
    // (`notifyBlocking`, then `dispatchBlockingLocked`; the monitor through `dispatchLocked`: pending minus
    // `spinning`). A searcher that takes a unit while more wait passes the wake-up on. Its workers never spin, and its idle list is first in, first out: workers take turns, so none idles
    // for the timeout while the pool is loaded, and all exit after it once the load stops.

    /// After a push to a blocking pool: wakes an idle worker whenever there is one, as `NIOThreadPool` signals a
    /// waiting thread for each submission (a searching worker may be preempted, and the unit must not wait for it);
    /// otherwise, with no searching worker and room for a thread, makes one. Lock-free when neither is possible (a
    /// pool whose every thread is busy takes submissions without the engine lock).
    @inline(__always)
    func notifyBlocking() {
        if monitorHint.load(ordering: .sequentiallyConsistent) != 1
            || idleHint.load(ordering: .sequentiallyConsistent) > 0
            || (spinning.load(ordering: .sequentiallyConsistent) == 0
                && runningHint.load(ordering: .sequentiallyConsistent)
                    < limitHint.load(ordering: .sequentiallyConsistent))
        {
            notifySlow()
        }
    }

    /// A blocking pool's submission path (engine lock held): takes the next idle worker (counted searching) for the
    /// caller to wake once the lock is released, or, when none is idle and the units waiting outnumber the searching
    /// workers, room for a new thread (counted searching too). Returns the worker to wake and the threads to create.
    func dispatchBlockingLocked() -> (wake: EngineWorker?, spawnCount: Int) {
        let pending = pendingTotal()
        guard pending > 0 && running < limit else { return (nil, 0) }
        if let worker = idle.popLast() {
            worker.parker.store(Engine.wokenSearching)
            spinning.add(1, ordering: .sequentiallyConsistent)
            running += 1
            publishLocked()
            return (worker, 0)
        }
        let searching = spinning.load(ordering: .sequentiallyConsistent)
        guard pending > searching && threads < maxThreads else { return (nil, 0) }
        threads += 1
        peakThreads = Swift.max(peakThreads, threads)
        running += 1
        spinning.add(1, ordering: .sequentiallyConsistent)
        publishLocked()
        return (nil, 1)
    }

    /// Parks an idle worker of a blocking pool, as ``park(_:_:)`` does for a CPU pool, leaving the searching count
    /// (when `counted`) once it is on the idle list, under the engine lock: a submitter either sees it searching or
    /// finds it idle and wakes it. Returns whether the worker is counted searching now (true: woken as a searcher),
    /// or nil when it exits (the pool stopped, or it was idle for ``idleTimeoutNanoseconds``).
    func parkBlocking(_ worker: EngineWorker, _ context: EngineContext, counted: Bool) -> Bool? {
        lockEngine()
        running -= 1
        if counted { spinning.subtract(1, ordering: .sequentiallyConsistent) }
        if life == .stopped {
            exitLocked(worker, context)
            return nil
        }
        worker.parker.store(0)
        // Wakers take the last entry (`idle.popLast()`): inserted first, this worker is woken after the others.
        idle.insert(worker, at: 0)
        publishLocked()
        // Against a submitter that pushed and then read the hints before they changed (see `park`).
        if running < limit && hasWork() {
            idle.removeFirst()
            running += 1
            publishLocked()
            lock.unlock()
            return false
        }
        lock.unlock()
        let deadline = cthr_clock_deadline_after(Engine.idleTimeoutNanoseconds)
        while worker.parker.load() == 0 {
            if !worker.parker.wait(expected: 0, deadline: deadline) { break }
        }
        lockEngine()
        let woken = worker.parker.load()
        if woken != 0 {
            // Woken: the waker took it off the idle list and gave it a running slot.
            lock.unlock()
            return woken == Engine.wokenSearching
        }
        if let index = idle.firstIndex(where: { $0 === worker }) {
            idle.remove(at: index)
        }
        if threads > keptThreads || life == .stopped {
            exitLocked(worker, context)
            return nil
        }
        running += 1
        publishLocked()
        lock.unlock()
        return false
    }
}
