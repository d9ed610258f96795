// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import ArgumentParser
import Foundation
import Threading

/// `bench locks`: uncontended (1 thread) and contended lock + increment + unlock, ours vs peers.
public struct LocksCommand: ParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "locks",
        abstract: "Lock/unlock cost, uncontended (1 thread) and contended (2+ threads), ours vs peers.",
        discussion: """
            Defaults: --threads 1,2,4,8 --seconds 0.2 --warmup 0.05 --repeat 3 (about 40 s).
            \(CommonOptions.quickHelp(defaultThreads: LocksCommand.defaultThreads)).
            Files: bench-results/locks/ (bench-results/quick/locks/ with --quick).
            """
    )

    /// Default thread counts: 1 is the uncontended case, more than the cores on purpose.
    public static let defaultThreads = CacheCommand.defaultThreads

    /// The options every family shares.
    @OptionGroup public var common: CommonOptions

    /// Instead of the timing table, one `COUNTERS locks:` line per futex-lock strategy and thread count.
    @Flag(help: "Print the lock protocol's counters (one COUNTERS line per strategy and thread count) instead.")
    public var counters = false

    public init() {}

    public func run() throws {
        let entries = try selectStrategies(
            Locks.catalog,
            filter: common.strategies,
            id: \.id,
            name: \.name,
            kind: \.kind
        )
        if common.list {
            print(listing(entries.map { ($0.id, $0.name, $0.kind, "lock, increment a shared counter, unlock") }))
            return
        }
        if counters {
            let seconds = common.seconds ?? 0.2
            for threads in common.threadCounts(defaults: Self.defaultThreads) {
                for entry in entries {
                    guard let countersRun = entry.countersRun else { continue }
                    print(countersRun(threads, seconds))
                }
            }
            return
        }
        try runFamily(
            id: "locks",
            title: "locks",
            operation: "lock, increment a shared counter, unlock",
            defaultThreads: Self.defaultThreads,
            common: common,
            cases: entries.map { BenchCase(name: $0.name, id: $0.id, kind: $0.kind, run: $0.run) }
        )
    }
}

/// `bench once`: `Once.run` after the first run, against `pthread_once` and a Swift `static let`.
public struct OnceCommand: ParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "once",
        abstract: "Run-once checks after the first run: Once vs pthread_once and a Swift static let.",
        discussion: """
            Defaults: --threads 1,2,4,8 --seconds 0.2 --warmup 0.05 --repeat 3.
            \(CommonOptions.quickHelp(defaultThreads: OnceCommand.defaultThreads)).
            Files: bench-results/once/ (bench-results/quick/once/ with --quick).
            """
    )

    /// Default thread counts.
    public static let defaultThreads = CacheCommand.defaultThreads

    /// The options every family shares.
    @OptionGroup public var common: CommonOptions

    public init() {}

    public func run() throws {
        try runReads(BenchReads.onceCatalog, id: "once", operation: "one run-once call after the first run", common)
    }
}

/// `bench threadlocal`: reads of a thread-local value, `ThreadLocal` vs `pthread_getspecific` and NIO's
/// `ThreadSpecificVariable`.
public struct ThreadLocalCommand: ParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "threadlocal",
        abstract: "Thread-local reads: ThreadLocal vs pthread_getspecific and NIO's ThreadSpecificVariable.",
        discussion: """
            Defaults: --threads 1,2,4,8 --seconds 0.2 --warmup 0.05 --repeat 3.
            \(CommonOptions.quickHelp(defaultThreads: ThreadLocalCommand.defaultThreads)).
            Files: bench-results/threadlocal/ (bench-results/quick/threadlocal/ with --quick).
            """
    )

    /// Default thread counts.
    public static let defaultThreads = CacheCommand.defaultThreads

    /// The options every family shares.
    @OptionGroup public var common: CommonOptions

    public init() {}

    public func run() throws {
        try runReads(
            BenchReads.threadLocalCatalog,
            id: "threadlocal",
            operation: "one read of a thread-local value",
            common
        )
    }
}

/// Runs the `once` or `threadlocal` family.
func runReads(_ catalog: [BenchReads.Entry], id: String, operation: String, _ common: CommonOptions) throws {
    let entries = try selectStrategies(catalog, filter: common.strategies, id: \.id, name: \.name, kind: \.kind)
    if common.list {
        print(listing(entries.map { ($0.id, $0.name, $0.kind, operation) }))
        return
    }
    try runFamily(
        id: id,
        title: id,
        operation: operation,
        defaultThreads: CacheCommand.defaultThreads,
        common: common,
        cases: entries.map { BenchCase(name: $0.name, id: $0.id, kind: $0.kind, run: $0.run) }
    )
}

