// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import ArgumentParser
import CBenchSupport
import Foundation
import Threading

/// A comma-separated list argument, e.g. `--threads 1,2,4,8`.
public struct CommaList<Element: LosslessStringConvertible & Sendable & Equatable>: ExpressibleByArgument, Sendable,
    Equatable
{
    /// The parsed elements, in order.
    public var values: [Element]

    /// Parses `1,2,4` (spaces allowed); nil when any element does not parse or the list is empty.
    public init?(argument: String) {
        let parts = argument.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
        var values: [Element] = []
        for part in parts {
            guard let value = Element(part) else { return nil }
            values.append(value)
        }
        guard !values.isEmpty else { return nil }
        self.values = values
    }

    /// Wraps values.
    public init(_ values: [Element]) { self.values = values }
}

/// Output format on standard output.
public enum OutputFormat: String, ExpressibleByArgument, CaseIterable, Sendable {
    case table, json, csv
}

/// Options every family shares: how long to run, which strategies, and where the results go.
public struct CommonOptions: ParsableArguments, Sendable {
    /// Worker thread counts, or nil for the family default.
    @Option(name: .long, help: "Worker thread counts, comma-separated (e.g. 1,2,4,8).")
    public var threads: CommaList<Int>?

    /// Measured seconds per run, or nil for the default.
    @Option(name: .long, help: "Measured seconds per run (per strategy, thread count and repeat).")
    public var seconds: Double?

    /// Warm-up seconds per cell and strategy, or nil for the default.
    @Option(name: .long, help: "Discarded warm-up seconds per strategy and thread count.")
    public var warmup: Double?

    /// Measured runs per cell, or nil for the default.
    @Option(name: [.customLong("repeat")], help: "Measured runs per cell; the median is reported.")
    public var repeats: Int?

    /// The `--strategies` filter: ids, names or groups, comma-separated.
    @Option(
        name: .long,
        help: "Strategies to run, comma-separated ids or names; also the groups ours, peers, references."
    )
    public var strategies: String?

    /// Whether to list the strategies instead of running them.
    @Flag(name: .long, help: "List the strategies and exit.")
    public var list = false

    /// Whether to run the short smoke configuration.
    @Flag(
        name: .long,
        help: """
            Smoke run (well under 30 s): the family's first two default thread counts (see each family's help), \
            0.02 s runs, no repeats; files go to \(CommonOptions.quickOutputFolder)/.
            """
    )
    public var quick = false

    /// What standard output receives.
    @Option(name: .long, help: "Output on standard output: table, json or csv.")
    public var format: OutputFormat = .table

    /// The folder for the JSON, CSV, text and SVG files, or nil for the default folder.
    @Option(
        name: .long,
        help: """
            Folder for report.json, report.csv, report.txt and one SVG chart per study (default: \
            \(CommonOptions.defaultOutputFolder)/ for the cache study, \(CommonOptions.defaultOutputFolder)/<family>/ \
            for the others, \(CommonOptions.quickOutputFolder)/... with --quick).
            """
    )
    public var output: String?

    /// Whether to write no files at all (standard output only).
    @Flag(name: .customLong("no-output"), help: "Write no files; print the results on standard output only.")
    public var noOutput = false

    /// Whether to suppress the progress lines.
    @Flag(name: .long, help: "No progress lines on standard error.")
    public var quiet = false

    /// The folder a run writes its files into when `--output` is not given, relative to the current directory
    /// (ignored by git).
    public static let defaultOutputFolder = "bench-results"

    /// The default folder of a `--quick` run, so a smoke run never overwrites a full run's files.
    public static let quickOutputFolder = defaultOutputFolder + "/quick"

    /// Run settings under `--quick`.
    public static let quickSettings = RunSettings(seconds: 0.02, warmup: 0.005, repeats: 1)

    /// Thread counts under `--quick`: the first two of the family's defaults.
    public static func quickThreads(defaults: [Int]) -> [Int] { Array(defaults.prefix(2)) }

    /// The `--quick` line of a family's help, e.g. `--quick: --threads 1,2 --seconds 0.02 --warmup 0.005 --repeat 1`.
    public static func quickHelp(defaultThreads: [Int]) -> String {
        let threads = quickThreads(defaults: defaultThreads).map(String.init).joined(separator: ",")
        return "--quick: --threads \(threads) --seconds \(quickSettings.seconds) --warmup \(quickSettings.warmup) "
            + "--repeat \(quickSettings.repeats)"
    }

    public init() {}

    /// Validates ranges.
    public func validate() throws {
        if noOutput && output != nil { throw ValidationError("--output and --no-output exclude each other") }
        if let threads, threads.values.contains(where: { $0 < 1 || $0 > 1024 }) {
            throw ValidationError("--threads: every count must be between 1 and 1024")
        }
        if let seconds, !(seconds > 0) { throw ValidationError("--seconds must be positive") }
        if let warmup, warmup < 0 { throw ValidationError("--warmup must not be negative") }
        if let repeats, repeats < 1 { throw ValidationError("--repeat must be at least 1") }
    }

