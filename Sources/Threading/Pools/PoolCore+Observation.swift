// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import CThreading

/// The pool's side of observability: the statistics' observed fields, timed runs, and the saturation report's
/// oldest runners.
extension PoolCore {
    /// The pool's statistics (``snapshot()``) with the stall count and, when recorded, the distributions of run time
    /// and schedule delay.
    func observedStatistics() -> WorkerPoolStatistics {
        var statistics = snapshot()
        statistics.stalls = observation.stalls.load(ordering: .relaxed)
        if observation.recordsRunTimes.load(ordering: .relaxed) {
            statistics.runTimes = observation.runTimes.distribution()
        }
        if observation.recordsScheduleDelays.load(ordering: .relaxed) {
            statistics.scheduleDelays = observation.scheduleDelays.distribution()
        }
        return statistics
    }

    /// Runs `unit` as ``run(_:worker:context:)`` does and records its run time (run-time histograms on).
    @inline(never)
    func runTimed(_ unit: PoolUnit, worker: PoolWorker, context: ThreadContext) {
        let start = cthr_clock_now_ns()
        run(unit, worker: worker, context: context)
        observation.runTimes.record(cthr_clock_now_ns() &- start)
    }

    /// The pool's longest-running workers at the watchdog's last sample, for the saturation report:
    /// `; running longest: thread 4711 (serial queue 'db', 41 s), ...` (at most three), or "" when none is known.
    /// Call it outside the pool's lock.
    func oldestRunnersDescription() -> String {
        let runners = observation.runners(now: cthr_clock_now_ns()).prefix(3)
        guard !runners.isEmpty else { return "" }
        let queues = RuntimeRegistry.queues()
        let parts = runners.map { runner in
            let work = RuntimeRegistry.describeSubject(runner.subject, origin: runner.origin, in: queues)
            let duration = runner.runningNanoseconds == 0 ? "just started" : formatDuration(runner.runningNanoseconds)
            return "thread \(runner.threadID) (\(work), \(duration))"
        }
        return "; running longest: " + parts.joined(separator: ", ")
    }
}
