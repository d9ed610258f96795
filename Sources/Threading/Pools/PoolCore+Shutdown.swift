// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import CThreading
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The pool's life: which submissions it accepts, and its shutdown.
extension PoolCore {
    // MARK: Life

    /// Whether the pool still takes submissions from the calling thread: it runs, or it is draining and the caller
    /// is one of its own threads (work an accepted task submits runs before the pool stops).
    ///
    /// Sequentially consistent: a submitter that makes its work visible (a queue's reader count, an item under the
    /// queue's lock) before it asks pairs with the shutdown, which moves to `draining` before it looks for work
    /// (see ``shutdown(deadline:members:)``): either the submitter sees the shutdown, or the shutdown sees the work.
    @inline(__always)
    func isAccepting(_ context: @autoclosure () -> ThreadContext) -> Bool {
        let life = hints.life.load(ordering: .sequentiallyConsistent)
        if life == PoolHints.lifeRunning { return true }
        return life == PoolHints.lifeDraining && context().pointee.worker?.takeUnretainedValue().poolCore === self
    }

    /// What a trapping submission (`async`, `asyncAfter`, a ``QueueTimer``, `addJob`) does when the pool refused
    /// it (see ``isAccepting(_:)``). From another thread it traps: a fire-and-forget submission after `shutdown()`
    /// is a programming error, never a silent drop, and code that may race with a shutdown uses the recoverable
    /// forms (`tryAsync`, `run`, `tryAddJob`). From a thread of this pool (a task still running after a timed
    /// shutdown gave up on it) the work is dropped and counted in ``WorkerPoolStatistics/cancelledFirings``: the
    /// shutdown already abandoned the work that had not started, and this is more of it.
    func refuse(_ what: @autoclosure () -> String) {
        if SchedulerThread.current.pointee.worker?.takeUnretainedValue().poolCore === self {
            droppedAfterStop.add(1, ordering: .relaxed)
            return
        }
        threadingFatal(
            "Threading: \(what()): worker pool '\(label)' is shut down (shutdown() was called); it takes no new "
                + "work. Use the form that reports a refusal (tryAsync, tryAsyncAfter, QueueTimer.start, tryAddJob, "
                + "try await run) where a submission may race with the shutdown, or shut the pool down after its "
                + "last submission."
        )
    }

    /// Whether the pool takes a trapping submission: true when it accepts it (see ``isAccepting(_:)``); otherwise
    /// ``refuse(_:)`` traps or, on a thread of the pool, counts the drop and this returns false.
    @inline(__always)
    func requireAccepting(_ what: @autoclosure () -> String) -> Bool {
        if hints.life.load(ordering: .relaxed) == PoolHints.lifeRunning { return true }
        if isAccepting(SchedulerThread.current) { return true }
        refuse(what())
        return false
    }

    /// Whether the pool stopped (its threads exit; nothing more runs).
    var isStopped: Bool { hints.life.load(ordering: .relaxed) == PoolHints.lifeStopped }

    /// Whether the pool was shut down (draining or stopped).
    var isShutDown: Bool { hints.life.load(ordering: .acquiring) != PoolHints.lifeRunning }

    /// What a shutdown left undone.
    struct Leftover {
        var tasksNotRun: Int
        var busyThreads: Int
    }

