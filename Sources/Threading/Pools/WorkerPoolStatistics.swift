// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

/// A snapshot of a worker pool (``WorkerPool/statistics``; ``current`` is the shared pool's), for benchmarks, tests
/// and diagnostics.
///
/// A value type, so it is `Sendable`.
public struct WorkerPoolStatistics: Sendable, Hashable {
    /// The pool's label.
    public let label: String
    /// Pool threads alive now.
    public let threads: Int
    /// The most pool threads alive at once since start (or since ``resetPeak()``).
    public let peakThreads: Int
    /// Workers running work now (not blocked).
    public let running: Int
    /// Workers blocked in a wait the pool sees (`sync`, `WorkGroup.wait`, `WorkItem.wait`, a blocking region).
    public let blocked: Int
    /// Units waiting for a worker.
    public let pending: Int
    /// Idle workers.
    public let idle: Int
    /// The cap on pool threads (``WorkerPool/maxThreads``).
    public let maxThreads: Int
    /// The most tasks running at once (``WorkerPool/threadCount``; for the shared pool
    /// `cthr_cpu_effective_count()`: the affinity mask lowered to the cgroup CPU quota).
    public let cores: Int
    /// Timer and `asyncAfter` firings not queued because the pool was shut down before their deadline, and units
    /// a timed shutdown left behind that were submitted after the pool stopped.
    public let cancelledFirings: Int
    /// Times the pool was saturated (work waiting while every thread it may have was busy) for longer than the
    /// grace period (0.5 s).
    public let saturations: Int
    /// Saturation warnings printed on stderr (at most one per episode and one every 10 s).
    public let saturationWarnings: Int
    /// Units submitted to the pool since it started (tasks, serial-queue drains, timer firings).
    public let submitted: Int
    /// The part of ``submitted`` that a pool worker pushed to its own local run queue (work submitted from inside a
    /// task of the same pool), without any shared lock.
    public let localSubmissions: Int
    /// Units taken from a worker's local run queue (or next slot) for another worker to run: an idle worker's
    /// steals, and the units the pool's monitor moved to the shared queues from behind a worker stuck in one unit.
    public let steals: Int
    /// Times a parked worker was woken for work. A submission wakes at most one worker, and none while a worker is
    /// spinning for work or every slot is busy: `wakeUps / submitted` is the wake-ups per task.
    public let wakeUps: Int
    /// Times the pool's own lock was taken. The task path takes it only to wake or park a worker, never to
    /// queue or pick a unit: `lockAcquisitions / submitted` is 0 while workers are busy. (Reading the
    /// statistics takes it too, after these counters were read.)
    public let lockAcquisitions: Int
    /// Units that ran past the pool's stall threshold (``WorkerPool/stallThreshold``): each was reported once when
    /// the watchdog saw it, and once more when it ended.
    public internal(set) var stalls: Int = 0
    /// The run time of each unit (a serial queue's drain counts as one unit), while
    /// ``WorkerPool/recordsRunTimes`` is on; nil while it is off.
    public internal(set) var runTimes: LatencyDistribution? = nil
    /// The delay of each unit from its submission to a worker taking it, while
    /// ``WorkerPool/recordsScheduleDelays`` is on; nil while it is off. The time work waits for a thread: it grows
    /// when the pool is saturated or its workers are blocked.
    public internal(set) var scheduleDelays: LatencyDistribution? = nil

    /// The shared pool's state now (``WorkerPool/shared``).
    public static var current: WorkerPoolStatistics {
        PoolCore.shared.observedStatistics()
    }

    /// Restarts the shared pool's ``peakThreads`` from its current thread count.
    public static func resetPeak() {
        PoolCore.shared.resetPeak()
    }
}

extension WorkerPoolStatistics {
    /// The earlier name of ``lockAcquisitions``.
    @available(*, deprecated, renamed: "lockAcquisitions")
    public var engineLockAcquisitions: Int { lockAcquisitions }
}

/// The earlier name of ``WorkerPoolStatistics``, kept so that code written against it still builds.
@available(*, deprecated, renamed: "WorkerPoolStatistics")
public typealias QueueEngineStatistics = WorkerPoolStatistics
