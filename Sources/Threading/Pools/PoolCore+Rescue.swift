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
    /// no lock of the pool held).
    func rescueStrandedUnits() {
        let stuck = observation.localQueuesOfStuckWorkers()
        if stuck.isEmpty { return }
        let context = RuntimeThread.current
        for local in stuck {
            for entry in local.removeStranded(limit: PoolCore.rescueLimit) {
                scheduleShared(entry.unit, lane: entry.lane, counted: false, submittedAt: entry.submittedAt, context)
            }
        }
    }
}
