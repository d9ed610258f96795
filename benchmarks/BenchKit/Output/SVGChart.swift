// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import Foundation

/// Draws a study as SVG charts, each answering one question and saying which machine and build produced it.
///
/// - ``ratio(_:report:)``: how many times the best peer's throughput each strategy of ours reaches at each thread
///   count, one line per strategy of ours, with the 1x line (the best valid peer at that thread count) marked.
/// - ``absolute(_:report:)``: throughput against thread count as small multiples, one panel per family of
///   strategies (RCU, queues, locks, ...), ours solid, peers dashed, references dotted; the best valid peer at each
///   thread count is drawn as a wide grey band in every panel so each panel reads against it.
///
/// Colours come from one fixed colour-blind-safe palette (Paul Tol's "muted" scheme) and no two series of a panel
/// share one: a family with more series than the palette has colours is split into several panels. Invalid cells
/// are left out.
public enum SVGChart {
    /// The series colours, in the order a panel hands them out (Paul Tol's "muted" scheme, colour-blind safe).
    public static let palette = [
        "#332288", "#117733", "#CC6677", "#88CCEE", "#882255", "#44AA99", "#999933", "#AA4499", "#DDCC77",
    ]
    /// The colour of the best-peer band and of the 1x line (no series uses it).
    public static let baselineColor = "#000000"
    /// The most series one panel may hold: one colour each.
    public static var maxSeriesPerPanel: Int { palette.count }

    /// One panel of a chart: a title and the strategies it draws, in legend order.
    public struct Panel: Sendable, Equatable {
        /// What the panel shows, e.g. `locks: ours`.
        public var title: String
        /// The strategies' display names, in legend (and colour) order.
        public var strategies: [String]
    }

    // MARK: - Grouping

    /// The family a strategy belongs to for the small multiples: `RCU`, `queues`, `locks` or `references`, from
    /// its identifier and name.
    public static func topic(of cell: CellResult) -> String {
        if cell.kind == .reference { return "references" }
        let text = (cell.id + " " + cell.strategy).lowercased()
        if text.contains("rcu") { return "RCU" }
        if text.contains("queue") || text.contains("dispatch-serial") || text.contains("dispatch-concurrent") {
            return "queues"
        }
        return "locks"
    }

    /// The panels of the absolute chart: one per family, a family with more series than colours split into ours
    /// and peers (and then into numbered parts); the references join the first panel with room for them.
    public static func absolutePanels(_ study: StudyResult) -> [Panel] {
        let names = orderedStrategies(study)
        let cells = firstCells(study)
        var panels: [Panel] = []
        for topic in ["RCU", "queues", "locks"] {
            let members = names.filter { cells[$0].map(Self.topic(of:)) == topic }
            if members.isEmpty { continue }
            if members.count <= maxSeriesPerPanel {
                panels.append(Panel(title: topic, strategies: members))
                continue
            }
            for kind in StrategyKind.allCases {
                let group = members.filter { cells[$0]?.kind == kind }
                panels += chunked(group, title: "\(topic): \(plural(kind))")
            }
        }
        let references = names.filter { cells[$0]?.kind == .reference }
        if !references.isEmpty {
            if let index = panels.firstIndex(where: { $0.strategies.count + references.count <= maxSeriesPerPanel }) {
                panels[index].title += " + references"
                panels[index].strategies += references
            } else {
                panels += chunked(references, title: "references")
            }
        }
        return panels
    }

    /// The panels of the ratio chart: the strategies of ours that have a ratio at some thread count, one panel per
    /// family, split into numbered parts when a family has more series than colours.
    public static func ratioPanels(_ study: StudyResult) -> [Panel] {
        var best: [String: Double] = [:]
        var order: [String] = []
        for cell in study.results where cell.kind == .ours {
            guard let ratio = cell.ratioToBestPeer else { continue }
            if best[cell.strategy] == nil { order.append(cell.strategy) }
            best[cell.strategy] = max(best[cell.strategy] ?? 0, ratio)
        }
        let names = order.sorted { (best[$0] ?? 0) > (best[$1] ?? 0) }
        let cells = firstCells(study)
        var panels: [Panel] = []
        for topic in ["RCU", "queues", "locks"] {
            let members = names.filter { cells[$0].map(Self.topic(of:)) == topic }
            panels += chunked(members, title: topic + ": ours")
        }
        return panels
    }

