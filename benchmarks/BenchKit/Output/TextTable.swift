// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import Foundation

/// Renders studies as plain-text tables: one block per thread count, strategies ranked by throughput, then the
/// study's summary line.
public enum TextTable {
    /// The whole report as text.
    public static func render(_ report: BenchReport) -> String {
        var out = ""
        if report.build != "release" {
            out += debugBanner + "\n"
        }
        out += "Threading bench \(report.version), \(report.build) build, \(report.cpus) CPUs, \(report.system)\n"
        out += "machine: \(report.machineDescription)\n"
        out += "build: \(report.buildDescription)\n"
        out += "\(report.date)  \(report.command)\n"
        if !report.loadAverage.isEmpty {
            out += "load average \(report.loadAverage) (above \(report.cpus) means other processes competed)\n"
        }
        for study in report.studies {
            out += "\n" + render(study)
        }
        if report.studies.count > 1 {
            out += "\n"
            for study in report.studies {
                out += study.summary + "\n"
            }
        }
        return out
    }

    /// The loud banner printed when the benchmark was built without optimization.
    public static let debugBanner = """
        ************************************************************************
        *  WARNING: this is a DEBUG build. Its numbers are meaningless.        *
        *  Run:  swift run --package-path benchmarks -c release bench          *
        ************************************************************************
        """

