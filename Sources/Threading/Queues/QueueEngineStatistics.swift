// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

/// A snapshot of the queue engine's shared worker pool, for benchmarks, tests and diagnostics.
///
/// A value type, so it is `Sendable`.
public struct QueueEngineStatistics: Sendable, Hashable {
    /// Pool threads alive now.
    public let threads: Int
    /// The most pool threads alive at once since start (or since ``resetPeak()``).
    public let peakThreads: Int
    /// Workers running work now (not blocked).
    public let running: Int
    /// Workers blocked in an engine wait (`sync`, `WorkGroup.wait`, `WorkItem.wait`).
    public let blocked: Int
    /// Units waiting for a worker.
    public let pending: Int
    /// Idle workers.
    public let idle: Int
    /// The cap on pool threads: `max(40, 4 × cores + 32)`.
    public let maxThreads: Int
    /// The core count the pool is sized from (`cthr_cpu_effective_count()`: the affinity mask lowered to the cgroup CPU quota).
    public let cores: Int
    /// Times a worker changed its nice value for a lane.
    public let niceChanges: Int
    /// Times the system refused a nice value (`EPERM`/`EACCES` when raising priority without privilege).
    public let niceRefusals: Int

    /// The engine's state now.
    public static var current: QueueEngineStatistics {
        let engine = Engine.shared
        let snapshot = engine.snapshot()
        return QueueEngineStatistics(
            threads: snapshot.threads,
            peakThreads: snapshot.peakThreads,
            running: snapshot.running,
            blocked: snapshot.blocked,
            pending: snapshot.pending,
            idle: snapshot.idle,
            maxThreads: engine.maxThreads,
            cores: engine.cores,
            niceChanges: engine.niceChanges.load(ordering: .relaxed),
            niceRefusals: engine.niceRefusals.load(ordering: .relaxed)
        )
    }

    /// Restarts ``peakThreads`` from the current thread count.
    public static func resetPeak() {
        Engine.shared.resetPeak()
    }
}
