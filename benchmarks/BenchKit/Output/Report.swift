// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import Foundation

/// One strategy at one thread count in one study: the medians and the validation verdict.
public struct CellResult: Codable, Sendable, Equatable {
    /// Display name of the strategy.
    public var strategy: String
    /// Command-line identifier of the strategy.
    public var id: String
    /// Ours, peer or reference.
    public var kind: StrategyKind
    /// Worker threads.
    public var threads: Int
    /// Median completed operations per second over the repeats.
    public var opsPerSecond: Double
    /// CPU nanoseconds spent by all workers per operation (median run); spinning shows up here.
    public var cpuNsPerOp: Double
    /// Median sampled latency of one operation, nanoseconds.
    public var p50Ns: UInt64
    /// 99th percentile sampled latency of one operation, nanoseconds.
    public var p99Ns: UInt64
    /// Slowest thread's operations over the per-thread mean (1.0 is perfectly fair), median run.
    public var fairness: Double
    /// Operations that failed validation over all repeats (torn, lost or corrupt reads; lost updates).
    public var badOperations: Int
    /// True when no operation failed validation and the run ended normally.
    public var valid: Bool
    /// `ok`, `INVALID (N bad)`, `crashed (signal N)`, `corrupt (N bad reads)`, `hung (killed after N s)`.
    public var outcome: String
    /// Throughput over the best valid peer's at this thread count (nil when there is none, or invalid).
    public var ratioToBestPeer: Double?
    /// Operations per second of each repeat, in run order.
    public var repeats: [Double]
    /// The thread census of the blocked-queues study; nil in every other study.
    public var census: ThreadCensus?
    /// The longest operation seen over all repeats, nanoseconds: the largest latency sample (in `timers`, the worst
    /// lateness), or in `locks` the longest batch of 64 operations of one thread (an upper bound on the worst wait
    /// for the lock); nil in reports written before it was measured.
    public var maxNs: UInt64?
    /// `membarrier` calls per second by the locks of the process that ran the cell (median run); nil when none.
    public var membarrierCallsPerSecond: Double?
    /// The server figures of the `http` family; nil in every other family.
    public var http: HTTPFigures?

    /// Creates a cell.
    public init(
        strategy: String,
        id: String,
        kind: StrategyKind,
        threads: Int,
        opsPerSecond: Double,
        cpuNsPerOp: Double,
        p50Ns: UInt64,
        p99Ns: UInt64,
        fairness: Double,
        badOperations: Int,
        valid: Bool,
        outcome: String,
        ratioToBestPeer: Double? = nil,
        repeats: [Double],
        census: ThreadCensus? = nil
    ) {
        self.strategy = strategy
        self.id = id
        self.kind = kind
        self.threads = threads
        self.opsPerSecond = opsPerSecond
        self.cpuNsPerOp = cpuNsPerOp
        self.p50Ns = p50Ns
        self.p99Ns = p99Ns
        self.fairness = fairness
        self.badOperations = badOperations
        self.valid = valid
        self.outcome = outcome
        self.ratioToBestPeer = ratioToBestPeer
        self.repeats = repeats
        self.census = census
    }
}