/// `bench handoff`: condition/semaphore ping-pong between pairs of threads.
public struct HandoffCommand: ParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "handoff",
        abstract: "Ping-pong round trips between pairs of threads (semaphores, conditions, monitors).",
        discussion: """
            Defaults: --threads 2,4 (pairs of threads) --seconds 0.2 --warmup 0.05 --repeat 3.
            \(CommonOptions.quickHelp(defaultThreads: HandoffCommand.defaultThreads)).
            Files: bench-results/handoff/ (bench-results/quick/handoff/ with --quick).
            """
    )

    /// Default thread counts (pairs of threads).
    public static let defaultThreads = [2, 4]

    /// The options every family shares.
    @OptionGroup public var common: CommonOptions

    public init() {}

    public func run() throws {
        let entries = try selectStrategies(
            Handoff.catalog,
            filter: common.strategies,
            id: \.id,
            name: \.name,
            kind: \.kind
        )
        if common.list {
            print(listing(entries.map { ($0.id, $0.name, $0.kind, "ping-pong round trip between two threads") }))
            return
        }
        try runFamily(
            id: "handoff",
            title: "handoff",
            operation: "one ping-pong round trip between two threads",
            defaultThreads: Self.defaultThreads,
            common: common,
            cases: entries.map { BenchCase(name: $0.name, id: $0.id, kind: $0.kind, run: $0.run) }
        )
    }
}

/// `bench threads`: spawn + join, ours vs raw pthread and Foundation `Thread`.
public struct ThreadsCommand: ParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "threads",
        abstract: "Thread spawn + join cost: PosixThread vs raw pthread_create and Foundation Thread.",
        discussion: """
            Defaults: --threads 1,2 (concurrent spawners) --seconds 0.2 --warmup 0.05 --repeat 3.
            \(CommonOptions.quickHelp(defaultThreads: ThreadsCommand.defaultThreads)).
            Files: bench-results/threads/ (bench-results/quick/threads/ with --quick).
            """
    )

    /// Default thread counts (concurrent spawners).
    public static let defaultThreads = [1, 2]

    /// The options every family shares.
    @OptionGroup public var common: CommonOptions

    public init() {}

    public func run() throws {
        let entries = try selectStrategies(
            Threads.catalog,
            filter: common.strategies,
            id: \.id,
            name: \.name,
            kind: \.kind
        )
        if common.list {
            print(listing(entries.map { ($0.id, $0.name, $0.kind, "spawn a thread and join it") }))
            return
        }
        try runFamily(
            id: "threads",
            title: "threads",
            operation: "spawn a thread and join it",
            defaultThreads: Self.defaultThreads,
            common: common,
            cases: entries.map { BenchCase(name: $0.name, id: $0.id, kind: $0.kind, run: $0.run) }
        )
    }
}

/// Runs one study of a family with the shared options and emits it: `parameters` go into the report next to the
/// settings, and `summarize` replaces the study's summary line (the family's own units). Returns the study.
@discardableResult
func runFamily(
    id: String,
    title: String,
    operation: String,
    defaultThreads: [Int],
    common: CommonOptions,
    parameters: [String: String] = [:],
    cases: [BenchCase],
    summarize: (StudyResult) -> StudyResult = { $0 }
) throws -> StudyResult {
    Reporter.warnIfDebug()
    let settings = common.settings(defaults: CacheCommand.defaultSettings)
    let threads = common.threadCounts(defaults: defaultThreads)
    let progress = Progress(enabled: !common.quiet)
    progress.expect(threads.count)
    let study = summarize(
        runStudy(
            id: id,
            family: id,
            title: title,
            operation: operation,
            parameters: parameters.merging([
                "seconds": String(settings.seconds), "warmup": String(settings.warmup),
                "repeats": String(settings.repeats),
            ]) { _, setting in setting },
            threads: threads,
            cases: cases,
            settings: settings,
            progress: progress
        )
    )
    try Reporter.emit(Reporter.report([study]), options: common, family: id)
    return study
}