    static func chunked(_ names: [String], title: String) -> [Panel] {
        guard !names.isEmpty else { return [] }
        let parts = stride(from: 0, to: names.count, by: maxSeriesPerPanel).map {
            Array(names[$0..<min($0 + maxSeriesPerPanel, names.count)])
        }
        if parts.count == 1 { return [Panel(title: title, strategies: parts[0])] }
        return parts.enumerated().map {
            Panel(title: "\(title) (\($0.offset + 1)/\(parts.count))", strategies: $0.element)
        }
    }

    static func plural(_ kind: StrategyKind) -> String {
        switch kind {
        case .ours: return "ours"
        case .peer: return "peers"
        case .reference: return "references"
        }
    }

    static func firstCells(_ study: StudyResult) -> [String: CellResult] {
        var cells: [String: CellResult] = [:]
        for cell in study.results where cells[cell.strategy] == nil { cells[cell.strategy] = cell }
        return cells
    }

    // MARK: - Charts

    /// The ratio chart: each strategy of ours over the best valid peer at each thread count (log scale), the 1x
    /// line marked and the best peer named under each thread count; nil when the study has no strategy of ours
    /// with a ratio (no valid peer, or nothing of ours measured).
    ///
    /// - Parameters:
    ///   - study: The study.
    ///   - report: The report the study belongs to: its machine and build go under the chart.
    /// - Returns: The SVG text, or nil.
    public static func ratio(_ study: StudyResult, report: BenchReport) -> String? {
        let panels = ratioPanels(study)
        guard !panels.isEmpty else { return nil }
        let ratios = study.results.compactMap { $0.kind == .ours ? $0.ratioToBestPeer : nil }.filter { $0 > 0 }
        let scale = LogScale(low: min(ratios.min() ?? 1, 1), high: max(ratios.max() ?? 1, 1), niceSteps: true)
        let peers = study.threads.map { count in study.bestPeer(threads: count)?.strategy }
        var chart = Canvas(
            panels: panels.count,
            title: "\(study.title): ours over the best peer",
            subtitle: [
                "each strategy of ours as a multiple of the fastest valid peer at the same thread count (same run, "
                    + "log scale); above the dashed 1x line = faster than every peer",
                "the 1x line is the best peer: " + peerRuns(peers, threads: study.threads),
            ],
            report: report
        )
        for (index, panel) in panels.enumerated() {
            let series = panel.strategies.enumerated().map { rank, name in
                Series(
                    name: name,
                    color: palette[rank],
                    kind: .ours,
                    values: study.threads.map { count in
                        study.results.first { $0.strategy == name && $0.threads == count }?.ratioToBestPeer
                    }
                )
            }
            chart.drawPanel(
                index: index,
                title: panel.title,
                threads: study.threads,
                scale: scale,
                yLabel: "x best peer",
                series: series,
                baseline: .oneX,
                underAxis: peers.map { $0.map(shortName) ?? "no peer" }
            )
        }
        return chart.finish()
    }

