// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import ArgumentParser
import Foundation
import Threading

/// `bench pools`: a pool's whole life (create, one task, shutdown), ours vs Dispatch and a bare thread.
public struct PoolsCommand: ParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "pools",
        abstract: "WorkerPool create + one task + shutdown, vs a Dispatch queue and a bare PosixThread.",
        discussion: """
            Defaults: --threads 1 (concurrent callers) --seconds 0.2 --warmup 0.05 --repeat 3.
            \(CommonOptions.quickHelp(defaultThreads: PoolsCommand.defaultThreads)).
            Files: bench-results/pools/ (bench-results/quick/pools/ with --quick).
            """
    )

    /// Default thread counts (concurrent callers).
    public static let defaultThreads = [1]

    /// The options every family shares.
    @OptionGroup public var common: CommonOptions

    public init() {}

    public func run() throws {
        try runSpawnerFamily(
            id: "pools",
            operation: "one pool life: create, run one task, shut down",
            catalog: Pools.lifeCatalog,
            defaultThreads: Self.defaultThreads,
            common: common
        )
    }
}

/// `bench blocking`: batches of blocking tasks on a blocking pool, ours vs Dispatch.
public struct BlockingPoolCommand: ParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "blocking",
        abstract: "10,000 tasks that each block 1 ms: a 64-thread blocking WorkerPool vs NIOThreadPool(64) and "
            + "Dispatch's global queue.",
        discussion: """
            Defaults: --threads 1 (concurrent callers) --seconds 0.2 --warmup 0.05 --repeat 3.
            \(CommonOptions.quickHelp(defaultThreads: BlockingPoolCommand.defaultThreads)).
            Files: bench-results/blocking/ (bench-results/quick/blocking/ with --quick).
            """
    )

    /// Default thread counts (concurrent callers).
    public static let defaultThreads = [1]

    /// The options every family shares.
    @OptionGroup public var common: CommonOptions

    public init() {}

    public func run() throws {
        let operation = "one batch of \(Pools.batchTasks) tasks that each block 1 ms"
        let entries = try selectStrategies(
            Pools.blockingCatalog,
            filter: common.strategies,
            id: \.id,
            name: \.name,
            kind: \.kind
        )
        if common.list {
            print(listing(entries.map { ($0.id, $0.name, $0.kind, operation) }))
            return
        }
        try runFamily(
            id: "blocking",
            title: "blocking",
            operation: operation,
            defaultThreads: Self.defaultThreads,
            common: common,
            parameters: ["tasks": String(Pools.batchTasks), "pool threads": String(Pools.blockingThreads)],
            cases: entries.map { BenchCase(name: $0.name, id: $0.id, kind: $0.kind, run: $0.run) },
            summarize: Self.withTaskRateSummary
        )
    }

    /// The study with its summary in tasks per second and time per batch, and ours against each peer:
    /// `WorkerPool(...) 57.8K tasks/s (173.0 ms/batch), ...; ours = 1.00x NIOThreadPool(64) ..., 9.40x Dispatch ...`.
    public static func withTaskRateSummary(_ study: StudyResult) -> StudyResult {
        var study = study
        let parts = study.threads.map { count -> String in
            let cells = study.results.filter { $0.threads == count }
            var part = cells.map { cell -> String in
                guard cell.valid, cell.opsPerSecond > 0 else { return "\(cell.strategy) \(cell.outcome)" }
                return String(
                    format: "%@ %.1fK tasks/s (%.1f ms/batch)",
                    cell.strategy,
                    cell.opsPerSecond * Double(Pools.batchTasks) / 1e3,
                    1e3 / cell.opsPerSecond
                )
            }.joined(separator: ", ")
            if let ours = study.bestOurs(threads: count) {
                let ratios = cells.filter { $0.kind == .peer && $0.valid && $0.opsPerSecond > 0 }.map {
                    "\(formatRatio(ours.opsPerSecond / $0.opsPerSecond)) \($0.strategy)"
                }
                if !ratios.isEmpty { part += "; ours = " + ratios.joined(separator: ", ") }
            }
            return part
        }
        study.summary = "SUMMARY \(study.title): " + parts.joined(separator: " | ")
        return study
    }
}

/// Lists or runs a family whose strategies are ``ThreadSpawner`` entries.
func runSpawnerFamily(
    id: String,
    operation: String,
    catalog: [Threads.Entry],
    defaultThreads: [Int],
    common: CommonOptions
) throws {
    let entries = try selectStrategies(catalog, filter: common.strategies, id: \.id, name: \.name, kind: \.kind)
    if common.list {
        print(listing(entries.map { ($0.id, $0.name, $0.kind, operation) }))
        return
    }
    try runFamily(
        id: id,
        title: id,
        operation: operation,
        defaultThreads: defaultThreads,
        common: common,
        cases: entries.map { BenchCase(name: $0.name, id: $0.id, kind: $0.kind, run: $0.run) }
    )
}