/// `bench queues`: serial-queue `sync` round trips, `async` throughput, ping-pong between two serial queues, and
/// the threads made under blocked serial queues; ours vs Dispatch.
public struct QueuesCommand: ParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "queues",
        abstract: "Serial queues, SerialQueue vs Dispatch: sync round trips, async throughput (1 and 4 producers), "
            + "ping-pong between two queues, threads made under 64 blocked queues.",
        discussion: """
            Defaults: --threads 1,4 --seconds 0.2 --warmup 0.05 --repeat 3;
            ping-pong runs one pair of queues. The census gives each of
            --blocked-queues 64 serial queues a task that waits (up to
            --block-seconds 2, \(QueuesCommand.quickBlockSeconds) with --quick) until all are running, each
            side in its own child process.
            \(CommonOptions.quickHelp(defaultThreads: QueuesCommand.defaultThreads)).
            Files: bench-results/queues/ (bench-results/quick/queues/ with --quick).
            """
    )

    /// Default thread counts (producers): one, and more than the cores.
    public static let defaultThreads = [1, 4]

    /// Default serial queues in the blocked-queues census (64 blocked serial queues: 64 threads on libdispatch).
    public static let defaultBlockedQueues = 64
    /// Default seconds a blocked task waits for the others.
    public static let defaultBlockSeconds = 2.0
    /// The block deadline under `--quick`.
    public static let quickBlockSeconds = 0.5

    /// The options every family shares.
    @OptionGroup public var common: CommonOptions

    /// Serial queues in the census.
    @Option(name: .customLong("blocked-queues"), help: "Serial queues in the blocked-queues census (default 64).")
    public var blockedQueues: Int = QueuesCommand.defaultBlockedQueues

    /// Seconds a blocked task waits for the others, or nil for the default.
    @Option(
        name: .customLong("block-seconds"),
        help: "Seconds each blocked task waits for all the others before giving up (default 2, 0.5 with --quick)."
    )
    public var blockSeconds: Double?

    public init() {}

    public func validate() throws {
        if blockedQueues < 1 { throw ValidationError("--blocked-queues must be at least 1") }
        if let blockSeconds, !(blockSeconds >= 0) { throw ValidationError("--block-seconds must not be negative") }
    }

    /// The block deadline this invocation uses.
    public var effectiveBlockSeconds: Double {
        blockSeconds ?? (common.quick ? Self.quickBlockSeconds : Self.defaultBlockSeconds)
    }

    public func run() throws {
        let entries = try selectStrategies(
            Queues.catalog,
            filter: common.strategies,
            id: \.id,
            name: \.name,
            kind: \.kind
        )
        if common.list {
            print(listing(entries.map { ($0.id, $0.name, $0.kind, "serial queue: sync, async, ping-pong, census") }))
            return
        }
        Reporter.warnIfDebug()
        let settings = common.settings(defaults: CacheCommand.defaultSettings)
        let threads = common.threadCounts(defaults: Self.defaultThreads)
        let progress = Progress(enabled: !common.quiet)
        progress.expect(threads.count * 2 + 2)
        let parameters = [
            "seconds": String(settings.seconds), "warmup": String(settings.warmup),
            "repeats": String(settings.repeats),
        ]
        let sync = runStudy(
            id: "queues-sync",
            family: "queues",
            title: "queues sync",
            operation: "queue.sync { counter += 1 }",
            parameters: parameters,
            threads: threads,
            cases: entries.map { BenchCase(name: $0.name, id: $0.id, kind: $0.kind, run: $0.runSync) },
            settings: settings,
            progress: progress
        )
        let async = runStudy(
            id: "queues-async",
            family: "queues",
            title: "queues async",
            operation: "queue.async { counter += 1 } (drained before the clock stops)",
            parameters: parameters,
            threads: threads,
            cases: entries.map { BenchCase(name: $0.name, id: $0.id, kind: $0.kind, run: $0.runAsync) },
            settings: settings,
            progress: progress
        )
        let pingPong = Self.withHopSummary(
            runStudy(
                id: "queues-pingpong",
                family: "queues",
                title: "queues ping-pong",
                operation: "one hop A.async -> B.async between two serial queues (1 thread = 1 pair of queues)",
                parameters: parameters,
                threads: [1],
                cases: entries.map { BenchCase(name: $0.name, id: $0.id, kind: $0.kind, run: $0.runPingPong) },
                settings: settings,
                progress: progress
            )
        )
        let census = Self.censusStudy(
            entries: entries,
            queues: blockedQueues,
            deadlineSeconds: effectiveBlockSeconds,
            runner: ChildProcessRunner()
        )
        progress.cellDone("queues blocked census, \(blockedQueues) queues")
        try Reporter.emit(Reporter.report([sync, async, pingPong, census]), options: common, family: "queues")
    }

    /// The ping-pong study with its summary in nanoseconds per hop: `SerialQueue 310 ns/hop (p50 ..., p99 ...)`.
    public static func withHopSummary(_ study: StudyResult) -> StudyResult {
        var study = study
        let parts = study.results.map { cell -> String in
            guard cell.valid, cell.opsPerSecond > 0 else { return "\(cell.strategy) \(cell.outcome)" }
            return String(
                format: "%@ %.0f ns/hop (p50 %llu, p99 %llu)",
                cell.strategy,
                1e9 / cell.opsPerSecond,
                cell.p50Ns,
                cell.p99Ns
            )
        }
        var line = "SUMMARY \(study.title): " + parts.joined(separator: ", ")
        if let ours = study.bestOurs(threads: 1), let peer = study.bestPeer(threads: 1), peer.opsPerSecond > 0 {
            line += ", ours = \(formatRatio(ours.opsPerSecond / peer.opsPerSecond)) the hop rate of \(peer.strategy)"
        }
        study.summary = line
        return study
    }

    /// The blocked-queues census, each side in its own child process, as a study of one row per side.
    public static func censusStudy(
        entries: [Queues.Entry],
        queues: Int,
        deadlineSeconds: Double,
        runner: ChildProcessRunner
    ) -> StudyResult {
        let cells = entries.map { entry -> CellResult in
            let arguments = ChildBlockedQueuesCommand.arguments(
                strategy: entry.id,
                queues: queues,
                deadlineSeconds: deadlineSeconds
            )
            let result = runner.runDecoding(
                ThreadCensus.self,
                arguments: arguments,
                timeout: deadlineSeconds + runner.grace + 10
            )
            return censusCell(entry: entry, result: result)
        }
        return StudyResult(
            id: "queues-blocked",
            family: "queues",
            title: "queues blocked",
            operation: "\(queues) serial queues, each task waits until all are running (or the deadline); "
                + "threads counted in /proc/self/task, each side in its own child process",
            parameters: ["queues": String(queues), "block seconds": String(deadlineSeconds)],
            threads: [queues],
            results: cells
        )
    }

    /// One census row: valid when every task ran and ours stayed within the pool's cap.
    public static func censusCell(entry: Queues.Entry, result: Result<ThreadCensus, ChildFailure>) -> CellResult {
        var census: ThreadCensus?
        var outcome: String
        var valid = false
        switch result {
        case .success(let value):
            census = value
            if !value.allRan {
                outcome = "INVALID (only \(value.completed)/\(value.queues) ran)"
            } else if value.withinCap == false {
                outcome = "INVALID (pool over its cap)"
            } else {
                valid = true
                let atOnce = value.blockedAtOnce == value.queues ? "all" : String(value.blockedAtOnce)
                outcome = "ok (\(atOnce) at once)"
            }
        case .failure(let failure):
            outcome = failure.outcome.abnormalDescription ?? "failed"
        }
        return CellResult(
            strategy: entry.name,
            id: entry.id,
            kind: entry.kind,
            threads: census?.queues ?? 0,
            opsPerSecond: 0,
            cpuNsPerOp: 0,
            p50Ns: 0,
            p99Ns: 0,
            fairness: 0,
            badOperations: census.map { $0.queues - $0.completed } ?? 0,
            valid: valid,
            outcome: outcome,
            repeats: [],
            census: census
        )
    }
}

