// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import BenchKit
import Foundation
import Glibc
import Testing

@Suite("Output formats")
struct OutputTests {
    static func cell(
        _ name: String,
        _ kind: StrategyKind,
        threads: Int,
        ops: Double,
        valid: Bool = true
    )
        -> CellResult
    {
        CellResult(
            strategy: name,
            id: name.lowercased(),
            kind: kind,
            threads: threads,
            opsPerSecond: ops,
            cpuNsPerOp: 10,
            p50Ns: 20,
            p99Ns: 90,
            fairness: 0.9,
            badOperations: valid ? 0 : 3,
            valid: valid,
            outcome: valid ? "ok" : "INVALID (3 bad)",
            repeats: [ops]
        )
    }

    static let study = StudyResult(
        id: "cache-r95",
        family: "cache",
        title: "cache 95% reads, 1024 keys",
        operation: "one cache read or write",
        parameters: ["keys": "1024"],
        threads: [1, 2],
        results: [
            cell("Ours", .ours, threads: 1, ops: 30e6), cell("PeerA", .peer, threads: 1, ops: 20e6),
            cell("PeerB", .peer, threads: 1, ops: 10e6), cell("Ours", .ours, threads: 2, ops: 60e6),
            cell("PeerA", .peer, threads: 2, ops: 10e6), cell("PeerB", .peer, threads: 2, ops: 90e6, valid: false),
            cell("Floor", .reference, threads: 2, ops: 99e6),
        ]
    )

    static let report = BenchReport(
        version: "1.0.0",
        build: "release",
        date: "2026-11-21T00:00:00Z",
        cpus: 2,
        system: "Linux",
        command: "bench",
        studies: [study]
    )

    @Test("ratios are against the best valid peer at the same thread count")
    func ratios() throws {
        let ours1 = try #require(Self.study.results.first { $0.strategy == "Ours" && $0.threads == 1 })
        #expect(ours1.ratioToBestPeer == 1.5)
        let ours2 = try #require(Self.study.results.first { $0.strategy == "Ours" && $0.threads == 2 })
        #expect(ours2.ratioToBestPeer == 6.0)  // the invalid PeerB does not count
        let invalid = try #require(Self.study.results.first { !$0.valid })
        #expect(invalid.ratioToBestPeer == nil)
        #expect(Self.study.summary.contains("T=1: Ours (ours)"))
        #expect(Self.study.summary.contains("= 6.00x best peer PeerA"))
        #expect(!Self.study.summary.contains("Floor"))  // references never win
    }

    @Test("JSON round-trips and has the documented keys")
    func json() throws {
        let text = try JSONWriter.render(Self.report)
        let decoded = try JSONDecoder().decode(BenchReport.self, from: Data(text.utf8))
        #expect(decoded == Self.report)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
        let studies = try #require(object["studies"] as? [[String: Any]])
        let results = try #require(studies.first?["results"] as? [[String: Any]])
        for key in [
            "strategy", "kind", "threads", "opsPerSecond", "cpuNsPerOp", "p50Ns", "p99Ns", "fairness",
            "valid", "outcome",
        ] {
            #expect(results[0][key] != nil, "missing \(key)")
        }
    }

    @Test("CSV has a header and one row per cell with the same number of fields")
    func csv() {
        let lines = CSVWriter.render(Self.report).split(separator: "\n").map(String.init)
        #expect(lines.first == CSVWriter.columns.joined(separator: ","))
        #expect(lines.count == 1 + Self.study.results.count)
        for line in lines {
            #expect(line.split(separator: ",", omittingEmptySubsequences: false).count == CSVWriter.columns.count)
        }
        #expect(CSVWriter.escape("a,b") == "\"a,b\"")
        #expect(CSVWriter.escape("say \"x\"") == "\"say \"\"x\"\"\"")
    }

    @Test("the SVG chart has axes, a line per strategy, dashed peers and a legend")
    func svg() {
        let svg = SVGChart.render(Self.study)
        #expect(svg.hasPrefix("<svg"))
        #expect(svg.contains("worker threads"))
        #expect(svg.contains("operations per second"))
        #expect(svg.components(separatedBy: "<polyline").count - 1 == 2)  // Ours and PeerA have 2 valid points
        #expect(svg.contains("stroke-dasharray=\"7 4\""))
        for name in ["Ours (ours)", "PeerA (peer)", "PeerB (peer)", "Floor (reference)"] {
            #expect(svg.contains(name))
        }
    }

    @Test("the table names every strategy, the validation and the summary")
    func table() {
        let text = TextTable.render(Self.report)
        #expect(text.contains("INVALID (3 bad)"))
        #expect(text.contains("6.00x"))
        #expect(text.contains("SUMMARY cache 95% reads"))
        #expect(!text.contains("DEBUG build"))
        #expect(!text.contains(TextTable.debugBanner))
    }

    @Test("the table of a debug build starts with the loud warning")
    func debugBanner() {
        var report = Self.report
        report.build = "debug"
        let text = TextTable.render(report)
        #expect(text.contains(TextTable.debugBanner))
        #expect(text.contains("DEBUG build"))
    }

    @Test("bench render re-renders a saved report without measuring")
    func render() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("bench-render-\(getpid())")
        defer { try? FileManager.default.removeItem(at: directory) }
        try Reporter.write(Self.report, to: directory)
        let saved = directory.appendingPathComponent("report.json").path
        let command = try #require(
            try BenchCommand.parseAsRoot(["render", saved, "--format", "csv"]) as? RenderCommand
        )
        #expect(command.report == saved)
        #expect(command.format == .csv)
        let decoded = try JSONDecoder().decode(BenchReport.self, from: Data(contentsOf: URL(fileURLWithPath: saved)))
        #expect(decoded == Self.report)
        for file in ["report.csv", "report.txt", "cache-r95.svg"] {
            #expect(FileManager.default.fileExists(atPath: directory.appendingPathComponent(file).path), "\(file)")
        }
        let csv = try String(contentsOf: directory.appendingPathComponent("report.csv"), encoding: .utf8)
        #expect(csv == CSVWriter.render(Self.report))
    }
}
