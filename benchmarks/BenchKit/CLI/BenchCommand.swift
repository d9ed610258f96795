// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import ArgumentParser
import Foundation

/// `bench`: every synchronization strategy side by side with the peers, on this machine, in one run.
public struct BenchCommand: ParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "bench",
        abstract: "Compare Threading's synchronization strategies with the peers you would otherwise use.",
        discussion: """
            With no subcommand, runs the cache-contention study (a shared
            dictionary cache): every strategy at 1, 2, 4 and 8 threads and at 95%, 50% and
            100% reads, 3 repeats of 0.2 s each (median reported). It takes about
            3 to 4 minutes on a 2-core machine. Progress goes to standard error.
            The table goes to standard output; report.json, report.csv,
            report.txt and one SVG chart per study go to bench-results/
            (bench-results/<family>/ for the other families, bench-results/quick/
            with --quick; --output DIR chooses the folder, --no-output skips it).
            Always build in release: swift run -c release bench (in benchmarks/;
            from the repository root add --package-path benchmarks, or run make bench).
            Flags of the default study: swift run -c release bench cache --help

            Examples:
              # the default study
              swift run -c release bench
              # smoke run, under 30 s
              swift run -c release bench --quick
              # one read ratio, longer runs, more repeats
              swift run -c release bench --threads 1,2 --read-ratio 0.95 \\
                  --seconds 1 --repeat 5
              # the peers and the CAS floor only, as CSV
              swift run -c release bench --strategies peers,cas-spin --format csv
              # the files in another folder, or none at all
              swift run -c release bench --output /tmp/run1
              swift run -c release bench --no-output
              # lock/unlock, ours vs peers; also: queues, rcu, handoff, threads
              swift run -c release bench locks --threads 1,4
              # every strategy of the cache study
              swift run -c release bench --list
              # re-render a saved report (table, CSV, charts) without measuring
              swift run -c release bench render bench-results/report.json
            """,
        subcommands: [
            CacheCommand.self, LocksCommand.self, OnceCommand.self, ThreadLocalCommand.self, ThreadsCommand.self,
            HandoffCommand.self, QueuesCommand.self,
            RCUCommand.self, RenderCommand.self, ChildCacheCommand.self, ChildBlockedQueuesCommand.self,
            ChildLocksCommand.self, PoolsCommand.self, BlockingPoolCommand.self, PoolAsyncCommand.self,
            KVServerCommand.self, TimersCommand.self, ActorsCommand.self, HTTPCommand.self,
        ],
        defaultSubcommand: CacheCommand.self
    )

    public init() {}
}

/// `bench cache` (the default): the cache-contention study.
public struct CacheCommand: ParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "cache",
        abstract: "The cache-contention study (default): a shared cache read and written by T threads.",
        discussion: """
            Defaults: --threads 1,2,4,8 --read-ratio 0.95,0.5,1.0 --keys 1024 --shape int,string
            --seconds 0.2 --warmup 0.05 --repeat 3 (about 7 minutes on 2 cores).
            Shapes: int ([Int: Int]), string (String keys, URL paths of 20-60 bytes, to class values: a page cache).
            \(CommonOptions.quickHelp(defaultThreads: CacheCommand.defaultThreads)) --read-ratio 0.95.
            Files: bench-results/ (bench-results/quick/ with --quick).
            """
    )

    /// Default thread counts: more than the cores on purpose (oversubscription is part of the workload).
    public static let defaultThreads = [1, 2, 4, 8]
    /// Default read ratios: the read-mostly cache first.
    public static let defaultReadRatios = [0.95, 0.5, 1.0]
    /// Default shapes: the integer cache, then the realistic String-keyed one.
    public static let defaultShapes: [CacheShapeID] = [.int, .string]
    /// Default durations.
    public static let defaultSettings = RunSettings(seconds: 0.2, warmup: 0.05, repeats: 3)

    /// The options every family shares.
    @OptionGroup public var common: CommonOptions

    /// Read ratios, or nil for the defaults.
    @Option(name: .customLong("read-ratio"), help: "Fractions of reads, comma-separated (e.g. 0.95,0.5,1.0).")
    public var readRatios: CommaList<Double>?

    /// Number of keys in the cache.
    @Option(name: .long, help: "Number of keys in the cache.")
    public var keys: Int = 1024

    /// Key and value shapes, or nil for the defaults.
    @Option(
        name: .customLong("shape"),
        help: "Key and value shapes, comma-separated: int ([Int: Int]), string (String keys to class values)."
    )
    public var shapes: CommaList<CacheShapeID>?

    public init() {}

    /// The shapes this invocation runs.
    public var effectiveShapes: [CacheShapeID] { shapes?.values ?? Self.defaultShapes }

    public func validate() throws {
        if let readRatios, readRatios.values.contains(where: { !(0...1).contains($0) }) {
            throw ValidationError("--read-ratio: every ratio must be between 0 and 1")
        }
        if keys < 1 { throw ValidationError("--keys must be at least 1") }
    }

    /// The read ratios this invocation runs.
    public var effectiveReadRatios: [Double] {
        readRatios?.values ?? (common.quick ? [Self.defaultReadRatios[0]] : Self.defaultReadRatios)
    }

    /// The strategies this invocation runs.
    public func selectedEntries() throws -> [CacheContention.Entry] {
        try selectStrategies(
            CacheContention.catalog,
            filter: common.strategies,
            id: \.id,
            name: \.name,
            kind: \.kind
        )
    }

    /// The `--list` text: the selected strategies grouped as ours, peer and reference.
    public func listText() throws -> String {
        listing(try selectedEntries().map { ($0.id, $0.name, $0.kind, $0.summary) })
    }

    public func run() throws {
        if common.list {
            print(try listText())
            return
        }
        let entries = try selectedEntries()
        Reporter.warnIfDebug()
        let settings = common.settings(defaults: Self.defaultSettings)
        let threads = common.threadCounts(defaults: Self.defaultThreads)
        let progress = Progress(enabled: !common.quiet)
        progress.expect(threads.count * effectiveReadRatios.count * effectiveShapes.count)
        let runner = ChildProcessRunner()
        var studies: [StudyResult] = []
        for shape in effectiveShapes {
            for ratio in effectiveReadRatios {
                let parameters = CacheContention.Parameters(keyCount: keys, readRatio: ratio, shape: shape)
                studies.append(
                    runStudy(
                        id: CacheContention.studyID(readRatio: ratio, shape: shape),
                        family: "cache",
                        title: CacheContention.title(parameters),
                        operation: "one cache read or write",
                        parameters: [
                            "keys": String(keys), "read ratio": String(ratio), "shape": shape.rawValue,
                            "seconds": String(settings.seconds), "warmup": String(settings.warmup),
                            "repeats": String(settings.repeats),
                        ],
                        threads: threads,
                        cases: CacheContention.cases(entries, parameters: parameters, childRunner: runner),
                        settings: settings,
                        progress: progress
                    )
                )
            }
        }
        try Reporter.emit(Reporter.report(studies), options: common, family: "cache")
    }
}

