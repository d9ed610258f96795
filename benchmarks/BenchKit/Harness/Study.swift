// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import Foundation
import Histogram

/// Durations and repetitions shared by every study of one invocation.
public struct RunSettings: Sendable, Equatable {
    /// Measured seconds per run.
    public var seconds: Double
    /// Seconds of discarded warm-up per cell and strategy.
    public var warmup: Double
    /// Measured runs per cell; the median is reported.
    public var repeats: Int

    /// Creates settings.
    public init(seconds: Double, warmup: Double, repeats: Int) {
        self.seconds = seconds
        self.warmup = warmup
        self.repeats = repeats
    }
}

/// Where a case runs: in the bench process, or in a child process because it may crash (the unsynchronized run).
public enum Isolation: String, Sendable, Codable {
    /// Runs in the bench process.
    case inProcess
    /// Runs in a re-executed child process whose crash or corruption is reported, not suffered.
    case childProcess
}

/// One strategy of one study, ready to run at any thread count.
public struct BenchCase: Sendable {
    /// Display name.
    public var name: String
    /// Command-line identifier.
    public var id: String
    /// Ours, peer or reference.
    public var kind: StrategyKind
    /// Runs `threads` workers for `seconds` and returns what they measured.
    public var run: @Sendable (_ threads: Int, _ seconds: Double) -> RunSample
    /// Child-process cases run once per cell, without warm-up or repeats.
    public var isolation: Isolation

    /// Creates a case.
    public init(
        name: String,
        id: String,
        kind: StrategyKind,
        isolation: Isolation = .inProcess,
        run: @escaping @Sendable (_ threads: Int, _ seconds: Double) -> RunSample
    ) {
        self.name = name
        self.id = id
        self.kind = kind
        self.isolation = isolation
        self.run = run
    }
}

/// Progress lines on standard error, so standard output stays clean for `--format json|csv`.
public final class Progress: @unchecked Sendable {
    private let enabled: Bool
    private let start = Date()
    private var done = 0
    private var total = 0

    /// Creates a reporter; a disabled one prints nothing.
    public init(enabled: Bool) { self.enabled = enabled }

    /// Adds `cells` to the expected total.
    public func expect(_ cells: Int) { total += cells }

    /// Reports one finished cell.
    public func cellDone(_ what: String) {
        done += 1
        guard enabled else { return }
        let elapsed = Date().timeIntervalSince(start)
        let eta = done > 0 && total > done ? elapsed / Double(done) * Double(total - done) : 0
        log(String(format: "[%3d/%3d] %@ (%.0f s elapsed, ~%.0f s left)", done, total, what, elapsed, eta))
    }

    /// Prints a line on standard error.
    public func log(_ line: String) {
        guard enabled else { return }
        FileHandle.standardError.write(Data((line + "\n").utf8))
    }
}

/// Runs a study: for each thread count, a warm-up per case, then `repeats` rounds in which every case runs once
/// (the order rotates each round so no case always runs first or last); reports each case's median round.
public func runStudy(
    id: String,
    family: String,
    title: String,
    operation: String,
    parameters: [String: String],
    threads: [Int],
    cases: [BenchCase],
    settings: RunSettings,
    progress: Progress
) -> StudyResult {
    var cells: [CellResult] = []
    for count in threads {
        var samples = Array(repeating: [RunSample](), count: cases.count)
        let measured = cases.indices.filter { cases[$0].isolation == .inProcess }
        if settings.warmup > 0 {
            for index in measured {
                _ = cases[index].run(count, settings.warmup)
            }
        }
        for round in 0..<max(settings.repeats, 1) {
            for offset in measured.indices {
                let index = measured[(offset + round) % measured.count]
                samples[index].append(cases[index].run(count, settings.seconds))
            }
        }
        for index in cases.indices where cases[index].isolation == .childProcess {
            samples[index].append(cases[index].run(count, settings.seconds))
        }
        for index in cases.indices {
            cells.append(makeCell(cases[index], threads: count, samples: samples[index]))
        }
        progress.cellDone("\(title), \(count) thread\(count == 1 ? "" : "s")")
    }
    return StudyResult(
        id: id,
        family: family,
        title: title,
        operation: operation,
        parameters: parameters,
        threads: threads,
        results: cells
    )
}

/// Reduces the repeats of one case at one thread count to a cell: the median run by throughput gives ops/s,
/// CPU cost and fairness; latency percentiles come from all runs' samples; bad operations are summed.
func makeCell(_ benchCase: BenchCase, threads: Int, samples: [RunSample]) -> CellResult {
    let ordered = samples.sorted { $0.operationsPerSecond < $1.operationsPerSecond }
    let median = ordered[ordered.count / 2]
    var latency = LatencySampler.makeHistogram()
    for sample in samples {
        latency.add(sample.latency)
    }
    let bad = samples.reduce(0) { $0 + $1.badOperations }
    let abnormal = samples.compactMap(\.abnormalOutcome).first
    let outcome: String
    if let abnormal {
        outcome = abnormal
    } else if bad > 0 {
        outcome = benchCase.isolation == .childProcess ? "corrupt (\(bad) bad reads)" : "INVALID (\(bad) bad)"
    } else {
        outcome = "ok"
    }
    let hasLatency = latency.totalCount > 0
    var cell = CellResult(
        strategy: benchCase.name,
        id: benchCase.id,
        kind: benchCase.kind,
        threads: threads,
        opsPerSecond: median.operationsPerSecond,
        cpuNsPerOp: median.cpuNanosecondsPerOperation,
        p50Ns: hasLatency ? latency.valueAtPercentile(50) : 0,
        p99Ns: hasLatency ? latency.valueAtPercentile(99) : 0,
        fairness: median.fairness,
        badOperations: bad,
        valid: bad == 0 && abnormal == nil,
        outcome: outcome,
        repeats: samples.map(\.operationsPerSecond)
    )
    cell.maxNs = samples.map(\.worstNanoseconds).max()
    if median.membarrierCallsPerSecond > 0 { cell.membarrierCallsPerSecond = median.membarrierCallsPerSecond }
    return cell
}