    /// The run settings: explicit flags win, then `--quick`, then the family's defaults.
    public func settings(defaults: RunSettings) -> RunSettings {
        let base = quick ? Self.quickSettings : defaults
        return RunSettings(
            seconds: seconds ?? base.seconds,
            warmup: warmup ?? base.warmup,
            repeats: repeats ?? base.repeats
        )
    }

    /// Thread counts: explicit flag, then `--quick` (the first two defaults), then the family's default.
    public func threadCounts(defaults: [Int]) -> [Int] {
        threads?.values ?? (quick ? Self.quickThreads(defaults: defaults) : defaults)
    }

    /// The folder this invocation writes its files into, or nil under `--no-output`.
    ///
    /// `--output DIR` wins; otherwise ``defaultOutputFolder`` for the cache study and `bench-results/<family>` for
    /// the other families (so one family's run does not overwrite another's), under `bench-results/quick` with
    /// `--quick`. Relative paths are relative to the current directory.
    ///
    /// - Parameter family: The family's name (`cache`, `locks`, ...).
    /// - Returns: The folder, or nil when no file should be written.
    public func outputDirectory(family: String) -> String? {
        if noOutput { return nil }
        if let output { return output }
        let root = quick ? Self.quickOutputFolder : Self.defaultOutputFolder
        return family == "cache" ? root : root + "/" + family
    }
}

/// Chooses strategies by id, name or group from a catalog.
public func selectStrategies<T>(
    _ catalog: [T],
    filter: String?,
    id: (T) -> String,
    name: (T) -> String,
    kind: (T) -> StrategyKind
) throws -> [T] {
    guard let filter, !filter.isEmpty else { return catalog }
    var chosen: [T] = []
    var seen = Set<String>()
    for token in filter.split(separator: ",").map({ $0.trimmingCharacters(in: .whitespaces).lowercased() }) {
        let matches: [T]
        switch token {
        case "ours": matches = catalog.filter { kind($0) == .ours }
        case "peers", "peer": matches = catalog.filter { kind($0) == .peer }
        case "references", "reference", "refs": matches = catalog.filter { kind($0) == .reference }
        case "all": matches = catalog
        default:
            matches = catalog.filter { id($0).lowercased() == token || name($0).lowercased() == token }
            if matches.isEmpty {
                throw ValidationError("unknown strategy '\(token)'; run with --list to see them")
            }
        }
        for match in matches where seen.insert(id(match)).inserted {
            chosen.append(match)
        }
    }
    return chosen
}

/// Runs the studies of one invocation and writes the results where the options say.
public enum Reporter {
    /// `release` or `debug`, from how BenchKit was compiled.
    public static var buildConfiguration: String {
        #if DEBUG
        return "debug"
        #else
        return "release"
        #endif
    }

    /// Prints the loud debug-build warning on standard error (and nothing in release).
    public static func warnIfDebug() {
        markStart()
        if buildConfiguration == "debug" {
            FileHandle.standardError.write(Data((TextTable.debugBanner + "\n").utf8))
        }
    }