    /// Shuts the pool down: stops taking submissions from other threads, waits until every accepted unit ran (and
    /// every queue and job queue of the pool is empty) or `deadline` passed, then stops: idle threads and the
    /// monitor exit and are joined. After the deadline, pending units are dropped (released, never run) and threads
    /// still running a task exit when it returns. Blocking; never on a thread of this pool.
    ///
    /// What was left is counted after the pool stopped, each member under its own lock (``PoolMember/
    /// abandonAtStop()``): a member's submitters check the pool's life under that lock, so a task is either refused
    /// or counted, and no task of a serial queue's taken batch starts once its member was counted.
    func shutdown(deadline: UInt64, members: () -> [any PoolMember]) -> Leftover {
        lock.withLock { synced in
            if case .running = synced.life { synced.life = .draining }
        }
        var pause = PoolCore.shutdownFirstPollNanoseconds
        while !isQuiescent(members) && cthr_clock_now_ns() < deadline {
            PoolCore.backOff(&pause)
        }
        var leftover = Leftover(tasksNotRun: 0, busyThreads: 0)
        // Every run queue is closed: a unit pushed from now on is refused (and counted), never stranded.
        var dropped: [PoolUnit] = []
        let (wake, monitorAsleep) = lock.withLock { synced -> ([PoolWorker], Bool) in
            synced.stop()
            for index in 0..<shardCount { leftover.tasksNotRun += shards[index].close(into: &dropped) }
            for index in 0..<slotBound.load(ordering: .relaxed) {
                leftover.tasksNotRun += slots[index].close(into: &dropped)
            }
            let wake = synced.wakeEveryIdleWorker()
            let monitorAsleep = synced.monitor == .sleeping
            if monitorAsleep { synced.monitor = .running }
            monitorWord.store(1)
            return (wake, monitorAsleep)
        }
        // Released outside the lock: their closures' deinitializers may take locks, and a job queue's job ends.
        for unit in dropped { PoolCore.unitDropped(unit) }
        dropped.removeAll()
        for member in members() where member.poolCore === self { leftover.tasksNotRun += member.abandonAtStop() }
        for worker in wake { worker.parker.wake() }
        if monitorAsleep { monitorWord.wake() }
        // Join: every thread that is not busy exits promptly and is joined; after the deadline, threads still
        // running a task are left to exit (detached) when it returns, and counted then. (Not at the stop: a blocking
        // pool's unit counts itself completed just before its last act (`unitIsFinishing`) and is still running for
        // those few instructions; a stop that came then, before the deadline, waits for its thread like any other.)
        pause = PoolCore.shutdownFirstPollNanoseconds
        while true {
            let (joinable, done) = lock.withLock { synced -> ([pthread_t], Bool) in
                let remaining = synced.threads + (synced.monitor == .notStarted ? 0 : 1)
                let busy = remaining == 0 ? 0 : busyWorkers()
                let done = remaining == 0 || (remaining <= busy && cthr_clock_now_ns() >= deadline)
                if done { leftover.busyThreads = busy }
                return (synced.takeExited(done: done), done)
            }
            for thread in joinable { _ = cthr_thread_join(thread, nil) }
            if done { return leftover }
            PoolCore.backOff(&pause)
        }
    }

    /// Workers running a unit now (blocked ones included).
    func busyWorkers() -> Int {
        var busy = 0
        let bound = slotBound.load(ordering: .sequentiallyConsistent)
        for index in 0..<bound where slots[index].executing.load(ordering: .relaxed) { busy += 1 }
        return busy
    }

    /// Shutdown polls for quiescence and for exiting threads, first after this long, then twice as long each time
    /// up to 1 ms: an idle pool shuts down in tens of microseconds, a busy one costs at most 1000 polls a second.
    static let shutdownFirstPollNanoseconds: UInt64 = 10_000

    static func backOff(_ pause: inout UInt64) {
        _ = cthr_sleep_ns(pause)
        pause = Swift.min(pause * 2, 1_000_000)
    }

    /// Whether nothing the pool accepted is left: no unit pending or running, no member with pending work, and no
    /// submission or completion between the two looks at the counters (so no work moved from a queue to the pool
    /// in between).
    func isQuiescent(_ members: () -> [any PoolMember]) -> Bool {
        // Completions first, then submissions: every counter only grows and a unit is counted submitted before it
        // can complete, so equal sums mean that at one instant every submitted unit had completed.
        let before = (completedTotal(), submittedTotal())
        guard before.0 == before.1 else { return false }
        for member in members() where member.poolCore === self && member.pendingTaskCount > 0 {
            return false
        }
        let after = (completedTotal(), submittedTotal())
        return after == before
    }
}

/// An object that holds work for a pool outside the pool's lanes: a queue core or a job queue core.
protocol PoolMember: AnyObject {
    /// The pool that runs the member's work.
    var poolCore: PoolCore { get }
    /// Tasks accepted and not yet started (queued items, a serial queue's taken batch, jobs not started).
    var pendingTaskCount: Int { get }
    /// Called once the pool stopped: the tasks accepted and not started, counted under the member's lock; none of
    /// them starts afterwards (a serial queue's drain gives its taken batch up; a job queue's jobs end cancelled).
    func abandonAtStop() -> Int
}

extension PoolMember {
    func abandonAtStop() -> Int { pendingTaskCount }
}