/// Hidden: the blocked-queues census of one side in this process, printed as one JSON line; the parent bench runs
/// each side in its own child so the thread counts don't mix.
public struct ChildBlockedQueuesCommand: ParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "child-blocked-queues",
        abstract: "Internal: one blocked-queues census in a child process.",
        shouldDisplay: false
    )

    /// The queue to run: `serialqueue` or `dispatch`.
    @Option public var strategy: String
    /// Serial queues.
    @Option public var queues: Int
    /// Seconds a task waits for the others.
    @Option public var deadline: Double

    public init() {}

    /// The arguments that run this command for `strategy`.
    public static func arguments(strategy: String, queues: Int, deadlineSeconds: Double) -> [String] {
        [
            configuration.commandName ?? "child-blocked-queues", "--strategy", strategy, "--queues", String(queues),
            "--deadline", String(deadlineSeconds),
        ]
    }

    public func validate() throws {
        if queues < 1 { throw ValidationError("--queues must be at least 1") }
    }

    public func run() throws {
        guard let entry = Queues.catalog.first(where: { $0.id == strategy }) else {
            throw ValidationError("unknown strategy \(strategy)")
        }
        let census = entry.census(queues, deadline)
        let data = try JSONEncoder().encode(census)
        print(String(decoding: data, as: UTF8.self))
    }
}

