// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import CThreading
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The monitor thread (extra slots for blocking the pool cannot see) and saturation reports.
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
            lockPool()
            monitorStarted = false
            monitorHint.store(0, ordering: .sequentiallyConsistent)
            let remaining = threads
            lock.unlock()
            PoolCore.reportRefusal(of: "monitor", code: code, threads: remaining)
        }
    }

    func monitorMain() {
        var lastCompleted: UInt64 = 0
        while true {
            lockPool()
            if life == .stopped {
                monitorStarted = false
                monitorHint.store(0, ordering: .sequentiallyConsistent)
                leaveLocked()
                lock.unlock()
                return
            }
            if pendingTotal(includingNext: true) == 0 {
                extraSlots = 0
                publishLocked()
                monitorSleeping = true
                monitorHint.store(2, ordering: .sequentiallyConsistent)
                monitorWord.store(0)
                // Against a submitter that pushed and read the hint before it changed (see `park`).
                if pendingTotal(includingNext: true) > 0 {
                    monitorSleeping = false
                    monitorHint.store(1, ordering: .sequentiallyConsistent)
                    lock.unlock()
                } else {
                    lock.unlock()
                    while monitorWord.load() == 0 { monitorWord.wait(expected: 0) }
                    lockPool()
                    lastCompleted = completedTotal()
                    let stopped = life == .stopped
                    lock.unlock()
                    if stopped { continue }
                }
            } else {
                lock.unlock()
            }
            _ = cthr_sleep_ns(PoolCore.monitorTickNanoseconds)
            lockPool()
            var spawnCount = 0
            let completed = completedTotal()
            // Next-slot units count when no unit completed for a tick: their owner is stuck in a wait the pool
            // cannot see (a woken or new worker steals them).
            let pending = completed == lastCompleted ? pendingTotal(includingNext: true) : pendingTotal()
            // Units stranded by a refused spawn while slots are free: try again (a no-op otherwise).
            if pending > 0 && running < limit { spawnCount += dispatchLocked(allowSpawn: true, pending: pending) }
            if pending > 0 && running >= limit && completed == lastCompleted && threads < maxThreads {
                extraSlots += 1
                spawnCount += dispatchLocked(allowSpawn: true, pending: pending)
            } else if pending == 0 && extraSlots > 0 {
                extraSlots -= 1
                publishLocked()
            }
            lastCompleted = completed
            let warning = checkSaturationLocked(pending: pending)
            lock.unlock()
            for _ in 0..<spawnCount { spawn(PoolWorker(poolCore: self)) }
            if let warning { RuntimeObservation.report(.saturationBegan, .warning, warning, ["pool": label]) }
        }
    }

    // MARK: Saturation

    /// Tracks saturation (monitor tick, lock held): work waits while every thread the pool may have is busy. After
    /// the grace period it counts the episode and returns the warning to print, at most one per episode and one per
    /// ``saturationWarningIntervalNanoseconds``.
    func checkSaturationLocked(pending: Int) -> String? {
        guard pending > 0 && threads >= maxThreads && running + blockedCount >= threads else {
            saturatedSince = 0
            saturationCounted = false
            return nil
        }
        let now = cthr_clock_now_ns()
        if saturatedSince == 0 {
            saturatedSince = now
            return nil
        }
        guard !saturationCounted && now &- saturatedSince >= PoolCore.saturationGraceNanoseconds else { return nil }
        saturationCounted = true
        saturations += 1
        guard
            lastSaturationWarning == 0 || now &- lastSaturationWarning >= PoolCore.saturationWarningIntervalNanoseconds
        else { return nil }
        lastSaturationWarning = now
        saturationWarnings += 1
        let advice =
            isBlocking
            ? "raise its cap (WorkerPool(threads:kind: .blocking)) or make fewer blocking calls at once"
            : "raise its cap (WorkerPool(threads:)) or move blocking work to a blocking pool (WorkerPool.blocking, "
                + "WorkerPool.withBlockingRegion)"
        return "Threading: worker pool '\(label)' is saturated: all \(threads) of its \(maxThreads) threads (its cap) "
            + "are busy and \(pending) unit(s) wait; \(advice) (said at most every 10 s)"
    }
}
