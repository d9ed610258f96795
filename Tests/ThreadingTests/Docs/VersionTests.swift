// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import Foundation
import Testing
import Threading

/// Keeps the one version story true: `ThreadingVersion.string` is a semantic version, the CHANGELOG's newest entry
/// is that version with a release date (not "unreleased"), and the README's install lines name it.
@Suite struct VersionTests {
    /// The repository root (this file is `Tests/ThreadingTests/Docs/VersionTests.swift`).
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()

    static func text(_ name: String) throws -> String {
        try String(contentsOf: root.appendingPathComponent(name), encoding: .utf8)
    }

    @Test func theVersionIsMajorMinorPatch() {
        let parts = ThreadingVersion.string.split(separator: ".", omittingEmptySubsequences: false)
        #expect(parts.count == 3, "\(ThreadingVersion.string) is not major.minor.patch")
        #expect(parts.allSatisfy { !$0.isEmpty && $0.allSatisfy(\.isASCII) && $0.allSatisfy(\.isNumber) })
    }

    /// The newest released entry (the first `## ` heading, or the one after an `## Unreleased` section of changes
    /// made since) is this version, with its date.
    @Test func theChangelogsNewestEntryIsThisVersionWithAReleaseDate() throws {
        let changelog = try Self.text("CHANGELOG.md")
        let headings = changelog.split(separator: "\n").filter { $0.hasPrefix("## ") }
        let released = headings.first == "## Unreleased" ? headings.dropFirst() : headings[...]
        #expect(!released.contains("## Unreleased"), "an `## Unreleased` section only comes first")
        let newest = try #require(released.first, "CHANGELOG.md has no released entry")
        let expected = "## \(ThreadingVersion.string) ("
        #expect(newest.hasPrefix(expected), "the newest entry is \"\(newest)\", not version \(ThreadingVersion.string)")
        let date = newest.dropFirst(expected.count).prefix(10)
        #expect(
            date.wholeMatch(of: /\d{4}-\d{2}-\d{2}/) != nil,
            "the newest entry \"\(newest)\" carries no release date (YYYY-MM-DD)"
        )
    }

    @Test func theReadmesInstallLinesNameThisVersion() throws {
        let readme = try Self.text("README.md")
        let froms = readme.matches(of: /from: "([0-9.]+)"/).map { String($0.output.1) }
        #expect(!froms.isEmpty, "the README has no `from:` install line")
        #expect(froms.allSatisfy { $0 == ThreadingVersion.string }, "README install lines: \(froms)")
    }
}