/// `bench rcu`: RCU read-side cost vs readers, and grace-period latency.
public struct RCUCommand: ParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "rcu",
        abstract: "RCU read-side cost as readers are added (vs Mutex, NIOLockedValueBox, pthread_rwlock), and "
            + "grace-period latency (RCU.synchronize vs raw liburcu synchronize_rcu).",
        discussion: """
            Defaults: --threads 1,2,4,8 --seconds 0.2 --warmup 0.05 --repeat 3.
            \(CommonOptions.quickHelp(defaultThreads: RCUCommand.defaultThreads)).
            --strategies picks from both studies (the read side and the grace
            periods); a study with none selected is skipped.
            Files: bench-results/rcu/ (bench-results/quick/rcu/ with --quick).
            """
    )

    /// Default thread counts (readers; in the grace study, one synchronizer and T-1 readers).
    public static let defaultThreads = CacheCommand.defaultThreads

    /// The options every family shares.
    @OptionGroup public var common: CommonOptions

    public init() {}

    /// The selected strategies of each study: the `--strategies` filter applies to both catalogs together.
    public func selectedEntries() throws -> (reads: [RCUFamily.Entry], grace: [RCUFamily.Entry]) {
        let selected = try selectStrategies(
            RCUFamily.catalog + RCUFamily.graceCatalog,
            filter: common.strategies,
            id: \.id,
            name: \.name,
            kind: \.kind
        )
        let graceIDs = Set(RCUFamily.graceCatalog.map(\.id))
        return (selected.filter { !graceIDs.contains($0.id) }, selected.filter { graceIDs.contains($0.id) })
    }

    public func run() throws {
        let (readEntries, graceEntries) = try selectedEntries()
        if common.list {
            print(
                listing(
                    readEntries.map { ($0.id, $0.name, $0.kind, "read one shared Int") }
                        + graceEntries.map { ($0.id, $0.name, $0.kind, "grace period, T-1 threads reading") }
                )
            )
            return
        }
        Reporter.warnIfDebug()
        let settings = common.settings(defaults: CacheCommand.defaultSettings)
        let threads = common.threadCounts(defaults: Self.defaultThreads)
        let progress = Progress(enabled: !common.quiet)
        progress.expect(threads.count * ((readEntries.isEmpty ? 0 : 1) + (graceEntries.isEmpty ? 0 : 1)))
        let parameters = [
            "seconds": String(settings.seconds), "warmup": String(settings.warmup),
            "repeats": String(settings.repeats), "membarrier": String(RCU.usesMembarrier),
        ]
        var studies: [StudyResult] = []
        if !readEntries.isEmpty {
            studies.append(
                runStudy(
                    id: "rcu-read",
                    family: "rcu",
                    title: "rcu read side",
                    operation: "read one shared Int",
                    parameters: parameters,
                    threads: threads,
                    cases: readEntries.map { BenchCase(name: $0.name, id: $0.id, kind: $0.kind, run: $0.run) },
                    settings: settings,
                    progress: progress
                )
            )
        }
        if !graceEntries.isEmpty {
            studies.append(
                Self.withGraceSummary(
                    runStudy(
                        id: "rcu-grace",
                        family: "rcu",
                        title: "rcu grace period",
                        operation: "one grace period (RCU.synchronize() or liburcu's synchronize_rcu) "
                            + "with T-1 threads reading",
                        parameters: parameters,
                        threads: threads,
                        cases: graceEntries.map { BenchCase(name: $0.name, id: $0.id, kind: $0.kind, run: $0.run) },
                        settings: settings,
                        progress: progress
                    )
                )
            )
        }
        try Reporter.emit(Reporter.report(studies), options: common, family: "rcu")
    }

    /// The grace-period study with its summary in microseconds per grace period and, at each thread count, ours
    /// against the raw liburcu reference: `T=2: RCU.synchronize 10.1 us, synchronize_rcu (raw liburcu) 9.8 us,
    /// ours = 0.97x the reference's rate`. The study has no peer (nothing else offers grace periods).
    public static func withGraceSummary(_ study: StudyResult) -> StudyResult {
        var study = study
        let parts = study.threads.map { count -> String in
            let cells = study.results.filter { $0.threads == count }
            let times = cells.map { cell -> String in
                guard cell.valid, cell.opsPerSecond > 0 else { return "\(cell.strategy) \(cell.outcome)" }
                return String(format: "%@ %.1f us", cell.strategy, 1e6 / cell.opsPerSecond)
            }
            var part = "T=\(count): " + times.joined(separator: ", ")
            let reference = cells.first { $0.kind == .reference && $0.valid && $0.opsPerSecond > 0 }
            if let ours = study.bestOurs(threads: count), let reference {
                part += ", ours = \(formatRatio(ours.opsPerSecond / reference.opsPerSecond)) the reference's rate"
            }
            return part
        }
        study.summary = "SUMMARY \(study.title): " + parts.joined(separator: " | ")
        return study
    }
}
