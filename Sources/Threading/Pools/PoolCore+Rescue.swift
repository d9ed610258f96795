// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

/// The monitor's rescue of units stranded behind a stuck worker.
///
/// A unit a worker submits to its own pool goes to that worker's next slot or local queue (see ``PoolCore``). Other
/// workers take from there only when they have nothing else, so while they stay busy, a unit queued by a worker that
/// then blocks in a call the pool cannot see (a task that starts a child task, then waits in a synchronous driver or
/// on a future the child fulfils) waits for as long as the call blocks, however many workers the monitor adds: the
/// new ones find other work first. Each tick, the monitor moves the units of a worker that has run the same unit
/// since the tick before into the shared shards, where every worker looks at each pick (``QoS/agingLimit`` bounds
/// the wait of a lower lane). A worker running a long computation loses its queued units to the others the same
/// way, which only shortens their wait.
extension PoolCore {
    /// The most units moved from one worker per tick.
    static let rescueLimit = 256

    /// Moves the units queued behind every worker stuck since the last tick to the shared shards (monitor thread,
    /// no lock of the pool held). A blocking pool queues nothing behind its workers (every unit goes to its shards):
    /// nothing to look for there.
    func rescueStrandedUnits() {
        if isBlocking { return }
        let stuck = observation.localQueuesOfStuckWorkers()
        if stuck.isEmpty { return }
        let context = SchedulerThread.current
        for local in stuck {
            let stranded = local.removeStranded(limit: PoolCore.rescueLimit)
            // Taken from their owner for another worker, as a steal is (``WorkerPoolStatistics/steals``).
            local.steals.wrappingAdd(UInt64(stranded.count), ordering: .relaxed)
            for entry in stranded {
                scheduleShared(entry.unit, lane: entry.lane, counted: false, submittedAt: entry.submittedAt, context)
            }
        }
    }
}

/// Blocked workers the monitor's progress check misses.
///
/// The monitor grants an extra slot when no unit finished for a tick. A pool whose units each block briefly (a 2 ms
/// synchronous call in every request handler) keeps finishing units, so that check never fires, and the pool serves
/// `cores / block time` units per second while its CPUs idle. So while the pool is saturated (work pending, every
/// slot busy) the monitor also counts the workers whose threads sleep in the kernel inside a unit and raises the
/// extra slots to that count (less the workers blocked in the pool's own waits, which gave their slot up already).
extension PoolCore {
    /// The workers asleep inside units, sampled only when a CPU pool is saturated (0 otherwise): the only time the
    /// monitor acts on it, and one `/proc` read per running worker is paid only then.
    func sleepingWorkersWhileSaturated() -> Int {
        guard !isBlocking,
            hints.running.load(ordering: .relaxed) >= hints.limit.load(ordering: .relaxed),
            pendingTotal() > 0
        else { return 0 }
        return observation.workersSleepingInUnits()
    }
}
