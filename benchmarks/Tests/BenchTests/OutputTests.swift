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
        system: "Linux 6.18.44 x86_64",
        command: "bench",
        cpuModel: "Example CPU @ 2.0GHz",
        kernel: "6.18.44",
        commit: "0123456789ab",
        swiftVersion: "6.3.1",
        studies: [study]
    )

    /// The series of each panel of a chart: `[panel title: [(name, colour)]]`, in drawing order.
    static func panels(_ svg: String) -> [(title: String, series: [(name: String, color: String)])] {
        svg.components(separatedBy: "<g class=\"panel\" data-title=\"").dropFirst().map { chunk in
            let title = String(chunk.prefix { $0 != "\"" })
            let series = chunk.components(separatedBy: "<g class=\"series\" data-name=\"").dropFirst().map { part in
                let name = String(part.prefix { $0 != "\"" })
                let color = part.components(separatedBy: "data-color=\"").dropFirst().first.map {
                    String($0.prefix { $0 != "\"" })
                }
                return (name, color ?? "")
            }
            return (title, series)
        }
    }

    /// A cache-like study with 8 lock strategies of ours, 7 peer locks, 2 queues of each side, an RCU map and two
    /// references: more series than one panel may hold.
    static let bigStudy: StudyResult = {
        var cells: [CellResult] = []
        let ours =
            ["MutexLock", "RecursiveLock", "SpinLock", "ReadWriteLock", "Semaphore", "Monitor", "LockedValue"]
            + ["MutexLock (membarrier)"]
        let peers =
            ["NSLock", "NSRecursiveLock", "Synchronization.Mutex", "NIOLock", "NIOLockedValueBox"]
            + ["DispatchSemaphore", "pthread_rwlock"]
        for threads in [1, 2, 4] {
            for (index, name) in ours.enumerated() {
                cells.append(cell(name, .ours, threads: threads, ops: Double(10 + index) * 1e6))
            }
            for (index, name) in peers.enumerated() {
                cells.append(cell(name, .peer, threads: threads, ops: Double(5 + index) * 1e6))
            }
            cells.append(cell("SerialQueue sync", .ours, threads: threads, ops: 8e6))
            cells.append(cell("ConcurrentQueue+barrier", .ours, threads: threads, ops: 7e6))
            cells.append(cell("DispatchQueue serial sync", .peer, threads: threads, ops: 1e6))
            cells.append(cell("DispatchQueue concurrent+barrier", .peer, threads: threads, ops: 2e6))
            cells.append(cell("RCUMap", .ours, threads: threads, ops: 100e6))
            cells.append(cell("C CAS spin (floor)", .reference, threads: threads, ops: 60e6))
            cells.append(cell("unsynchronized (child)", .reference, threads: threads, ops: 90e6, valid: threads == 1))
        }
        return StudyResult(
            id: "cache-r95",
            family: "cache",
            title: "cache 95% reads, 1024 keys",
            operation: "one cache read or write",
            parameters: [:],
            threads: [1, 2, 4],
            results: cells
        )
    }()

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

    @Test("the absolute chart draws a series per strategy, dashed peers, the best-peer band and the machine")
    func absoluteChart() throws {
        let svg = SVGChart.absolute(Self.study, report: Self.report)
        #expect(svg.hasPrefix("<svg"))
        #expect(svg.contains(">threads</text>"))
        #expect(svg.contains("ops/s, all threads"))
        let series = Self.panels(svg).flatMap(\.series)
        #expect(series.count == 4)  // Ours, PeerA, PeerB (invalid at 2 threads) and Floor
        #expect(Set(series.map(\.name)) == ["Ours", "PeerA", "PeerB", "Floor"])
        #expect(svg.contains("stroke-dasharray=\"7 4\""))  // peers dashed
        #expect(svg.contains(">PeerB *</text>"))
        // The best valid peer at each thread count: PeerA at both (PeerB is invalid at 2), drawn and named.
        #expect(svg.components(separatedBy: "class=\"best-peer\"").count - 1 == 1)
        #expect(svg.contains("best valid peer at each thread count: PeerA at 1-2 threads"))
        for text in ["Example CPU @ 2.0GHz", "2 CPUs", "Linux 6.18.44 x86_64", "commit 0123456789ab", "Swift 6.3.1"] {
            #expect(svg.contains(text), "caption lacks \(text)")
        }
        #expect(svg.contains("class=\"caption\""))
    }

    @Test("the ratio chart has one line per strategy of ours, the 1x line and each thread count's best peer")
    func ratioChart() throws {
        let svg = try #require(SVGChart.ratio(Self.study, report: Self.report))
        let series = Self.panels(svg).flatMap(\.series)
        #expect(series.map(\.name) == ["Ours"])
        #expect(svg.contains("class=\"one-x\""))
        #expect(svg.contains("1x = best peer"))
        #expect(svg.contains("the 1x line is the best peer: PeerA at 1-2 threads"))
        #expect(svg.contains("Example CPU @ 2.0GHz, 2 CPUs, Linux 6.18.44 x86_64"))
        // 1.5x and 6x put the axis between 1x and 10x, with the 2x and 5x steps labelled.
        for label in [">1x<", ">2x<", ">5x<", ">10x<"] {
            #expect(svg.contains(label), "missing tick \(label)")
        }
    }

    @Test("a study without a valid peer has no ratio chart")
    func noRatioChartWithoutPeers() {
        let study = StudyResult(
            id: "solo",
            family: "x",
            title: "solo",
            operation: "op",
            parameters: [:],
            threads: [1],
            results: [
                Self.cell("Ours", .ours, threads: 1, ops: 1e6), Self.cell("P", .peer, threads: 1, ops: 1, valid: false),
            ]
        )
        #expect(SVGChart.ratio(study, report: Self.report) == nil)
    }

    @Test("a large study is split into panels of at most one palette's series, no colour twice in a panel")
    func panelsAndColours() throws {
        #expect(Set(SVGChart.palette).count == SVGChart.palette.count)
        #expect(!SVGChart.palette.contains(SVGChart.baselineColor))
        let svg = SVGChart.absolute(Self.bigStudy, report: Self.report)
        let panels = Self.panels(svg)
        #expect(panels.map(\.title) == ["RCU + references", "queues", "locks: ours", "locks: peers"])
        var drawn: [String] = []
        for panel in panels {
            #expect(panel.series.count <= SVGChart.maxSeriesPerPanel, "\(panel.title)")
            #expect(Set(panel.series.map(\.color)).count == panel.series.count, "colour repeated in \(panel.title)")
            #expect(panel.series.allSatisfy { SVGChart.palette.contains($0.color) })
            drawn += panel.series.map(\.name)
        }
        let strategies = Set(Self.bigStudy.results.map(\.strategy))
        #expect(drawn.count == strategies.count)  // every strategy exactly once
        #expect(Set(drawn) == strategies)
        #expect(svg.components(separatedBy: "class=\"best-peer\"").count - 1 == panels.count)
        // The ratio chart: only ours, by family, every panel with its 1x line.
        let ratio = try #require(SVGChart.ratio(Self.bigStudy, report: Self.report))
        let ratioPanels = Self.panels(ratio)
        #expect(ratioPanels.map(\.title) == ["RCU: ours", "queues: ours", "locks: ours"])
        #expect(ratioPanels.map(\.series.count) == [1, 2, 8])
        #expect(ratio.components(separatedBy: "class=\"one-x\"").count - 1 == 3)
        for panel in ratioPanels {
            #expect(Set(panel.series.map(\.color)).count == panel.series.count)
        }
    }

    @Test("a family with more series than colours is cut into numbered panels")
    func numberedPanels() {
        let cells = (0..<12).map { Self.cell("Lock\($0)", .ours, threads: 1, ops: Double($0 + 1) * 1e6) }
        let study = StudyResult(
            id: "many",
            family: "locks",
            title: "many",
            operation: "op",
            parameters: [:],
            threads: [1],
            results: cells
        )
        let panels = SVGChart.absolutePanels(study)
        #expect(panels.map(\.title) == ["locks: ours (1/2)", "locks: ours (2/2)"])
        #expect(panels.map(\.strategies.count) == [9, 3])
    }

    @Test("a report without the machine's model or the commit says so instead of guessing")
    func captionOfAnOldReport() throws {
        var old = Self.report
        old.cpuModel = nil
        old.commit = nil
        old.swiftVersion = nil
        let svg = SVGChart.absolute(Self.study, report: old)
        #expect(svg.contains("CPU model not recorded, 2 CPUs"))
        #expect(svg.contains("commit not recorded, Swift not recorded"))
        // A report.json written before these fields existed still decodes.
        var object = try #require(
            try JSONSerialization.jsonObject(with: Data(JSONWriter.render(Self.report).utf8)) as? [String: Any]
        )
        for key in ["cpuModel", "kernel", "commit", "swiftVersion"] { object.removeValue(forKey: key) }
        let decoded = try JSONDecoder().decode(BenchReport.self, from: JSONSerialization.data(withJSONObject: object))
        #expect(decoded.cpuModel == nil && decoded.commit == nil)
        #expect(decoded.studies == Self.report.studies)
    }

    @Test("a long command line is wrapped under the chart, never cut")
    func captionWraps() throws {
        var report = Self.report
        report.command = "bench " + (1...40).map { "--flag\($0)" }.joined(separator: " ")
        let svg = SVGChart.absolute(Self.study, report: report)
        let width = try #require(svg.split(separator: "\"").dropFirst(3).first.flatMap { Double(String($0)) })
        let captions = svg.components(separatedBy: "<text class=\"caption\"").dropFirst().map { chunk in
            String(chunk.drop { $0 != ">" }.dropFirst().prefix { $0 != "<" })
        }
        #expect(captions.count > 3)  // machine, build, and the run wrapped over several lines
        #expect(captions.allSatisfy { Double($0.count) * 6.0 <= width - 40 })
        #expect(captions.joined(separator: " ").contains(report.command))
        #expect(SVGChart.wrap("aaa bbb ccc", width: 42, characterWidth: 6) == ["aaa bbb", "ccc"])
        #expect(SVGChart.wrap("x", width: 0, characterWidth: 6) == ["x"])
    }

    @Test("the CPU model is read from /proc/cpuinfo text, x86 and arm")
    func cpuModel() {
        let x86 = "processor\t: 0\nvendor_id\t: GenuineIntel\nmodel name\t: Intel(R) Xeon(R) Processor\nflags\t: fpu\n"
        #expect(Reporter.cpuModel(cpuinfo: x86) == "Intel(R) Xeon(R) Processor")
        let arm = "processor\t: 0\nBogoMIPS\t: 50.00\nCPU part\t: 0xd0c\n\nModel\t: Raspberry Pi 4 Model B\n"
        #expect(Reporter.cpuModel(cpuinfo: arm) == "Raspberry Pi 4 Model B")
        #expect(Reporter.cpuModel(cpuinfo: "processor\t: 0\n") == nil)
        #expect(Reporter.cpuModel(cpuinfo: nil) == nil)
    }

    @Test("a report made here records the machine and the build")
    func provenance() {
        let report = Reporter.report([])
        #expect(report.kernel?.isEmpty == false)
        #expect(report.system.contains(report.kernel ?? "?"))
        #expect(report.swiftVersion?.hasPrefix("6.") == true || report.swiftVersion?.hasPrefix(">=") == true)
        // The tests run from a git checkout of the project.
        let commit = report.commit ?? ""
        #expect(commit.count >= 12, "commit: \(commit)")
        let hex = commit.prefix(12).allSatisfy { $0.isHexDigit }
        #expect(hex, "commit: \(commit)")
    }

    @Test("the table names every strategy, the validation and the summary")
    func table() {
        let text = TextTable.render(Self.report)
        #expect(text.contains("INVALID (3 bad)"))
        #expect(text.contains("6.00x"))
        #expect(text.contains("SUMMARY cache 95% reads"))
        #expect(!text.contains("DEBUG build"))
        #expect(text.contains("machine: Example CPU @ 2.0GHz, 2 CPUs, Linux 6.18.44 x86_64\n"))
        #expect(text.contains("build: release build, commit 0123456789ab, Swift 6.3.1, Threading 1.0.0\n"))
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
        for file in ["report.csv", "report.txt", "cache-r95.svg", "cache-r95-ratio.svg"] {
            #expect(FileManager.default.fileExists(atPath: directory.appendingPathComponent(file).path), "\(file)")
        }
        let csv = try String(contentsOf: directory.appendingPathComponent("report.csv"), encoding: .utf8)
        #expect(csv == CSVWriter.render(Self.report))
    }
}
