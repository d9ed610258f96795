// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import ArgumentParser
import BenchKit
import Testing

@Suite("Command line")
struct CommandLineTests {
    @Test("no arguments runs the default cache study")
    func defaults() throws {
        let command = try #require(try BenchCommand.parseAsRoot([]) as? CacheCommand)
        #expect(command.common.threadCounts(defaults: CacheCommand.defaultThreads) == [1, 2, 4, 8])
        #expect(command.effectiveReadRatios == [0.95, 0.5, 1.0])
        #expect(command.keys == 1024)
        #expect(command.common.settings(defaults: CacheCommand.defaultSettings) == CacheCommand.defaultSettings)
        #expect(command.common.format == .table)
        #expect(try command.selectedEntries().count == CacheContention.catalog.count)
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
        #expect(
            command.common.settings(defaults: CacheCommand.defaultSettings)
                == RunSettings(seconds: 0.1, warmup: 0, repeats: 5)
        )
        #expect(try command.selectedEntries().map(\.id) == ["nslock", "sync-mutex"])
        #expect(command.common.format == .csv)
        #expect(command.common.output == "/tmp/x")
        #expect(command.common.quiet)
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