/// Formats `--list` output.
func listing(_ rows: [(id: String, name: String, kind: StrategyKind, summary: String)]) -> String {
    let idWidth = (rows.map(\.id.count).max() ?? 0) + 2
    var out = ""
    for kind in StrategyKind.allCases {
        let group = rows.filter { $0.kind == kind }
        out += "\(kind.rawValue):\n"
        if group.isEmpty { out += "  (none yet)\n" }
        for row in group {
            out += "  " + row.id.padding(toLength: idWidth, withPad: " ", startingAt: 0) + row.name + ": "
            out += row.summary + "\n"
        }
    }
    return out
}

/// Hidden: runs one cache strategy in this process and prints a one-line JSON report; the parent bench runs it in
/// a child process for strategies that may crash.
public struct ChildCacheCommand: ParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "child-cache",
        abstract: "Internal: one cache run in a child process.",
        shouldDisplay: false
    )

    /// The strategy to run.
    @Option public var strategy: String
    /// Worker threads.
    @Option public var threads: Int
    /// Number of keys.
    @Option public var keys: Int
    /// Fraction of reads.
    @Option(name: .customLong("read-ratio")) public var readRatio: Double
    /// Measured seconds.
    @Option public var seconds: Double
    /// Key and value shape.
    @Option public var shape: CacheShapeID = .int

    public init() {}

    public func run() throws {
        guard let entry = CacheContention.catalog.first(where: { $0.id == strategy }) else {
            throw ValidationError("unknown strategy \(strategy)")
        }
        let parameters = CacheContention.Parameters(keyCount: keys, readRatio: readRatio, shape: shape)
        let sample = entry.runInProcess(parameters, threads, seconds)
        let data = try JSONEncoder().encode(ChildRunReport(sample))
        print(String(decoding: data, as: UTF8.self))
    }
}

/// Hidden: runs one lock of the `locks` family in this process and prints a one-line JSON report; the parent bench
/// runs it in a child process to measure a lock mode that is fixed per process (`MutexLock`'s membarrier mode).
public struct ChildLocksCommand: ParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "child-locks",
        abstract: "Internal: one locks run in a child process.",
        shouldDisplay: false
    )

    /// The lock to run (its in-process identifier).
    @Option public var lock: String
    /// Worker threads.
    @Option public var threads: Int
    /// Measured seconds.
    @Option public var seconds: Double

    public init() {}

    public func run() throws {
        guard let entry = Locks.catalog.first(where: { $0.id == lock }) else {
            throw ValidationError("unknown lock \(lock)")
        }
        let data = try JSONEncoder().encode(ChildRunReport(entry.run(threads, seconds)))
        print(String(decoding: data, as: UTF8.self))
    }
}

/// `bench render`: re-renders a saved `report.json` as a table, CSV, JSON and charts, without measuring anything.
public struct RenderCommand: ParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "render",
        abstract: "Re-render a saved report.json (table, CSV, JSON, SVG charts) without running anything."
    )

    /// Path of the saved report.json.
    @Argument(help: "A report.json written by a run (bench-results/report.json by default) or by --format json.")
    public var report: String

    /// What standard output receives.
    @Option(name: .long, help: "Output on standard output: table, json or csv.")
    public var format: OutputFormat = .table

    /// The folder for the JSON, CSV, text and SVG files, if any (render writes none unless asked).
    @Option(
        name: .long,
        help: "Also write report.json, report.csv, report.txt and the SVG charts here (by default render writes none)."
    )
    public var output: String?

    public init() {}

    public func run() throws {
        let data = try Data(contentsOf: URL(fileURLWithPath: report))
        let decoded = try JSONDecoder().decode(BenchReport.self, from: data)
        try Reporter.emit(decoded, format: format, directory: output)
    }
}

extension CacheShapeID: ExpressibleByArgument {}