    /// The absolute chart: throughput against thread count (log scale, shared by every panel), one panel per family,
    /// the best valid peer at each thread count drawn as a wide grey band in every panel.
    ///
    /// - Parameters:
    ///   - study: The study.
    ///   - report: The report the study belongs to: its machine and build go under the chart.
    /// - Returns: The SVG text.
    public static func absolute(_ study: StudyResult, report: BenchReport) -> String {
        let panels = absolutePanels(study)
        let values = study.results.filter { $0.valid && $0.opsPerSecond > 0 }.map(\.opsPerSecond)
        let scale = LogScale(low: values.min() ?? 1e5, high: values.max() ?? 1e7, niceSteps: true)
        let bestPeers = study.threads.map { study.bestPeer(threads: $0) }
        var chart = Canvas(
            panels: max(panels.count, 1),
            title: "\(study.title): throughput against threads",
            subtitle: [
                "one op = \(study.operation); log scale, the same in every panel; solid = ours, dashed = peers, "
                    + "dotted = references",
                "wide grey band = the best valid peer at each thread count: "
                    + peerRuns(bestPeers.map { $0?.strategy }, threads: study.threads),
                "* = invalid at some thread count (left out there)",
            ],
            report: report
        )
        for (index, panel) in panels.enumerated() {
            let cells = firstCells(study)
            let series = panel.strategies.enumerated().map { rank, name in
                Series(
                    name: name,
                    color: palette[rank],
                    kind: cells[name]?.kind ?? .ours,
                    values: study.threads.map { count in
                        study.results.first { $0.strategy == name && $0.threads == count && $0.valid }?.opsPerSecond
                    },
                    invalidSomewhere: study.results.contains { $0.strategy == name && !$0.valid }
                )
            }
            chart.drawPanel(
                index: index,
                title: panel.title,
                threads: study.threads,
                scale: scale,
                yLabel: "ops/s, all threads",
                series: series,
                baseline: .bestPeer(bestPeers.map { $0?.opsPerSecond }),
                underAxis: nil
            )
        }
        return chart.finish()
    }

    /// Strategies ordered by their best valid throughput (the legend reads top-down like the lines).
    static func orderedStrategies(_ study: StudyResult) -> [String] {
        var best: [String: Double] = [:]
        var order: [String] = []
        for cell in study.results {
            if best[cell.strategy] == nil { order.append(cell.strategy) }
            best[cell.strategy] = max(best[cell.strategy] ?? -1, cell.valid ? cell.opsPerSecond : -1)
        }
        return order.sorted { (best[$0] ?? 0) > (best[$1] ?? 0) }
    }

    /// Names longer than 15 characters cut with an ellipsis (`Synchronizatio…`), for the labels under the axis.
    static func shortName(_ name: String) -> String {
        name.count <= 15 ? name : String(name.prefix(14)) + "…"
    }

    /// `Synchronization.Mutex at 1-2, pthread_rwlock at 4-8`: which peer was best at which thread counts.
    static func peerRuns(_ names: [String?], threads: [Int]) -> String {
        var runs: [(name: String, counts: [Int])] = []
        for (position, name) in names.enumerated() {
            let name = name ?? "none"
            if let last = runs.last, last.name == name {
                runs[runs.count - 1].counts.append(threads[position])
            } else {
                runs.append((name, [threads[position]]))
            }
        }
        return runs.map { run in
            let span =
                run.counts.count == 1 ? "\(run.counts[0])" : "\(run.counts[0])-\(run.counts[run.counts.count - 1])"
            return "\(run.name) at \(span) thread\(span == "1" ? "" : "s")"
        }.joined(separator: ", ")
    }

    static func axisLabel(_ value: Double) -> String {
        func trim(_ number: Double) -> String {
            number == number.rounded() ? String(Int(number)) : String(format: "%.1f", number)
        }
        if value >= 1e9 { return trim(value / 1e9) + "G" }
        if value >= 1e6 { return trim(value / 1e6) + "M" }
        if value >= 1e3 { return trim(value / 1e3) + "K" }
        if value >= 1 { return trim(value) }
        return String(format: "%g", value)
    }

    static func f(_ value: Double) -> String { String(format: "%.1f", value) }

    /// Splits `text` at spaces into lines of at most `width` points, assuming `characterWidth` points a character
    /// (SVG text does not wrap by itself); a word longer than a line gets a line of its own.
    public static func wrap(_ text: String, width: Double, characterWidth: Double) -> [String] {
        let limit = max(Int(width / characterWidth), 10)
        var lines: [String] = []
        var line = ""
        for word in text.split(separator: " ", omittingEmptySubsequences: false) {
            if line.isEmpty {
                line = String(word)
            } else if line.count + 1 + word.count <= limit {
                line += " " + word
            } else {
                lines.append(line)
                line = String(word)
            }
        }
        lines.append(line)
        return lines
    }

