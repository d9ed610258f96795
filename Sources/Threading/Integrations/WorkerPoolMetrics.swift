// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

#if MetricsSupport
import CoreMetrics

#if ServiceLifecycleSupport
import ServiceLifecycle
#endif

/// Exports the statistics of worker pools through swift-metrics (trait `MetricsSupport`): a poller that reads each
/// pool's ``WorkerPool/statistics`` every ``interval`` and records them under the names of the "Running in a
/// service" article (OpenTelemetry semantic-convention style: `threading.pool.thread.count`, ...), each with the
/// dimension `threading.pool.name` set to the pool's label.
///
/// Gauges carry the current values (threads, workers by state, queued units); counters carry what the pool's
/// monotonic counters gained since the previous poll (saturations, steals, submissions, wake-ups), so a backend sees
/// the same totals as ``WorkerPoolStatistics``. Reading the statistics takes each pool's lock once per poll; nothing
/// is added to the pools' own paths.
///
/// Run it with ``start()`` and ``stop()``, or await ``run()`` in a task of your own; with the trait
/// `ServiceLifecycleSupport` too, it is a `Service` for a `ServiceGroup` (it stops at graceful shutdown):
///
/// ```swift
/// let ingest = WorkerPool(label: "ingest")
/// let metrics = WorkerPoolMetrics(pools: [.shared, .blocking, ingest])
/// metrics.start()
/// ```
///
/// Reference semantics; `Sendable`: its mutable state (the previous snapshots, the polling task) is behind a lock.
public final class WorkerPoolMetrics: Sendable {
    /// The pools exported.
    public let pools: [WorkerPool]
    /// How often ``run()`` and ``start()`` poll.
    public let interval: Duration
    private let factory: any MetricsFactory
    private let state: LockedValue<State>

    private struct State {
        var exporters: [PoolExporter?]
        /// The task ``start()`` began, and its number: a poll of that task records only while it is still the
        /// current one, so no poll lands after ``stop()`` returned.
        var polling: (task: Task<Void, Never>, generation: Int)?
        var generations = 0
    }

    /// Creates a poller; nothing is recorded until ``poll()``, ``start()`` or ``run()``.
    ///
    /// - Parameters:
    ///   - pools: The pools to export (default: ``WorkerPool/shared`` and ``WorkerPool/blocking``). Their labels
    ///     should differ: the label is the metrics' only dimension.
    ///   - interval: The time between two polls (default: 10 s, a scrape interval). Zero or negative stops the
    ///     program with a message naming the argument.
    ///   - factory: Where the metrics go (default: the one `MetricsSystem.bootstrap` installed).
    public init(
        pools: [WorkerPool] = [.shared, .blocking],
        interval: Duration = .seconds(10),
        factory: any MetricsFactory = MetricsSystem.factory
    ) {
        require(interval > .zero, "WorkerPoolMetrics(interval: \(interval)): the interval must be positive")
        self.pools = pools
        self.interval = interval
        self.factory = factory
        self.state = LockedValue(State(exporters: Array(repeating: nil, count: pools.count), polling: nil))
    }

    /// Reads every pool's statistics once and records them.
    ///
    /// Safe from any thread; polls do not interleave (each holds the poller's lock while it records).
    public func poll() {
        poll(generation: nil)
    }

    /// Polls; with a `generation`, only while the task ``start()`` began with that number is still polling.
    private func poll(generation: Int?) {
        let snapshots = pools.map(\.statistics)
        state.withLock { state in
            if let generation, state.polling?.generation != generation { return }
            for (index, snapshot) in snapshots.enumerated() {
                if state.exporters[index] == nil {
                    state.exporters[index] = PoolExporter(label: snapshot.label, factory: factory)
                }
                state.exporters[index]!.record(snapshot)
            }
        }
    }

    /// Polls every ``interval`` until the calling task is cancelled (or, with `ServiceLifecycleSupport`, until a
    /// graceful shutdown), then polls once more and returns, so the last counts reach the backend.
    public func run() async {
        #if ServiceLifecycleSupport
        await cancelWhenGracefulShutdown { await self.pollUntilCancelled() }
        #else
        await pollUntilCancelled()
        #endif
        poll()
    }

    private func pollUntilCancelled(generation: Int? = nil) async {
        while !Task.isCancelled {
            poll(generation: generation)
            try? await Task.sleep(for: interval)
        }
    }