/// What the `http` family measured of a server beyond requests per second and the latency of `/blocking`.
///
/// A value type of plain fields, so it is `Sendable`.
public struct HTTPFigures: Codable, Sendable, Equatable {
    /// The 99th percentile latency of `/health` while `/blocking` was loaded (median over the rounds), nanoseconds.
    public var healthP99Ns: UInt64
    /// The most threads the server process had (the largest over the rounds).
    public var peakThreads: Int
    /// Threads the server created during the measured phase (median over the rounds).
    public var threadsCreated: Int
    /// Threads created during the measured phase, per round.
    public var threadsCreatedPerRound: [Int]
    /// How many of the threads created during the measured phase (all rounds) had each name: whose they are.
    public var createdThreadNames: [String: Int]
    /// Requests per second over `NIOThreadPool(N)`'s (nil when it did not run).
    public var throughputVsNIOSized: Double?
    /// Requests per second over `NIOThreadPool.singleton`'s (nil when it did not run).
    public var throughputVsNIOSingleton: Double?
    /// `/health` p99 over `NIOThreadPool(N)`'s: above 1 is a longer wait (nil when it did not run).
    public var healthP99VsNIOSized: Double?
    /// The offload threads' share of the server's CPU time per `/blocking` answer (median over the rounds),
    /// nanoseconds: the threads named as the mode's pool names its threads (nil for a mode with no offload threads,
    /// and in reports written before it was measured). The whole process's figure is the cell's `cpuNsPerOp`.
    public var offloadCpuNsPerRequest: Double?
    /// The whole server process's CPU time per request over `NIOThreadPool(N)`'s: above 1 costs more (nil when it did
    /// not run).
    public var cpuPerRequestVsNIOSized: Double?
    /// Requests per second over the default global executor's (the `inline` mode), for a mode that installs a global
    /// executor of its own (`inline-threading-executor`); nil otherwise or when `inline` did not run.
    public var throughputVsDefaultExecutor: Double?
    /// The loaded endpoint's p99 over the default global executor's (above 1 is a longer wait), for the same modes.
    public var p99VsDefaultExecutor: Double?

    /// Creates the figures; the ratios are filled in once every mode ran.
    public init(
        healthP99Ns: UInt64,
        peakThreads: Int,
        threadsCreated: Int,
        threadsCreatedPerRound: [Int],
        createdThreadNames: [String: Int] = [:],
        offloadCpuNsPerRequest: Double? = nil
    ) {
        self.healthP99Ns = healthP99Ns
        self.peakThreads = peakThreads
        self.threadsCreated = threadsCreated
        self.threadsCreatedPerRound = threadsCreatedPerRound
        self.createdThreadNames = createdThreadNames
        self.offloadCpuNsPerRequest = offloadCpuNsPerRequest
    }
}

/// What one side of the blocked-queues study saw: N serial queues each given a task that blocks until all N tasks
/// are running or a deadline passes, and the OS threads the process had at the peak.
///
/// A value type of plain fields, so it is `Sendable`.
public struct ThreadCensus: Codable, Sendable, Equatable {
    /// Serial queues, each given one blocking task.
    public var queues: Int
    /// Seconds a task waits for the others before giving up.
    public var deadlineSeconds: Double
    /// Tasks that had started (and were blocked) when the first one was released: the most running at once.
    public var blockedAtOnce: Int
    /// Tasks that ran to the end (every task must, even when they could not all run at once).
    public var completed: Int
    /// Threads of the process (`/proc/self/task` entries) just before the tasks were submitted.
    public var baselineThreads: Int
    /// The most threads the process had while the tasks ran (sampled every millisecond, and by each task).
    public var peakThreads: Int
    /// The pool's own count of its most pool threads alive at once (ours only).
    public var poolPeakThreads: Int?
    /// The pool's documented cap on pool threads (ours only).
    public var threadCap: Int?
    /// Seconds from the first submission until every task completed.
    public var seconds: Double

    /// Creates a census.
    public init(
        queues: Int,
        deadlineSeconds: Double,
        blockedAtOnce: Int,
        completed: Int,
        baselineThreads: Int,
        peakThreads: Int,
        poolPeakThreads: Int? = nil,
        threadCap: Int? = nil,
        seconds: Double
    ) {
        self.queues = queues
        self.deadlineSeconds = deadlineSeconds
        self.blockedAtOnce = blockedAtOnce
        self.completed = completed
        self.baselineThreads = baselineThreads
        self.peakThreads = peakThreads
        self.poolPeakThreads = poolPeakThreads
        self.threadCap = threadCap
        self.seconds = seconds
    }

    /// Whether every task ran.
    public var allRan: Bool { completed == queues }

    /// Whether the pool stayed within its cap: nil when there is no cap (Dispatch).
    public var withinCap: Bool? {
        guard let threadCap, let poolPeakThreads else { return nil }
        return poolPeakThreads <= threadCap
    }

    /// `64/64 ran, 40 at once, 44 threads (pool 40, cap 40)`.
    public var description: String {
        var text = "\(completed)/\(queues) ran, \(blockedAtOnce) at once, peak \(peakThreads) threads"
        if let poolPeakThreads, let threadCap {
            text += " (pool \(poolPeakThreads), cap \(threadCap))"
        }
        return text
    }
}

