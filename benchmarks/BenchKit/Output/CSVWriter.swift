// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import Foundation

/// Renders a report as CSV: one row per study, strategy and thread count.
public enum CSVWriter {
    /// The header row's columns.
    public static let columns = [
        "study", "family", "strategy", "id", "kind", "threads", "ops_per_s", "cpu_ns_per_op", "p50_ns", "p99_ns",
        "max_ns", "fairness", "bad_ops", "valid", "outcome", "ratio_to_best_peer", "health_p99_ns",
        "server_peak_threads", "threads_created", "vs_nio_sized", "vs_nio_singleton", "health_p99_vs_nio_sized",
        "offload_cpu_ns_per_op", "cpu_vs_nio_sized",
        "queues", "blocked_at_once", "tasks_completed",
        "baseline_threads", "peak_threads", "pool_peak_threads", "thread_cap",
    ]

    /// The report as CSV text with a header row.
    public static func render(_ report: BenchReport) -> String {
        var out = columns.joined(separator: ",") + "\n"
        for study in report.studies {
            for cell in study.results {
                let fields =
                    [
                        study.id, study.family, cell.strategy, cell.id, cell.kind.rawValue, String(cell.threads),
                        String(format: "%.1f", cell.opsPerSecond), String(format: "%.2f", cell.cpuNsPerOp),
                        String(cell.p50Ns), String(cell.p99Ns), cell.maxNs.map { String($0) } ?? "",
                        String(format: "%.4f", cell.fairness),
                        String(cell.badOperations), cell.valid ? "true" : "false", cell.outcome,
                        cell.ratioToBestPeer.map { String(format: "%.4f", $0) } ?? "",
                    ] + httpFields(cell.http) + censusFields(cell.census)
                out += fields.map(escape).joined(separator: ",") + "\n"
            }
        }
        return out
    }

    /// The census columns: empty outside the blocked-queues study, and for Dispatch's pool peak and cap.
    static func censusFields(_ census: ThreadCensus?) -> [String] {
        guard let census else { return Array(repeating: "", count: 7) }
        return [
            String(census.queues), String(census.blockedAtOnce), String(census.completed),
            String(census.baselineThreads), String(census.peakThreads), census.poolPeakThreads.map(String.init) ?? "",
            census.threadCap.map(String.init) ?? "",
        ]
    }

    /// The `http` family's columns (before the census's): empty in every other family.
    static func httpFields(_ figures: HTTPFigures?) -> [String] {
        guard let figures else { return Array(repeating: "", count: 8) }
        func ratio(_ value: Double?) -> String { value.map { String(format: "%.4f", $0) } ?? "" }
        return [
            String(figures.healthP99Ns), String(figures.peakThreads), String(figures.threadsCreated),
            ratio(figures.throughputVsNIOSized), ratio(figures.throughputVsNIOSingleton),
            ratio(figures.healthP99VsNIOSized),
            figures.offloadCpuNsPerRequest.map { String(format: "%.1f", $0) } ?? "",
            ratio(figures.cpuPerRequestVsNIOSized),
        ]
    }

    /// Quotes a field when it holds a comma, a quote or a newline (RFC 4180).
    public static func escape(_ field: String) -> String {
        guard field.contains(where: { $0 == "," || $0 == "\"" || $0 == "\n" }) else { return field }
        return "\"" + field.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }
}

/// Renders a report as JSON (sorted keys, pretty-printed).
public enum JSONWriter {
    /// The report as JSON text.
    public static func render(_ report: BenchReport) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        return String(decoding: try encoder.encode(report), as: UTF8.self) + "\n"
    }
}