/// `bench pool-async`: empty `async` tasks on queues of a user-created `WorkerPool`, vs Dispatch's queues.
public struct PoolAsyncCommand: ParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "pool-async",
        abstract: "Empty async tasks from 1 and 4 producers on a ConcurrentQueue / SerialQueue of a user-created "
            + "WorkerPool vs concurrent / serial DispatchQueues (drained before the clock stops).",
        discussion: """
            Defaults: --threads 1,4 (producers) --seconds 0.2 --warmup 0.05 --repeat 3.
            \(CommonOptions.quickHelp(defaultThreads: PoolAsyncCommand.defaultThreads)).
            Files: bench-results/pool-async/ (bench-results/quick/pool-async/ with --quick).
            """
    )

    /// Default thread counts (producers).
    public static let defaultThreads = [1, 4]

    /// The options every family shares.
    @OptionGroup public var common: CommonOptions

    /// Instead of the timing table, one `COUNTERS pool-async:` line per queue of ours and thread count.
    @Flag(
        help: ArgumentHelp(
            "Print the pool's units, wake-ups and lock acquisitions per async (one COUNTERS line per queue of ours "
                + "and thread count) instead."
        )
    )
    public var counters = false

    /// With `--counters`: the pool's thread count (default: sized from the CPUs), e.g. 16 on a 2-CPU host to see a
    /// many-core pool's idle workers.
    @Option(help: "With --counters: the pool's threads (default: sized from the effective CPUs).")
    public var poolThreads: Int?

    public init() {}

    public func run() throws {
        if counters {
            let seconds = common.seconds ?? 0.2
            for threads in common.threadCounts(defaults: Self.defaultThreads) {
                for concurrent in [true, false] {
                    print(
                        PoolAsync.countersLine(
                            concurrent: concurrent,
                            threads: threads,
                            seconds: seconds,
                            poolThreads: poolThreads
                        )
                    )
                }
            }
            return
        }
        let entries = try selectStrategies(
            PoolAsync.catalog,
            filter: common.strategies,
            id: \.id,
            name: \.name,
            kind: \.kind
        )
        let operation =
            "queue.async { counter += 1 } on a queue of a user-created pool (drained before the clock stops)"
        if common.list {
            print(listing(entries.map { ($0.id, $0.name, $0.kind, operation) }))
            return
        }
        try runFamily(
            id: "pool-async",
            title: "pool-async",
            operation: operation,
            defaultThreads: Self.defaultThreads,
            common: common,
            parameters: ["pool threads": String(WorkerPool.defaultThreadCount)],
            cases: entries.map { BenchCase(name: $0.name, id: $0.id, kind: $0.kind, run: $0.run) },
            summarize: Self.withPairSummary
        )
    }

    /// Each of ours against the Dispatch queue of the same shape (``PoolAsync/pairs``), at each thread count.
    public static func withPairSummary(_ study: StudyResult) -> StudyResult {
        var study = study
        let parts = study.threads.map { count -> String in
            let cells = study.results.filter { $0.threads == count }
            let pairs = PoolAsync.pairs.compactMap { pair -> String? in
                guard let ours = cells.first(where: { $0.id == pair.ours }),
                    let peer = cells.first(where: { $0.id == pair.peer })
                else { return nil }
                guard ours.valid, peer.valid, peer.opsPerSecond > 0 else {
                    return "\(ours.strategy) \(ours.outcome), \(peer.strategy) \(peer.outcome)"
                }
                return "\(ours.strategy) \(formatRate(ours.opsPerSecond)) = "
                    + "\(formatRatio(ours.opsPerSecond / peer.opsPerSecond)) \(peer.strategy)"
            }
            return "T=\(count): " + pairs.joined(separator: ", ")
        }
        study.summary = "SUMMARY \(study.title): " + parts.joined(separator: " | ")
        return study
    }
}