    /// One study as text.
    public static func render(_ study: StudyResult) -> String {
        var out = "== \(study.title): one op = \(study.operation)\n"
        let parameters = study.parameters.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }
        out += "   " + parameters.joined(separator: ", ") + "\n"
        if study.results.contains(where: { $0.census != nil }) {
            return out + renderCensus(study)
        }
        if study.results.contains(where: { $0.http != nil }) {
            return out + renderHTTP(study)
        }
        let header = [
            "strategy", "kind", "ops/s", "vs best peer", "cpu ns/op", "p50 ns", "p99 ns", "max ns", "fairness",
            "validation",
        ]
        let nameWidth = max(24, (study.results.map(\.strategy.count).max() ?? 0) + 1)
        for count in study.threads {
            out += "-- \(count) thread\(count == 1 ? "" : "s")\n"
            out += row(header, nameWidth: nameWidth)
            let cells = study.results.filter { $0.threads == count }.sorted { lhs, rhs in
                if lhs.valid != rhs.valid { return lhs.valid }
                return lhs.opsPerSecond > rhs.opsPerSecond
            }
            for cell in cells {
                out += row(columns(cell), nameWidth: nameWidth)
            }
        }
        out += study.summary + "\n"
        return out
    }

    /// The blocked-queues study: one row per side with its thread census instead of throughput.
    static func renderCensus(_ study: StudyResult) -> String {
        let nameWidth = max(24, (study.results.map(\.strategy.count).max() ?? 0) + 1)
        let header = [
            "strategy", "kind", "queues", "at once", "ran", "threads before", "peak threads", "pool peak", "cap",
            "seconds", "verdict",
        ]
        let widths = [nameWidth, 7, 7, 8, 5, 15, 13, 10, 5, 8]
        var out = censusRow(header, widths: widths)
        for cell in study.results {
            guard let census = cell.census else {
                out += censusRow(
                    [
                        cell.strategy, cell.kind.rawValue, "-", "-", "-", "-", "-", "-", "-", "-",
                        cell.outcome,
                    ],
                    widths: widths
                )
                continue
            }
            out += censusRow(
                [
                    cell.strategy, cell.kind.rawValue, String(census.queues), String(census.blockedAtOnce),
                    String(census.completed), String(census.baselineThreads), String(census.peakThreads),
                    census.poolPeakThreads.map(String.init) ?? "-", census.threadCap.map(String.init) ?? "-",
                    String(format: "%.2f", census.seconds), cell.outcome,
                ],
                widths: widths
            )
        }
        out += study.summary + "\n"
        return out
    }

    /// The `http` family: one row per offload mode, with the `/health` latency, the server's CPU time per request
    /// (the whole process, and its offload threads' share), the server's threads and the ratios against
    /// `NIOThreadPool(N)` and `NIOThreadPool.singleton`.
    static func renderHTTP(_ study: StudyResult) -> String {
        let nameWidth = max(24, (study.results.map(\.strategy.count).max() ?? 0) + 1)
        let header = [
            "strategy", "kind", "req/s", "vs nio-sized", "vs singleton", "p50 us", "p99 us", "health p99 us",
            "health vs sized", "cpu us/req", "offload us/req", "cpu vs sized", "peak thr", "new thr", "validation",
        ]
        let widths = [nameWidth, 6, 9, 13, 13, 8, 9, 14, 16, 11, 15, 13, 9, 8]
        var out = censusRow(header, widths: widths)
        func ratio(_ value: Double?) -> String { value.map { String(format: "%.2fx", $0) } ?? "-" }
        func micros(_ nanoseconds: UInt64) -> String { String(format: "%.0f", Double(nanoseconds) / 1e3) }
        for cell in study.results {
            guard let figures = cell.http else {
                out += censusRow(
                    [cell.strategy, cell.kind.rawValue] + Array(repeating: "-", count: 12) + [cell.outcome],
                    widths: widths
                )
                continue
            }
            out += censusRow(
                [
                    cell.strategy, cell.kind.rawValue, compactRate(cell.opsPerSecond),
                    ratio(figures.throughputVsNIOSized), ratio(figures.throughputVsNIOSingleton), micros(cell.p50Ns),
                    micros(cell.p99Ns), micros(figures.healthP99Ns), ratio(figures.healthP99VsNIOSized),
                    cell.cpuNsPerOp > 0 ? String(format: "%.1f", cell.cpuNsPerOp / 1e3) : "-",
                    figures.offloadCpuNsPerRequest.map { String(format: "%.1f", $0 / 1e3) } ?? "-",
                    ratio(figures.cpuPerRequestVsNIOSized), String(figures.peakThreads), String(figures.threadsCreated),
                    cell.outcome,
                ],
                widths: widths
            )
        }
        out += study.summary + "\n"
        return out
    }

    static func censusRow(_ columns: [String], widths: [Int]) -> String {
        var line = "   "
        for (index, column) in columns.enumerated() {
            if index < 2 {
                line += column.padding(toLength: widths[index], withPad: " ", startingAt: 0)
            } else if index < widths.count {
                line += String(repeating: " ", count: max(widths[index] - column.count, 1)) + column
            } else {
                line += "  " + column
            }
        }
        return line + "\n"
    }

    static func columns(_ cell: CellResult) -> [String] {
        let crashed = !cell.valid && cell.opsPerSecond == 0
        return [
            cell.strategy,
            cell.kind.rawValue,
            crashed ? "-" : compactRate(cell.opsPerSecond),
            cell.ratioToBestPeer.map { String(format: "%.2fx", $0) } ?? "-",
            crashed ? "-" : String(format: "%.1f", cell.cpuNsPerOp),
            crashed ? "-" : String(cell.p50Ns),
            crashed ? "-" : String(cell.p99Ns),
            crashed ? "-" : cell.maxNs.map { String($0) } ?? "-",
            crashed ? "-" : String(format: "%.2f", cell.fairness),
            cell.outcome,
        ]
    }

    static func row(_ columns: [String], nameWidth: Int) -> String {
        let widths = [nameWidth, 10, 9, 14, 11, 9, 10, 11, 10]
        var line = "   "
        for (index, column) in columns.enumerated() {
            if index == 0 {
                line += column.padding(toLength: nameWidth, withPad: " ", startingAt: 0)
            } else if index == 1 {
                line += column.padding(toLength: widths[1], withPad: " ", startingAt: 0)
            } else if index < widths.count {
                line += String(repeating: " ", count: max(widths[index] - column.count, 1)) + column
            } else {
                line += "  " + column
            }
        }
        return line + "\n"
    }
}

/// `30.68M`, `12.7K`, `950`: throughput with an SI suffix, three or four significant digits.
public func compactRate(_ value: Double) -> String {
    if value >= 1e9 { return String(format: "%.2fG", value / 1e9) }
    if value >= 1e6 { return String(format: "%.2fM", value / 1e6) }
    if value >= 1e3 { return String(format: "%.1fK", value / 1e3) }
    return String(format: "%.0f", value)
}