    static func escape(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\"", with: "&quot;")
    }
}

// MARK: - Drawing

extension SVGChart {
    /// One line of a panel.
    struct Series {
        var name: String
        var color: String
        var kind: StrategyKind
        /// One value per thread count; nil where there is none (invalid, or not measured).
        var values: [Double?]
        var invalidSomewhere = false
    }

    /// What a panel draws under its series.
    enum Baseline {
        /// The 1x line of the ratio chart.
        case oneX
        /// The best peer's throughput at each thread count (named in the subtitle).
        case bestPeer([Double?])
    }

    /// A log-scale y axis: whole decades, or for ratios the 1-2-5 steps between them.
    struct LogScale {
        var low: Double
        var high: Double
        var ticks: [Double]

        init(low rawLow: Double, high rawHigh: Double, niceSteps: Bool) {
            let lowValue = rawLow > 0 ? rawLow : 1
            let highValue = max(rawHigh, lowValue)
            var lowDecade = pow(10, floor(log10(lowValue)))
            var highDecade = pow(10, ceil(log10(highValue)))
            if highDecade <= lowDecade { highDecade = lowDecade * 10 }
            var ticks: [Double] = []
            var decade = lowDecade
            while decade <= highDecade * 1.0001 {
                for step in niceSteps ? [1.0, 2, 5] : [1.0] where decade * step <= highDecade * 1.0001 {
                    ticks.append(decade * step)
                }
                decade *= 10
            }
            if niceSteps {
                // Trim to the 1-2-5 steps just around the data, so a ratio chart is not mostly empty decades.
                let below = ticks.last { $0 <= lowValue } ?? ticks[0]
                let above = ticks.first { $0 >= highValue } ?? ticks[ticks.count - 1]
                ticks = ticks.filter { $0 >= below && $0 <= above }
                lowDecade = below
                highDecade = above
            }
            self.low = lowDecade
            self.high = highDecade
            self.ticks = ticks
        }

        /// 0 at `low`, 1 at `high`.
        func fraction(_ value: Double) -> Double {
            (log10(value) - log10(low)) / (log10(high) - log10(low))
        }
    }

    /// The whole picture: title, panels in a grid, machine and build caption.
    struct Canvas {
        static let panelWidth = 480.0
        static let plotLeft = 66.0
        static let plotWidth = 390.0
        static let plotTop = 28.0
        static let plotHeight = 230.0
        static let legendLine = 15.0
        static let header = 62.0
        static let minimumWidth = 760.0

        var columns: Int
        var rows: Int
        var panelHeight: Double
        var body = ""
        let head: String
        let caption: [String]

        init(panels: Int, title: String, subtitle: [String], report: BenchReport) {
            columns = panels <= 3 ? panels : 2
            rows = (panels + columns - 1) / columns
            let legendRows = Double(1 + (SVGChart.maxSeriesPerPanel + 1) / 2)
            panelHeight = Self.plotTop + Self.plotHeight + 52 + legendRows * Self.legendLine + 10
            let width = max(Double(columns) * Self.panelWidth + 20, Self.minimumWidth)
            let subtitleLines = subtitle.flatMap { wrap($0, width: width - 40, characterWidth: 6.2) }
            caption = [
                "Machine: \(report.machineDescription)",
                "Build: \(report.buildDescription)",
                "Run: \(report.date), \(report.command); load average "
                    + (report.loadAverage.isEmpty ? "not recorded" : report.loadAverage),
            ].flatMap { wrap($0, width: width - 40, characterWidth: 6.0) }
            let header = Self.header + 15 * Double(max(subtitleLines.count - 1, 0))
            self.header = header
            let height = header + Double(rows) * panelHeight + 20 + 16 * Double(caption.count)
            head = """
                <svg xmlns="http://www.w3.org/2000/svg" width="\(Int(width))" height="\(Int(height))" \
                viewBox="0 0 \(Int(width)) \(Int(height))" font-family="Helvetica, Arial, sans-serif" font-size="12">
                <rect width="100%" height="100%" fill="white"/>
                <text x="20" y="26" font-size="17" font-weight="bold">\(escape(title))</text>

                """
                + subtitleLines.enumerated().map { index, line in
                    "<text x=\"20\" y=\"\(46 + 15 * index)\" fill=\"#444\" font-size=\"11.5\">\(escape(line))</text>\n"
                }.joined()
            self.height = height
        }