/// `bench kv-server`: the key-value server shape, handlers on a blocking pool vs a thread per connection.
public struct KVServerCommand: ParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "kv-server",
        abstract: "The key-value server shape: T connections (socketpairs, default 64), one blocking handler each on "
            + "a blocking WorkerPool of T threads vs one PosixThread per connection; requests/s and p99.",
        discussion: """
            Defaults: --threads 64 (connections) --seconds 0.2 --warmup 0.05 --repeat 3.
            Every connection must be answered: a connection that got no answer makes
            the cell INVALID and the command exit with an error.
            \(CommonOptions.quickHelp(defaultThreads: KVServerCommand.defaultThreads)).
            Files: bench-results/kv-server/ (bench-results/quick/kv-server/ with --quick).
            """
    )

    /// Default thread counts (connections, each with its client thread).
    public static let defaultThreads = [64]

    /// The options every family shares.
    @OptionGroup public var common: CommonOptions

    public init() {}

    public func run() throws {
        let entries = try selectStrategies(
            KVServer.catalog,
            filter: common.strategies,
            id: \.id,
            name: \.name,
            kind: \.kind
        )
        let operation = "one request answered (put or get, 16 bytes in, 8 out) on one of T connections"
        if common.list {
            print(listing(entries.map { ($0.id, $0.name, $0.kind, operation) }))
            return
        }
        let study = try runFamily(
            id: "kv-server",
            title: "kv-server",
            operation: operation,
            defaultThreads: Self.defaultThreads,
            common: common,
            parameters: ["transport": "AF_UNIX socketpair"],
            cases: entries.map { BenchCase(name: $0.name, id: $0.id, kind: $0.kind, run: $0.run) },
            summarize: Self.withServerSummary
        )
        if let failure = Self.unservedFailure(study) { throw failure }
    }

    /// The study with its summary in requests per second and p99: `T=64: WorkerPool(...) 120.3K req/s p99 1.2 ms,
    /// ...; ours = 0.95x the requests/s of PosixThread per connection`.
    public static func withServerSummary(_ study: StudyResult) -> StudyResult {
        var study = study
        let parts = study.threads.map { count -> String in
            let cells = study.results.filter { $0.threads == count }
            var part =
                "T=\(count): "
                + cells.map { cell -> String in
                    guard cell.valid else { return "\(cell.strategy) \(cell.outcome)" }
                    return String(
                        format: "%@ %.0f req/s p50 %.0f us p99 %.0f us",
                        cell.strategy,
                        cell.opsPerSecond,
                        Double(cell.p50Ns) / 1e3,
                        Double(cell.p99Ns) / 1e3
                    )
                }.joined(separator: ", ")
            if let ours = study.bestOurs(threads: count), let peer = study.bestPeer(threads: count),
                peer.opsPerSecond > 0
            {
                part +=
                    "; ours = \(formatRatio(ours.opsPerSecond / peer.opsPerSecond)) the requests/s of \(peer.strategy)"
            }
            return part
        }
        study.summary = "SUMMARY \(study.title): " + parts.joined(separator: " | ")
        return study
    }

    /// The error the command ends with when a cell of ours did not serve every connection, or nil.
    public static func unservedFailure(_ study: StudyResult) -> ValidationError? {
        let failed = study.results.filter { $0.kind == .ours && !$0.valid }
        guard !failed.isEmpty else { return nil }
        let cells = failed.map { "\($0.strategy) at T=\($0.threads): \($0.outcome)" }.joined(separator: "; ")
        return ValidationError("kv-server: a connection was not served or answered wrongly: \(cells)")
    }
}

/// `bench timers`: lateness of a repeating timer while a CPU pool is saturated.
public struct TimersCommand: ParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "timers",
        abstract: "Lateness of a 5 ms repeating QueueTimer while another pool, or its own, is saturated by CPU-bound "
            + "tasks, vs a DispatchSourceTimer while Dispatch's global queue is; p50/p99/max.",
        discussion: """
            Defaults: --seconds 1 --warmup 0.05 --repeat 3 (one timer; --threads is ignored).
            \(CommonOptions.quickHelp(defaultThreads: TimersCommand.defaultThreads)).
            Files: bench-results/timers/ (bench-results/quick/timers/ with --quick).
            """
    )

    /// Default thread counts: one timer.
    public static let defaultThreads = [1]

    /// Default settings: 1 s runs, so each repeat has about 200 firings.
    public static let defaultSettings = RunSettings(seconds: 1, warmup: 0.05, repeats: 3)

    /// The options every family shares.
    @OptionGroup public var common: CommonOptions

    public init() {}

    public func run() throws {
        let entries = try selectStrategies(
            TimerLateness.catalog,
            filter: common.strategies,
            id: \.id,
            name: \.name,
            kind: \.kind
        )
        let operation =
            "one deadline of a 5 ms repeating timer; latency = its lateness (the first handler run at or "
            + "after it, minus the deadline)"
        if common.list {
            print(listing(entries.map { ($0.id, $0.name, $0.kind, operation) }))
            return
        }
        Reporter.warnIfDebug()
        let settings = common.settings(defaults: Self.defaultSettings)
        let progress = Progress(enabled: !common.quiet)
        progress.expect(1)
        let study = Self.withLatenessSummary(
            runStudy(
                id: "timers",
                family: "timers",
                title: "timers",
                operation: operation,
                parameters: [
                    "seconds": String(settings.seconds), "warmup": String(settings.warmup),
                    "repeats": String(settings.repeats),
                    "interval ms": String(Double(TimerLateness.intervalNanoseconds) / 1e6),
                ],
                threads: [1],
                cases: entries.map {
                    BenchCase(name: $0.name, id: $0.id, kind: $0.kind, run: $0.run)
                },
                settings: settings,
                progress: progress
            )
        )
        try Reporter.emit(Reporter.report([study]), options: common, family: "timers")
    }

    /// The study with its summary in lateness: `QueueTimer, another pool saturated p50 60 us p99 210 us max 1.3 ms`.
    public static func withLatenessSummary(_ study: StudyResult) -> StudyResult {
        var study = study
        let parts = study.results.map { cell -> String in
            guard cell.valid else { return "\(cell.strategy) \(cell.outcome)" }
            return String(
                format: "%@ lateness p50 %.0f us, p99 %.0f us, max %.0f us",
                cell.strategy,
                Double(cell.p50Ns) / 1e3,
                Double(cell.p99Ns) / 1e3,
                Double(cell.maxNs ?? 0) / 1e3
            )
        }
        study.summary = "SUMMARY \(study.title): " + parts.joined(separator: " | ")
        return study
    }
}
