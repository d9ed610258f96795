// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import Foundation

/// Draws a study as an SVG line chart: throughput (log scale) against thread count, one line per strategy;
/// ours solid, peers dashed, references dotted; invalid points are left out; a legend names every line.
public enum SVGChart {
    static let palette = [
        "#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf", "#bcbd22",
        "#7f7f7f", "#393b79", "#637939", "#8c6d31", "#843c39", "#7b4173", "#3182bd", "#e6550d", "#31a354",
        "#756bb1", "#636363", "#ad494a", "#0099c6",
    ]

    /// The chart as SVG text.
    public static func render(_ study: StudyResult) -> String {
        let width = 1060.0
        let height = 560.0
        let left = 80.0
        let right = 390.0
        let top = 50.0
        let bottom = 60.0
        let plotWidth = width - left - right
        let plotHeight = height - top - bottom
        let names = orderedStrategies(study)
        let values = study.results.filter { $0.valid && $0.opsPerSecond > 0 }.map(\.opsPerSecond)
        var low = pow(10, floor(log10(values.min() ?? 1e5)))
        var high = pow(10, ceil(log10(values.max() ?? 1e7)))
        if high <= low { high = low * 10 }
        if low <= 0 { low = 1 }
        let threads = study.threads
        func x(_ index: Int) -> Double {
            threads.count <= 1 ? left + plotWidth / 2 : left + plotWidth * Double(index) / Double(threads.count - 1)
        }
        func y(_ value: Double) -> Double {
            top + plotHeight * (1 - (log10(value) - log10(low)) / (log10(high) - log10(low)))
        }
        var svg = """
            <svg xmlns="http://www.w3.org/2000/svg" width="\(Int(width))" height="\(Int(height))" \
            viewBox="0 0 \(Int(width)) \(Int(height))" font-family="Helvetica, Arial, sans-serif" font-size="12">
            <rect width="100%" height="100%" fill="white"/>
            <text x="\(left)" y="24" font-size="16" font-weight="bold">\(escape(study.title)): throughput vs threads</text>
            <text x="\(left)" y="40" fill="#555">one op = \(escape(study.operation)); log scale; \
            solid = ours, dashed = peers, dotted = references; invalid runs omitted</text>

            """
        // Grid and y axis: one line per decade, labelled in ops/s.
        var decade = low
        while decade <= high * 1.0001 {
            let yy = y(decade)
            svg += "<line x1=\"\(left)\" y1=\"\(f(yy))\" x2=\"\(left + plotWidth)\" y2=\"\(f(yy))\" stroke=\"#ddd\"/>\n"
            svg += "<text x=\"\(left - 8)\" y=\"\(f(yy + 4))\" text-anchor=\"end\">\(axisLabel(decade))</text>\n"
            for minor in 2...9 where decade * Double(minor) < high {
                let ym = y(decade * Double(minor))
                svg += "<line x1=\"\(left)\" y1=\"\(f(ym))\" x2=\"\(left + plotWidth)\" y2=\"\(f(ym))\" "
                svg += "stroke=\"#f2f2f2\"/>\n"
            }
            decade *= 10
        }
        for (index, count) in threads.enumerated() {
            let xx = x(index)
            svg += "<line x1=\"\(f(xx))\" y1=\"\(top)\" x2=\"\(f(xx))\" y2=\"\(top + plotHeight)\" stroke=\"#eee\"/>\n"
            svg += "<text x=\"\(f(xx))\" y=\"\(top + plotHeight + 18)\" text-anchor=\"middle\">\(count)</text>\n"
        }
        svg += "<rect x=\"\(left)\" y=\"\(top)\" width=\"\(plotWidth)\" height=\"\(plotHeight)\" fill=\"none\" "
        svg += "stroke=\"#333\"/>\n"
        svg += "<text x=\"\(f(left + plotWidth / 2))\" y=\"\(height - 18)\" text-anchor=\"middle\">"
        svg += "worker threads</text>\n"
        svg += "<text transform=\"translate(18 \(f(top + plotHeight / 2))) rotate(-90)\" text-anchor=\"middle\">"
        svg += "operations per second (all threads)</text>\n"
        // One polyline per strategy.
        for (rank, name) in names.enumerated() {
            let cells = study.results.filter { $0.strategy == name }
            guard let kind = cells.first?.kind else { continue }
            let color = palette[rank % palette.count]
            let dash = kind == .ours ? "" : kind == .peer ? " stroke-dasharray=\"7 4\"" : " stroke-dasharray=\"2 3\""
            let strokeWidth = kind == .ours ? "2.5" : "1.6"
            var points: [(Double, Double)] = []
            for (index, count) in threads.enumerated() {
                if let cell = cells.first(where: { $0.threads == count }), cell.valid, cell.opsPerSecond > 0 {
                    points.append((x(index), y(cell.opsPerSecond)))
                }
            }
            if points.count > 1 {
                let list = points.map { "\(f($0.0)),\(f($0.1))" }.joined(separator: " ")
                svg += "<polyline points=\"\(list)\" fill=\"none\" stroke=\"\(color)\" stroke-width=\"\(strokeWidth)\""
                svg += "\(dash)/>\n"
            }
            for point in points {
                svg += "<circle cx=\"\(f(point.0))\" cy=\"\(f(point.1))\" r=\"3\" fill=\"\(color)\"/>\n"
            }
            // Legend entry.
            let ly = top + 8 + Double(rank) * 20
            let lx = left + plotWidth + 20
            svg += "<line x1=\"\(f(lx))\" y1=\"\(f(ly))\" x2=\"\(f(lx + 30))\" y2=\"\(f(ly))\" stroke=\"\(color)\" "
            svg += "stroke-width=\"\(strokeWidth)\"\(dash)/>\n"
            let invalid = cells.contains { !$0.valid }
            let label = "\(name) (\(kind.rawValue))" + (invalid ? " (invalid at some T)" : "")
            svg += "<text x=\"\(f(lx + 38))\" y=\"\(f(ly + 4))\">\(escape(label))</text>\n"
        }
        svg += "</svg>\n"
        return svg
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

    static func axisLabel(_ value: Double) -> String {
        if value >= 1e9 { return "\(Int(value / 1e9))G" }
        if value >= 1e6 { return "\(Int(value / 1e6))M" }
        if value >= 1e3 { return "\(Int(value / 1e3))K" }
        return "\(Int(value))"
    }

    static func f(_ value: Double) -> String { String(format: "%.1f", value) }

    static func escape(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\"", with: "&quot;")
    }
}