/// One study: one workload at one setting (e.g. the cache at 95 % reads) across strategies and thread counts.
public struct StudyResult: Codable, Sendable, Equatable {
    /// Short identifier, also the chart's file name, e.g. `cache-r95`.
    public var id: String
    /// Family: `cache`, `locks`, `threads`, `handoff`, ...
    public var family: String
    /// Human title, e.g. `Cache, 95% reads, 1024 keys`.
    public var title: String
    /// What one operation is, e.g. `one cache read or write`.
    public var operation: String
    /// Workload parameters, for the record.
    public var parameters: [String: String]
    /// Thread counts measured, in order.
    public var threads: [Int]
    /// Every cell.
    public var results: [CellResult]
    /// The study's summary line: the winner and its ratio at each thread count.
    public var summary: String

    /// Creates a study result and fills in ratios and the summary line.
    public init(
        id: String,
        family: String,
        title: String,
        operation: String,
        parameters: [String: String],
        threads: [Int],
        results: [CellResult]
    ) {
        self.id = id
        self.family = family
        self.title = title
        self.operation = operation
        self.parameters = parameters
        self.threads = threads
        self.results = Self.withRatios(results)
        self.summary = ""
        self.summary = Self.makeSummary(title: title, threads: threads, results: self.results)
    }

    /// The best valid peer at a thread count.
    public func bestPeer(threads count: Int) -> CellResult? {
        Self.best(results, threads: count, kind: .peer)
    }

    /// The best valid strategy of ours at a thread count.
    public func bestOurs(threads count: Int) -> CellResult? {
        Self.best(results, threads: count, kind: .ours)
    }

    static func best(_ results: [CellResult], threads count: Int, kind: StrategyKind) -> CellResult? {
        results.filter { $0.threads == count && $0.kind == kind && $0.valid }.max { $0.opsPerSecond < $1.opsPerSecond }
    }

    static func withRatios(_ results: [CellResult]) -> [CellResult] {
        results.map { cell in
            var cell = cell
            if cell.valid, let peer = best(results, threads: cell.threads, kind: .peer), peer.opsPerSecond > 0 {
                cell.ratioToBestPeer = cell.opsPerSecond / peer.opsPerSecond
            } else {
                cell.ratioToBestPeer = nil
            }
            return cell
        }
    }

    static func makeSummary(title: String, threads: [Int], results: [CellResult]) -> String {
        if results.contains(where: { $0.census != nil }) {
            return censusSummary(title: title, results: results)
        }
        var parts: [String] = []
        for count in threads {
            let contenders = results.filter { $0.threads == count && $0.valid && $0.kind != .reference }
            guard let winner = contenders.max(by: { $0.opsPerSecond < $1.opsPerSecond }) else {
                parts.append("T=\(count): no valid result")
                continue
            }
            var part = "T=\(count): \(winner.strategy) (\(winner.kind.rawValue)) \(formatRate(winner.opsPerSecond))"
            if let ours = best(results, threads: count, kind: .ours),
                let peer = best(results, threads: count, kind: .peer)
            {
                part += ", best ours \(ours.strategy) = \(formatRatio(ours.opsPerSecond / peer.opsPerSecond))"
                part += " best peer \(peer.strategy)"
            } else if best(results, threads: count, kind: .ours) == nil {
                part += ", no strategy of ours measured"
            }
            parts.append(part)
        }
        let membarriers = results.compactMap { cell -> String? in
            guard let rate = cell.membarrierCallsPerSecond, rate > 0 else { return nil }
            return "\(cell.strategy) T=\(cell.threads) \(formatCallRate(rate))"
        }
        if !membarriers.isEmpty {
            parts.append("membarrier calls: " + membarriers.joined(separator: ", ") + " (every other row: none)")
        }
        return "SUMMARY \(title): " + parts.joined(separator: " | ")
    }