    /// The 1, 5 and 15 minute load averages from `/proc/loadavg`, e.g. `1.52 1.20 0.98`.
    public static func loadAverage() -> String {
        guard let text = try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8) else { return "unknown" }
        return text.split(separator: " ").prefix(3).joined(separator: " ")
    }

    /// The load average when the process started (captured by the first call).
    nonisolated(unsafe) static var loadAtStart: String?

    /// Records the load average before any measurement.
    public static func markStart() {
        if loadAtStart == nil { loadAtStart = loadAverage() }
    }

    /// Wraps studies into a report stamped with this machine and command line.
    public static func report(_ studies: [StudyResult]) -> BenchReport {
        var name = utsname()
        uname(&name)
        func field<T>(_ value: T) -> String {
            withUnsafeBytes(of: value) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        }
        let system = "\(field(name.sysname)) \(field(name.release)) \(field(name.machine))"
        let command = (["bench"] + CommandLine.arguments.dropFirst()).joined(separator: " ")
        return BenchReport(
            version: ThreadingVersion.string,
            build: buildConfiguration,
            date: ISO8601DateFormatter().string(from: Date()),
            cpus: Int(cthr_bench_available_cpus()),
            system: system,
            command: command,
            loadAverage: "start \(loadAtStart ?? "unknown"), end \(loadAverage())",
            cpuModel: cpuModel(),
            kernel: field(name.release),
            commit: sourceCommit(),
            swiftVersion: swiftCompilerVersion,
            studies: studies
        )
    }

    /// The CPU model: the first `model name` (x86) or `Model`/`Hardware` line (arm) of `/proc/cpuinfo`, or nil.
    public static func cpuModel(
        cpuinfo: String? = try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8)
    )
        -> String?
    {
        guard let cpuinfo else { return nil }
        for key in ["model name", "Model", "Hardware"] {
            for line in cpuinfo.split(separator: "\n") {
                let parts = line.split(separator: ":", maxSplits: 1)
                guard parts.count == 2, parts[0].trimmingCharacters(in: .whitespaces) == key else { continue }
                let value = parts[1].trimmingCharacters(in: .whitespaces)
                if !value.isEmpty { return value }
            }
        }
        return nil
    }

    /// The major.minor.patch of the compiler that built BenchKit, from `#if compiler` (exact for the releases
    /// listed, a lower bound `>=` above the newest one).
    public static var swiftCompilerVersion: String {
        #if compiler(>=6.4)
        return ">=6.4"
        #elseif compiler(>=6.3.2)
        return "6.3.2"
        #elseif compiler(>=6.3.1)
        return "6.3.1"
        #elseif compiler(>=6.3)
        return "6.3"
        #elseif compiler(>=6.2)
        return "6.2"
        #else
        return "6.1"
        #endif
    }

    /// The commit of the checkout BenchKit was built from (`git rev-parse --short=12 HEAD` in the folder of this
    /// source file), with `-dirty` when a tracked file differs from it; nil when git or the checkout is not there.
    public static func sourceCommit(sourceFile: String = #filePath) -> String? {
        let folder = URL(fileURLWithPath: sourceFile).deletingLastPathComponent().path
        guard let head = git(["-C", folder, "rev-parse", "--short=12", "HEAD"]), !head.isEmpty else { return nil }
        let changes = git(["-C", folder, "status", "--porcelain", "--untracked-files=no"]) ?? ""
        return changes.isEmpty ? head : head + "-dirty"
    }

    /// Runs git with `arguments` and returns its trimmed standard output, or nil when it fails.
    static func git(_ arguments: [String]) -> String? {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["git"] + arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = FileHandle.nullDevice
        do { try process.run() } catch { return nil }
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { return nil }
        return String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Prints the report of a family's run on standard output in the options' format and writes its files where
    /// the options say (``CommonOptions/outputDirectory(family:)``).
    ///
    /// - Parameters:
    ///   - report: What the run measured.
    ///   - options: The run's shared options.
    ///   - family: The family's name, which chooses the default folder.
    /// - Returns: The folder the files went to, or nil under `--no-output`.
    /// - Throws: A file-system error if a file cannot be written.
    @discardableResult
    public static func emit(_ report: BenchReport, options: CommonOptions, family: String) throws -> URL? {
        try emit(report, format: options.format, directory: options.outputDirectory(family: family))
    }

    /// Prints the report in `format` on standard output and, when `directory` is given, writes its files there.
    ///
    /// - Parameters:
    ///   - report: The report.
    ///   - format: What standard output receives.
    ///   - directory: The folder for the files, or nil for none.
    /// - Returns: The folder the files went to, or nil when `directory` is nil.
    /// - Throws: A file-system error if a file cannot be written.
    @discardableResult
    public static func emit(_ report: BenchReport, format: OutputFormat, directory: String?) throws -> URL? {
        switch format {
        case .table: print(TextTable.render(report), terminator: "")
        case .json: print(try JSONWriter.render(report), terminator: "")
        case .csv: print(CSVWriter.render(report), terminator: "")
        }
        guard let directory else { return nil }
        let url = URL(fileURLWithPath: directory)
        try write(report, to: url)
        return url
    }

    /// Writes report.json, report.csv, report.txt and, for each study, `<study>.svg` (throughput by family) and
    /// `<study>-ratio.svg` (ours over the best peer, when the study has both) into `directory` (created if needed),
    /// then prints one line on standard error saying where they went.
    ///
    /// - Parameters:
    ///   - report: The report.
    ///   - directory: The folder.
    /// - Throws: A file-system error if the folder or a file cannot be written.
    public static func write(_ report: BenchReport, to directory: URL) throws {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        try JSONWriter.render(report).write(
            to: directory.appendingPathComponent("report.json"),
            atomically: true,
            encoding: .utf8
        )
        try CSVWriter.render(report).write(
            to: directory.appendingPathComponent("report.csv"),
            atomically: true,
            encoding: .utf8
        )
        try TextTable.render(report).write(
            to: directory.appendingPathComponent("report.txt"),
            atomically: true,
            encoding: .utf8
        )
        // The blocked-queues study counts threads, not throughput: it has no chart.
        var charts = 0
        for study in report.studies where !study.results.contains(where: { $0.census != nil }) {
            try SVGChart.absolute(study, report: report).write(
                to: directory.appendingPathComponent("\(study.id).svg"),
                atomically: true,
                encoding: .utf8
            )
            charts += 1
            if let ratio = SVGChart.ratio(study, report: report) {
                try ratio.write(
                    to: directory.appendingPathComponent("\(study.id)-ratio.svg"),
                    atomically: true,
                    encoding: .utf8
                )
                charts += 1
            }
        }
        let chartFiles = charts == 1 ? "1 SVG chart" : "\(charts) SVG charts"
        let folder = directory.standardizedFileURL.path
        let line = "bench: wrote report.json, report.csv, report.txt and \(chartFiles) to \(folder)/\n"
        FileHandle.standardError.write(Data(line.utf8))
    }
}