        let height: Double
        let header: Double

        mutating func finish() -> String {
            var svg = head + body
            for (index, line) in caption.enumerated() {
                let y = height - 16 * Double(caption.count - index) + 8
                svg += "<text class=\"caption\" x=\"20\" y=\"\(f(y))\" fill=\"#333\" font-size=\"11\">"
                svg += "\(escape(line))</text>\n"
            }
            return svg + "</svg>\n"
        }

        mutating func drawPanel(
            index: Int,
            title: String,
            threads: [Int],
            scale: LogScale,
            yLabel: String,
            series: [Series],
            baseline: Baseline,
            underAxis: [String]?
        ) {
            let originX = 10 + Double(index % columns) * Self.panelWidth
            let originY = header + Double(index / columns) * panelHeight
            let left = originX + Self.plotLeft
            let top = originY + Self.plotTop
            let width = Self.plotWidth
            let height = Self.plotHeight
            func x(_ position: Int) -> Double {
                threads.count <= 1
                    ? left + width / 2
                    : left + 16 + (width - 32) * Double(position)
                        / Double(threads.count - 1)
            }
            func y(_ value: Double) -> Double { top + height * (1 - scale.fraction(value)) }
            var svg = "<g class=\"panel\" data-title=\"\(escape(title))\">\n"
            svg += "<text x=\"\(f(left))\" y=\"\(f(originY + 16))\" font-size=\"14\" font-weight=\"bold\">"
            svg += "\(escape(title))</text>\n"
            for tick in scale.ticks {
                let yy = y(tick)
                svg += "<line x1=\"\(f(left))\" y1=\"\(f(yy))\" x2=\"\(f(left + width))\" y2=\"\(f(yy))\" "
                svg += "stroke=\"#e3e3e3\"/>\n"
                svg += "<text x=\"\(f(left - 6))\" y=\"\(f(yy + 4))\" text-anchor=\"end\" font-size=\"11\">"
                svg += "\(axisLabel(tick))\(yLabel.hasPrefix("x") ? "x" : "")</text>\n"
            }
            for (position, count) in threads.enumerated() {
                let xx = x(position)
                svg += "<line x1=\"\(f(xx))\" y1=\"\(f(top))\" x2=\"\(f(xx))\" y2=\"\(f(top + height))\" "
                svg += "stroke=\"#f0f0f0\"/>\n"
                svg += "<text x=\"\(f(xx))\" y=\"\(f(top + height + 15))\" text-anchor=\"middle\">\(count)</text>\n"
                if let underAxis, position < underAxis.count {
                    svg += "<text x=\"\(f(xx))\" y=\"\(f(top + height + 28))\" text-anchor=\"middle\" "
                    svg += "font-size=\"9\" fill=\"#555\">\(escape(underAxis[position]))</text>\n"
                }
            }
            svg += "<rect x=\"\(f(left))\" y=\"\(f(top))\" width=\"\(f(width))\" height=\"\(f(height))\" "
            svg += "fill=\"none\" stroke=\"#666\"/>\n"
            let axisTitleY = top + height + (underAxis == nil ? 30 : 42)
            svg += "<text x=\"\(f(left + width / 2))\" y=\"\(f(axisTitleY))\" text-anchor=\"middle\" "
            svg += "font-size=\"11\">threads</text>\n"
            svg += "<text transform=\"translate(\(f(originX + 14)) \(f(top + height / 2))) rotate(-90)\" "
            svg += "text-anchor=\"middle\" font-size=\"11\">\(escape(yLabel))</text>\n"
            // The baseline, under the series.
            var legend: [(label: String, swatch: String)] = []
            switch baseline {
            case .oneX:
                let yy = y(1)
                svg += "<line class=\"one-x\" x1=\"\(f(left))\" y1=\"\(f(yy))\" x2=\"\(f(left + width))\" "
                svg += "y2=\"\(f(yy))\" stroke=\"\(baselineColor)\" stroke-width=\"2\" stroke-dasharray=\"8 4\"/>\n"
                svg += "<text x=\"\(f(left + width - 4))\" y=\"\(f(yy - 5))\" text-anchor=\"end\" font-size=\"11\" "
                svg += "font-weight=\"bold\" stroke=\"white\" stroke-width=\"3\" paint-order=\"stroke\">"
                svg += "1x = best peer</text>\n"
                legend.append(
                    (
                        "1x = the best valid peer (named under each thread count)",
                        "stroke=\"\(baselineColor)\" stroke-width=\"2\" stroke-dasharray=\"8 4\""
                    )
                )
            case .bestPeer(let values):
                let points = values.enumerated().compactMap { position, value in
                    value.map { (x(position), y($0)) }
                }
                if points.count > 1 {
                    svg += "<polyline class=\"best-peer\" points=\"\(pointList(points))\" fill=\"none\" "
                    svg += "stroke=\"\(baselineColor)\" stroke-opacity=\"0.22\" stroke-width=\"9\" "
                    svg += "stroke-linecap=\"round\" stroke-linejoin=\"round\"/>\n"
                } else if let point = points.first {
                    svg += "<circle class=\"best-peer\" cx=\"\(f(point.0))\" cy=\"\(f(point.1))\" r=\"6\" "
                    svg += "fill=\"\(baselineColor)\" fill-opacity=\"0.22\"/>\n"
                }
                legend.append(
                    (
                        "best valid peer at each thread count",
                        "stroke=\"\(baselineColor)\" stroke-opacity=\"0.22\" stroke-width=\"9\""
                    )
                )
            }
            for item in series {
                let dash =
                    item.kind == .ours
                    ? "" : item.kind == .peer ? " stroke-dasharray=\"7 4\"" : " stroke-dasharray=\"2 3\""
                let strokeWidth = item.kind == .ours ? "2.4" : "1.8"
                let points = item.values.enumerated().compactMap { position, value in
                    value.flatMap { $0 > 0 ? (x(position), y($0)) : nil }
                }
                svg += "<g class=\"series\" data-name=\"\(escape(item.name))\" data-color=\"\(item.color)\">\n"
                if points.count > 1 {
                    svg += "<polyline points=\"\(pointList(points))\" fill=\"none\" stroke=\"\(item.color)\" "
                    svg += "stroke-width=\"\(strokeWidth)\"\(dash)/>\n"
                }
                for point in points {
                    svg += "<circle cx=\"\(f(point.0))\" cy=\"\(f(point.1))\" r=\"3\" fill=\"\(item.color)\"/>\n"
                }
                svg += "</g>\n"
                let label = item.name + (item.invalidSomewhere ? " *" : "")
                legend.append((label, "stroke=\"\(item.color)\" stroke-width=\"\(strokeWidth)\"\(dash)"))
            }
            // The legend: two columns under the plot, the baseline first.
            let legendTop = top + height + (underAxis == nil ? 44 : 56)
            for (position, entry) in legend.enumerated() {
                let column = position == 0 ? 0 : (position - 1) % 2
                let row = position == 0 ? 0 : 1 + (position - 1) / 2
                let lx = originX + 16 + Double(column) * (Self.panelWidth / 2)
                let ly = legendTop + Double(row) * Self.legendLine
                svg += "<line x1=\"\(f(lx))\" y1=\"\(f(ly - 4))\" x2=\"\(f(lx + 24))\" y2=\"\(f(ly - 4))\" "
                svg += "\(entry.swatch)/>\n"
                svg += "<text x=\"\(f(lx + 30))\" y=\"\(f(ly))\" font-size=\"11\">\(escape(entry.label))</text>\n"
            }
            body += svg + "</g>\n"
        }

        func pointList(_ points: [(Double, Double)]) -> String {
            points.map { "\(f($0.0)),\(f($0.1))" }.joined(separator: " ")
        }
    }
}