    /// The blocked-queues summary: each side's census, then whether ours stayed within its cap.
    static func censusSummary(title: String, results: [CellResult]) -> String {
        let parts = results.map { cell -> String in
            guard let census = cell.census else { return "\(cell.strategy) (\(cell.kind.rawValue)) \(cell.outcome)" }
            var part = "\(cell.strategy) (\(cell.kind.rawValue)) \(census.description)"
            if let within = census.withinCap { part += within ? ", within cap" : ", OVER CAP" }
            return part
        }
        return "SUMMARY \(title): " + parts.joined(separator: " | ")
    }
}

/// Everything one invocation measured, as written by `--format json`.
public struct BenchReport: Codable, Sendable, Equatable {
    /// Always `Threading bench`.
    public var tool: String
    /// The library version.
    public var version: String
    /// `release` or `debug` (debug numbers are meaningless).
    public var build: String
    /// ISO 8601 start time.
    public var date: String
    /// CPUs available to the process.
    public var cpus: Int
    /// `uname -srm`.
    public var system: String
    /// The command line that produced the report.
    public var command: String
    /// The CPU model (`model name` of `/proc/cpuinfo`), e.g. `Intel(R) Xeon(R) Processor`; nil in reports written
    /// before it was recorded.
    public var cpuModel: String?
    /// The kernel release (`uname -r`), e.g. `6.18.44`; nil in reports written before it was recorded (`system`
    /// holds it there too).
    public var kernel: String?
    /// The commit of the checkout the bench ran from when the report was written (`git rev-parse --short=12 HEAD`,
    /// with `-dirty` when tracked files differed from it; `swift run` builds the bench from that checkout just
    /// before it runs); nil when unknown.
    public var commit: String?
    /// The Swift compiler that built the bench, e.g. `6.3.1`; nil in reports written before it was recorded.
    public var swiftVersion: String?
    /// `/proc/loadavg` (1, 5 and 15 minute load averages) when the run started and when it ended: a load above the
    /// CPU count means other processes competed for the cores during the measurement.
    public var loadAverage: String
    /// The studies, in run order.
    public var studies: [StudyResult]

    /// Creates a report.
    public init(
        tool: String = "Threading bench",
        version: String,
        build: String,
        date: String,
        cpus: Int,
        system: String,
        command: String,
        loadAverage: String = "",
        cpuModel: String? = nil,
        kernel: String? = nil,
        commit: String? = nil,
        swiftVersion: String? = nil,
        studies: [StudyResult]
    ) {
        self.tool = tool
        self.version = version
        self.build = build
        self.date = date
        self.cpus = cpus
        self.system = system
        self.command = command
        self.loadAverage = loadAverage
        self.cpuModel = cpuModel
        self.kernel = kernel
        self.commit = commit
        self.swiftVersion = swiftVersion
        self.studies = studies
    }

    /// Which machine produced the report: `Intel(R) Xeon(R) Processor, 2 CPUs, Linux 6.18.44 x86_64`; the fields
    /// a report did not record are named as such, never guessed.
    public var machineDescription: String {
        "\(cpuModel ?? "CPU model not recorded"), \(cpus) CPU\(cpus == 1 ? "" : "s"), \(system)"
    }

    /// Which build produced the report: `release build, commit 3b7b49b1c2d4, Swift 6.3.1, Threading 1.0.0`.
    public var buildDescription: String {
        "\(build) build, commit \(commit ?? "not recorded"), Swift \(swiftVersion ?? "not recorded"), "
            + "Threading \(version)"
    }
}

/// `12.3 Mops/s`, `850 Kops/s`.
public func formatRate(_ opsPerSecond: Double) -> String {
    if opsPerSecond >= 1e6 { return String(format: "%.2f Mops/s", opsPerSecond / 1e6) }
    if opsPerSecond >= 1e3 { return String(format: "%.1f Kops/s", opsPerSecond / 1e3) }
    return String(format: "%.0f ops/s", opsPerSecond)
}

/// `3300 calls/s`, `12.5K calls/s`.
public func formatCallRate(_ perSecond: Double) -> String {
    perSecond >= 1e4 ? String(format: "%.1fK/s", perSecond / 1e3) : String(format: "%.0f/s", perSecond)
}

/// `3.41x`.
public func formatRatio(_ ratio: Double) -> String { String(format: "%.2fx", ratio) }