    /// Starts polling every ``interval`` in a task of its own; a second call while it polls does nothing.
    public func start() {
        state.withLock { state in
            guard state.polling == nil else { return }
            state.generations += 1
            let generation = state.generations
            state.polling = (Task { await self.pollUntilCancelled(generation: generation) }, generation)
        }
    }

    /// Stops the polling ``start()`` began, after one last poll; does nothing when it is not polling. No poll of
    /// that task records after this returns.
    public func stop() {
        let polling = state.withLock { state in
            defer { state.polling = nil }
            return state.polling?.task
        }
        guard let polling else { return }
        polling.cancel()
        poll()
    }
}

/// The metrics of one pool, and the counters' values at the previous poll.
private struct PoolExporter {
    let threads, threadLimit, running, idle, blocked, queued: Gauge
    let saturations, steals, submissions, wakeUps, stalls: Counter
    let runTime, scheduleDelay: Timer
    var previous: WorkerPoolStatistics?

    init(label: String, factory: any MetricsFactory) {
        let pool = [("threading.pool.name", label)]
        func state(_ name: String) -> [(String, String)] { pool + [("threading.worker.state", name)] }
        threads = Gauge(label: "threading.pool.thread.count", dimensions: pool, factory: factory)
        threadLimit = Gauge(label: "threading.pool.thread.limit", dimensions: pool, factory: factory)
        running = Gauge(label: "threading.pool.worker.count", dimensions: state("running"), factory: factory)
        idle = Gauge(label: "threading.pool.worker.count", dimensions: state("idle"), factory: factory)
        blocked = Gauge(label: "threading.pool.worker.count", dimensions: state("blocked"), factory: factory)
        queued = Gauge(label: "threading.pool.queue.size", dimensions: pool, factory: factory)
        saturations = Counter(label: "threading.pool.saturations", dimensions: pool, factory: factory)
        steals = Counter(label: "threading.pool.steals", dimensions: pool, factory: factory)
        submissions = Counter(label: "threading.pool.submissions", dimensions: pool, factory: factory)
        wakeUps = Counter(label: "threading.pool.wake_ups", dimensions: pool, factory: factory)
        stalls = Counter(label: "threading.pool.stalls", dimensions: pool, factory: factory)
        runTime = Timer(label: "threading.pool.task.duration", dimensions: pool, factory: factory)
        scheduleDelay = Timer(label: "threading.pool.task.schedule_delay", dimensions: pool, factory: factory)
    }

    mutating func record(_ now: WorkerPoolStatistics) {
        threads.record(now.threads)
        threadLimit.record(now.maxThreads)
        running.record(now.running)
        idle.record(now.idle)
        blocked.record(now.blocked)
        queued.record(now.pending)
        // Counters only grow; a counter that went back (it cannot today) exports nothing rather than a negative step.
        func gain(_ value: KeyPath<WorkerPoolStatistics, Int>) -> Int {
            Swift.max(0, now[keyPath: value] - (previous?[keyPath: value] ?? 0))
        }
        saturations.increment(by: gain(\.saturations))
        steals.increment(by: gain(\.steals))
        submissions.increment(by: gain(\.submitted))
        wakeUps.increment(by: gain(\.wakeUps))
        stalls.increment(by: gain(\.stalls))
        PoolExporter.export(now.runTimes, since: previous?.runTimes, to: runTime)
        PoolExporter.export(now.scheduleDelays, since: previous?.scheduleDelays, to: scheduleDelay)
        previous = now
    }

    /// Records in `timer` each sample `distribution` (when the pool records it) gained since `before`, as the lower
    /// bound of its bucket (within 25% of the value).
    static func export(_ distribution: LatencyDistribution?, since before: LatencyDistribution?, to timer: Timer) {
        guard let distribution else { return }
        for (index, count) in distribution.bucketCounts.enumerated() {
            let new = count &- (before.map { index < $0.bucketCounts.count ? $0.bucketCounts[index] : 0 } ?? 0)
            guard new > 0, new < 1 << 32 else { continue }
            let nanoseconds = Int64(clamping: LatencyHistogram.lowerBound(of: index))
            for _ in 0..<new { timer.recordNanoseconds(nanoseconds) }
        }
    }
}
#endif
