// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import CThreading
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The monitor thread (extra slots for blocking the pool cannot see, the retirement of idle threads the pool does not
/// keep) and saturation reports.
extension PoolCore {
    // MARK: Monitor

    func startMonitor() {
        let context = Unmanaged.passRetained(self).toOpaque()
        let code = spawnRuntimeThread(named: "threading.monitor", context: context) { raw in
            let poolCore = Unmanaged<PoolCore>.fromOpaque(raw!).takeRetainedValue()
            poolCore.monitorMain()
            return nil
        }
        if code != 0 {
            Unmanaged<PoolCore>.fromOpaque(context).release()
            // Refused: the next submission tries again.
            let remaining = lock.withLock { synced in
                synced.monitor = .notStarted
                return synced.threads
            }
            reportThreadRefusal(of: "monitor", code: code, threads: remaining)
        }
    }

    func monitorMain() {
        var lastCompleted: UInt64 = 0
        while true {
            enum Step { case exit, tick, sleep }
            // When the longest-idle worker comes due for retirement while the monitor sleeps (see
            // `retireIdleWorkers`): the only deadline of the pool's sleeps.
            var retireDue = UInt64.max
            var retired: [PoolWorker] = []
            let step = lock.withLock { synced -> Step in
                if synced.life.isStopped {
                    synced.monitor = .notStarted
                    synced.leave()
                    return .exit
                }
                guard pendingTotal(includingNext: true) == 0 else { return .tick }
                synced.extraSlots = 0
                synced.monitor = .sleeping
                monitorWord.store(0)
                // Published before the second look, against a submitter that pushed and read the hint before it
                // changed (see `park`).
                hints.publish(from: &synced)
                if pendingTotal(includingNext: true) > 0 {
                    synced.monitor = .running
                    return .tick
                }
                (retired, retireDue) = retireIdleWorkers(&synced, now: cthr_clock_now_ns())
                synced.monitorDue = retireDue
                return .sleep
            }
            if step == .exit { return }
            for worker in retired { worker.parker.wake() }
            if step == .sleep {
                while monitorWord.load() == 0 {
                    if monitorWord.wait(expected: 0, deadline: retireDue) { continue }
                    (retired, retireDue) = lock.withLock { synced in
                        let due = retireIdleWorkers(&synced, now: cthr_clock_now_ns())
                        synced.monitorDue = due.nextDue
                        return due
                    }
                    for worker in retired { worker.parker.wake() }
                }
                let stopped = lock.withLock { synced in
                    lastCompleted = completedTotal()
                    return synced.life.isStopped
                }
                if stopped { continue }
            }
            _ = cthr_sleep_ns(PoolCore.monitorTickNanoseconds)
            rescueStrandedUnits()
            let sleepers = sleepingWorkersWhileSaturated()
            let (spawnCount, warning, threads, waiting) = lock.withLock { synced -> (Int, String?, Int, Int) in
                var spawnCount = 0
                let completed = completedTotal()
                // Next-slot units count when no unit completed for a tick: their owner is stuck in a wait the pool
                // cannot see (a woken or new worker steals them).
                let pending = completed == lastCompleted ? pendingTotal(includingNext: true) : pendingTotal()
                // Units stranded by a refused spawn while slots are free: try again (a no-op otherwise).
                if pending > 0 && synced.running < synced.limit {
                    spawnCount += dispatch(&synced, allowSpawn: true, pending: pending)
                }
                // Workers asleep inside units that gave no slot up (`sleepers` less the pool's visible waits):
                // blocked in calls the pool cannot see, even while others still complete units.
                let unseen = Swift.max(0, sleepers - synced.blocked)
                if pending > 0 && synced.running >= synced.limit
                    && (completed == lastCompleted || synced.extraSlots < unseen) && synced.threads < maxThreads
                {
                    synced.extraSlots = Swift.max(synced.extraSlots + 1, unseen)
                    spawnCount += dispatch(&synced, allowSpawn: true, pending: pending)
                } else if pending == 0 && synced.extraSlots > 0 {
                    synced.extraSlots -= 1
                }
                lastCompleted = completed
                // Workers left idle while work is pending (every slot busy): retired as while the monitor sleeps.
                retired = retireIdleWorkers(&synced, now: cthr_clock_now_ns()).retired
                return (spawnCount, checkSaturation(&synced, pending: pending), synced.threads, pending)
            }
            for worker in retired { worker.parker.wake() }
            for _ in 0..<spawnCount { spawn(PoolWorker(poolCore: self)) }
            if warning != nil, let deadlock = deadlockAtCap(threads: threads, pending: waiting) {
                RuntimeObservation.report(.saturationBegan, .error, deadlock, ["pool": label, "deadlock": "true"])
            } else if let warning {
                RuntimeObservation.report(
                    .saturationBegan,
                    .warning,
                    warning + oldestRunnersDescription(),
                    ["pool": label]
                )
            }
        }
    }

    // MARK: Saturation

    /// The saturation report as a deadlock, when every one of the pool's `threads` (its cap) runs a unit blocked in a
    /// wait of the library without a deadline: the units queued on the pool can then start only when one of those
    /// waits ends, so if the waits need that queued work (a `run` body waiting for another `run` on the same pool),
    /// none ever ends. Names the pool and each thread's wait; nil when some thread is not in such a wait (it may still
    /// finish its unit, or its wait ends at its deadline).
    /// Reads the threads' wait records, outside every lock of the pool.
    func deadlockAtCap(threads: Int, pending: Int) -> String? {
        let runners = observation.runners(now: cthr_clock_now_ns())
        guard threads > 0, runners.count >= threads else { return nil }
        let ids = Set(runners.map(\.threadID))
        let waits = ThreadRegistry.withRecords { records in
            records.filter { ids.contains($0.threadID) }.map { ($0.threadID, $0.observe()) }
        }
        guard waits.count == ids.count else { return nil }
        var lines: [String] = []
        for (thread, wait) in waits.sorted(by: { $0.0 < $1.0 }) {
            guard let wait, !wait.timed else { return nil }
            lines.append("thread \(thread) \(wait.kind.phrase) \(wait.target.waitTargetDescription)")
        }
        return "Threading: deadlock: worker pool '\(label)' is at its cap of \(maxThreads) threads and every one of "
            + "them is blocked in a wait with no deadline while \(pending) unit(s) queued on this same pool wait for a thread: "
            + lines.joined(separator: "; ") + "; the queued units start only when one of these waits ends, so if "
            + "the waits need that work (a run body waiting for another run on the same pool) none can ever end. "
            + "Do not wait inside a unit for work queued on its own pool (await it from async code instead, or run "
            + "it on another pool), or raise its cap"
    }

    /// Tracks saturation (monitor tick, inside its lock section): work waits while every thread the pool may have is busy. After
    /// the grace period it counts the episode and returns the warning to print, at most one per episode and one per
    /// ``saturationWarningIntervalNanoseconds``.
    func checkSaturation(_ synced: inout PoolState, pending: Int) -> String? {
        guard pending > 0 && synced.threads >= maxThreads && synced.running + synced.blocked >= synced.threads else {
            synced.saturation = .clear
            return nil
        }
        let now = cthr_clock_now_ns()
        switch synced.saturation {
        case .clear:
            synced.saturation = .since(now)
            return nil
        case .counted:
            return nil
        case .since(let start):
            guard now &- start >= PoolCore.saturationGraceNanoseconds else { return nil }
        }
        synced.saturation = .counted
        synced.saturations += 1
        let last = synced.lastSaturationWarning
        guard last == 0 || now &- last >= PoolCore.saturationWarningIntervalNanoseconds else { return nil }
        synced.lastSaturationWarning = now
        synced.saturationWarnings += 1
        let threads = synced.threads
        let advice =
            isBlocking
            ? "raise its cap (WorkerPool(threads:kind: .blocking)) or make fewer blocking calls at once"
            : "raise its cap (WorkerPool(threads:)) or move blocking work to a blocking pool (WorkerPool.blocking, "
                + "WorkerPool.withBlockingRegion)"
        return "Threading: worker pool '\(label)' is saturated: all \(threads) of its \(maxThreads) threads (its cap) "
            + "are busy and \(pending) unit(s) wait; \(advice) (said at most every 10 s)"
    }
}
