// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import ArgumentParser
import BenchKit
import Foundation
import Glibc
import Testing

@Suite("Command line")
struct CommandLineTests {
    @Test("no arguments runs the default cache study")
    func defaults() throws {
        let command = try #require(try BenchCommand.parseAsRoot([]) as? CacheCommand)
        #expect(command.common.threadCounts(defaults: CacheCommand.defaultThreads) == [1, 2, 4, 8])
        #expect(command.effectiveReadRatios == [0.95, 0.5, 1.0])
        #expect(command.keys == 1024)
        #expect(command.effectiveShapes == [.int, .string])
        #expect(command.common.settings(defaults: CacheCommand.defaultSettings) == CacheCommand.defaultSettings)
        #expect(command.common.format == .table)
        #expect(try command.selectedEntries().count == CacheContention.catalog.count)
        #expect(command.common.outputDirectory(family: "cache") == "bench-results")
    }

    @Test("flags parse into the study's parameters")
    func flags() throws {
        let arguments = [
            "--threads", "1,3", "--read-ratio", "0.5, 1.0", "--keys", "64", "--seconds", "0.1", "--warmup", "0",
            "--repeat", "5", "--strategies", "nslock,sync-mutex", "--format", "csv", "--output", "/tmp/x", "--quiet",
        ]
        let command = try #require(try BenchCommand.parseAsRoot(arguments) as? CacheCommand)
        #expect(command.common.threadCounts(defaults: CacheCommand.defaultThreads) == [1, 3])
        #expect(command.effectiveReadRatios == [0.5, 1.0])
        #expect(command.keys == 64)
        #expect(command.effectiveShapes == [.int, .string])
        #expect(
            command.common.settings(defaults: CacheCommand.defaultSettings)
                == RunSettings(seconds: 0.1, warmup: 0, repeats: 5)
        )
        #expect(try command.selectedEntries().map(\.id) == ["nslock", "sync-mutex"])
        #expect(command.common.format == .csv)
        #expect(command.common.output == "/tmp/x")
        #expect(command.common.outputDirectory(family: "cache") == "/tmp/x")
        #expect(command.common.quiet)
    }

    @Test(
        "with no --output a run writes into bench-results/, one folder per family, quick runs apart",
        arguments: [
            ([], "bench-results"), (["locks"], "bench-results/locks"), (["queues"], "bench-results/queues"),
            (["rcu"], "bench-results/rcu"), (["handoff"], "bench-results/handoff"),
            (["threads"], "bench-results/threads"), (["--quick"], "bench-results/quick"),
            (["locks", "--quick"], "bench-results/quick/locks"),
        ]
    )
    func defaultOutput(arguments: [String], folder: String) throws {
        let command = try BenchCommand.parseAsRoot(arguments)
        let family = arguments.first { !$0.hasPrefix("-") } ?? "cache"
        let common = try #require(Self.common(of: command))
        #expect(common.outputDirectory(family: family) == folder)
    }

    @Test("--output chooses the folder and --no-output writes nothing, in every family")
    func outputFlags() throws {
        for family in ["cache", "locks", "queues", "rcu", "handoff", "threads"] {
            let chosen = try #require(Self.common(of: try BenchCommand.parseAsRoot([family, "--output", "out/x"])))
            #expect(chosen.outputDirectory(family: family) == "out/x")
            let none = try #require(Self.common(of: try BenchCommand.parseAsRoot([family, "--no-output", "--quick"])))
            #expect(none.outputDirectory(family: family) == nil)
        }
        #expect(throws: (any Error).self) { try BenchCommand.parseAsRoot(["--output", "x", "--no-output"]) }
    }

    @Test("a run writes its files into the --output folder; with no folder Reporter.emit writes nothing")
    func runWritesFiles() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("bench-cli-\(getpid())")
        defer { try? FileManager.default.removeItem(at: directory) }
        let arguments = [
            "locks", "--strategies", "mutexlock", "--threads", "1", "--seconds", "0.01", "--warmup", "0",
            "--repeat", "1", "--quiet", "--format", "csv", "--output", directory.path,
        ]
        var command = try BenchCommand.parseAsRoot(arguments)
        try command.run()
        for file in ["report.json", "report.csv", "report.txt", "locks.svg"] {
            #expect(FileManager.default.fileExists(atPath: directory.appendingPathComponent(file).path), "\(file)")
        }
        let report = try JSONDecoder().decode(
            BenchReport.self,
            from: Data(contentsOf: directory.appendingPathComponent("report.json"))
        )
        #expect(report.studies.map(\.id) == ["locks"])
        #expect(try Reporter.emit(report, format: .csv, directory: nil) == nil)
    }

    @Test("--help has examples, and --list prints the ours, peer and reference groups")
    func helpAndList() throws {
        let help = BenchCommand.helpMessage()
        #expect(help.contains("Examples:"))
        #expect(help.contains("--no-output"))
        let command = try #require(try BenchCommand.parseAsRoot(["--list"]) as? CacheCommand)
        #expect(command.common.list)
        let text = try command.listText()
        for group in ["ours:", "peer:", "reference:"] {
            #expect(text.contains(group), "missing group \(group)")
        }
        for entry in CacheContention.catalog {
            #expect(text.contains(entry.id), "missing \(entry.id)")
        }
    }

    @Test("--shape picks the key and value shapes; each shape names its studies")
    func shapes() throws {
        let command = try #require(try BenchCommand.parseAsRoot(["--shape", "string"]) as? CacheCommand)
        #expect(command.effectiveShapes == [.string])
        #expect(throws: (any Error).self) { try BenchCommand.parseAsRoot(["--shape", "float"]) }
        #expect(CacheContention.studyID(readRatio: 0.95) == "cache-r95")
        #expect(CacheContention.studyID(readRatio: 0.95, shape: .string) == "cache-string-r95")
        let title = CacheContention.title(.init(keyCount: 8, readRatio: 0.95, shape: .string))
        #expect(title.contains("String keys"))
        let arguments = ChildProcessRunner.cacheArguments(
            strategy: "rcumap",
            parameters: .init(keyCount: 8, readRatio: 0.5, shape: .string),
            threads: 1,
            seconds: 0.1
        )
        let child = try #require(try BenchCommand.parseAsRoot(arguments) as? ChildCacheCommand)
        #expect(child.shape == .string)
    }

    @Test(
        "each family's help states the thread counts --quick really runs",
        arguments: [
            (["cache"], CacheCommand.defaultThreads), (["locks"], LocksCommand.defaultThreads),
            (["queues"], QueuesCommand.defaultThreads), (["rcu"], RCUCommand.defaultThreads),
            (["handoff"], HandoffCommand.defaultThreads), (["threads"], ThreadsCommand.defaultThreads),
            (["once"], OnceCommand.defaultThreads), (["threadlocal"], ThreadLocalCommand.defaultThreads),
        ]
    )
    func quickHelp(arguments: [String], defaults: [Int]) throws {
        let command = try BenchCommand.parseAsRoot(arguments + ["--quick"])
        let common = try #require(Self.common(of: command))
        let threads = common.threadCounts(defaults: defaults)
        #expect(threads == Array(defaults.prefix(2)))
        let help = BenchCommand.helpMessage(for: type(of: command), columns: 1000)
        #expect(help.contains("--quick: --threads \(threads.map(String.init).joined(separator: ",")) "))
    }

    /// The shared options of any family command.
    static func common(of command: any ParsableCommand) -> CommonOptions? {
        switch command {
        case let cache as CacheCommand: cache.common
        case let locks as LocksCommand: locks.common
        case let queues as QueuesCommand: queues.common
        case let rcu as RCUCommand: rcu.common
        case let handoff as HandoffCommand: handoff.common
        case let threads as ThreadsCommand: threads.common
        case let once as OnceCommand: once.common
        case let threadLocal as ThreadLocalCommand: threadLocal.common
        default: nil
        }
    }

    @Test("--quick shortens everything, explicit flags still win")
    func quick() throws {
        let command = try #require(try BenchCommand.parseAsRoot(["--quick", "--repeat", "2"]) as? CacheCommand)
        #expect(command.common.threadCounts(defaults: CacheCommand.defaultThreads) == [1, 2])
        #expect(command.effectiveReadRatios == [0.95])
        let settings = command.common.settings(defaults: CacheCommand.defaultSettings)
        #expect(settings.repeats == 2)
        #expect(settings.seconds < 0.1)
    }

    @Test("groups select by kind")
    func groups() throws {
        let command = try #require(try BenchCommand.parseAsRoot(["--strategies", "peers"]) as? CacheCommand)
        let entries = try command.selectedEntries()
        #expect(!entries.isEmpty)
        #expect(entries.allSatisfy { $0.kind == .peer })
    }

    @Test(
        "bad input is rejected",
        arguments: [
            ["--threads", "0"], ["--threads", "1,x"], ["--read-ratio", "1.5"], ["--seconds", "0"], ["--repeat", "0"],
            ["--keys", "0"], ["--format", "xml"],
        ]
    )
    func rejected(arguments: [String]) {
        #expect(throws: (any Error).self) { try BenchCommand.parseAsRoot(arguments) }
    }

    @Test("an unknown strategy is an error that names it")
    func unknownStrategy() throws {
        let command = try #require(try BenchCommand.parseAsRoot(["--strategies", "nope"]) as? CacheCommand)
        #expect(throws: ValidationError.self) { try command.selectedEntries() }
    }
}
