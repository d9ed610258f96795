// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import ArgumentParser
import BenchKit
import Foundation
import Testing

@Suite("Queues ping-pong and blocked-queues census", .serialized)
struct QueuesStudyTests {
    @Test("every queue ping-pongs with hops alternating A, B, A, ...", arguments: Queues.catalog.map(\.id))
    func pingPongRuns(id: String) throws {
        let entry = try #require(Queues.catalog.first { $0.id == id })
        let sample = entry.runPingPong(1, 0.01)
        #expect(sample.operations > 0)
        #expect(sample.badOperations == 0)
    }

    @Test("a small census runs every task, all at once, and counts threads", arguments: Queues.catalog.map(\.id))
    func smallCensus(id: String) throws {
        let entry = try #require(Queues.catalog.first { $0.id == id })
        // Four blocked queues fit under any cap; the deadline only bounds a broken run.
        let census = entry.census(4, 5)
        #expect(census.queues == 4)
        #expect(census.completed == 4)
        #expect(census.blockedAtOnce == 4)
        #expect(census.baselineThreads >= 1)
        #expect(census.peakThreads >= census.baselineThreads)
        if entry.kind == .ours {
            let cap = try #require(census.threadCap)
            let pool = try #require(census.poolPeakThreads)
            #expect(pool >= 1 && pool <= cap)
            #expect(census.withinCap == true)
        } else {
            #expect(census.threadCap == nil)
            #expect(census.withinCap == nil)
        }
    }

    @Test("queues parses the census options; --quick shortens the deadline")
    func parsesOptions() throws {
        let plain = try #require(try BenchCommand.parseAsRoot(["queues"]) as? QueuesCommand)
        #expect(plain.blockedQueues == 64)
        #expect(plain.effectiveBlockSeconds == 2)
        let quick = try #require(try BenchCommand.parseAsRoot(["queues", "--quick"]) as? QueuesCommand)
        #expect(quick.effectiveBlockSeconds == 0.5)
        let custom = try #require(
            try BenchCommand.parseAsRoot(["queues", "--blocked-queues", "8", "--block-seconds", "0.3", "--quick"])
                as? QueuesCommand
        )
        #expect(custom.blockedQueues == 8)
        #expect(custom.effectiveBlockSeconds == 0.3)
        #expect(throws: (any Error).self) { try BenchCommand.parseAsRoot(["queues", "--blocked-queues", "0"]) }
        #expect(throws: (any Error).self) { try BenchCommand.parseAsRoot(["queues", "--block-seconds", "-1"]) }
    }

    @Test("the child census command parses the arguments the parent builds")
    func childArguments() throws {
        let arguments = ChildBlockedQueuesCommand.arguments(strategy: "dispatch", queues: 64, deadlineSeconds: 2)
        let command = try #require(try BenchCommand.parseAsRoot(arguments) as? ChildBlockedQueuesCommand)
        #expect(command.strategy == "dispatch")
        #expect(command.queues == 64)
        #expect(command.deadline == 2)
    }

    static let oursCensus = ThreadCensus(
        queues: 64,
        deadlineSeconds: 2,
        blockedAtOnce: 40,
        completed: 64,
        baselineThreads: 2,
        peakThreads: 44,
        poolPeakThreads: 40,
        threadCap: 40,
        seconds: 2.01
    )
    static let dispatchCensus = ThreadCensus(
        queues: 64,
        deadlineSeconds: 2,
        blockedAtOnce: 64,
        completed: 64,
        baselineThreads: 2,
        peakThreads: 67,
        seconds: 0.02
    )

    static func censusStudy() throws -> StudyResult {
        let ours = try #require(Queues.catalog.first { $0.kind == .ours })
        let peer = try #require(Queues.catalog.first { $0.kind == .peer })
        return StudyResult(
            id: "queues-blocked",
            family: "queues",
            title: "queues blocked",
            operation: "64 serial queues",
            parameters: ["queues": "64"],
            threads: [64],
            results: [
                QueuesCommand.censusCell(entry: ours, result: .success(oursCensus)),
                QueuesCommand.censusCell(entry: peer, result: .success(dispatchCensus)),
            ]
        )
    }

    @Test("census cells: valid when all ran within the cap, invalid otherwise, abnormal children reported")
    func censusCells() throws {
        let ours = try #require(Queues.catalog.first { $0.kind == .ours })
        let good = QueuesCommand.censusCell(entry: ours, result: .success(Self.oursCensus))
        #expect(good.valid)
        #expect(good.outcome == "ok (40 at once)")
        var short = Self.oursCensus
        short.completed = 60
        let lost = QueuesCommand.censusCell(entry: ours, result: .success(short))
        #expect(!lost.valid)
        #expect(lost.outcome == "INVALID (only 60/64 ran)")
        #expect(lost.badOperations == 4)
        var over = Self.oursCensus
        over.poolPeakThreads = 41
        #expect(QueuesCommand.censusCell(entry: ours, result: .success(over)).outcome == "INVALID (pool over its cap)")
        let crashed = QueuesCommand.censusCell(entry: ours, result: .failure(ChildFailure(.crashed(signal: 11))))
        #expect(!crashed.valid)
        #expect(crashed.census == nil)
        #expect(crashed.outcome == "crashed (signal 11)")
    }

    @Test("the census renders as a table, CSV and JSON with both thread counts and the cap")
    func censusOutput() throws {
        let study = try Self.censusStudy()
        #expect(study.summary.contains("SerialQueue (ours) 64/64 ran, 40 at once, peak 44 threads (pool 40, cap 40)"))
        #expect(study.summary.contains("within cap"))
        #expect(study.summary.contains("DispatchQueue (serial) (peer) 64/64 ran, 64 at once, peak 67 threads"))
        let report = BenchReport(
            version: "1.0.0",
            build: "release",
            date: "2026-11-21T00:00:00Z",
            cpus: 2,
            system: "Linux",
            command: "bench queues",
            studies: [study]
        )
        let table = TextTable.render(report)
        #expect(table.contains("peak threads"))
        #expect(table.contains("ok (all at once)"))
        let csv = CSVWriter.render(report).split(separator: "\n").map(String.init)
        #expect(csv.count == 3)
        for line in csv {
            #expect(line.split(separator: ",", omittingEmptySubsequences: false).count == CSVWriter.columns.count)
        }
        #expect(csv[1].hasSuffix(",64,40,64,2,44,40,40"))
        #expect(csv[2].hasSuffix(",64,64,64,2,67,,"))
        let json = try JSONWriter.render(report)
        #expect(try JSONDecoder().decode(BenchReport.self, from: Data(json.utf8)) == report)
        #expect(json.contains("\"peakThreads\" : 44"))
        #expect(json.contains("\"threadCap\" : 40"))
    }

    @Test("the ping-pong summary gives ns per hop, percentiles and the ratio")
    func hopSummary() {
        func cell(_ name: String, _ kind: StrategyKind, _ ops: Double) -> CellResult {
            CellResult(
                strategy: name,
                id: name,
                kind: kind,
                threads: 1,
                opsPerSecond: ops,
                cpuNsPerOp: 1,
                p50Ns: 250,
                p99Ns: 900,
                fairness: 1,
                badOperations: 0,
                valid: true,
                outcome: "ok",
                repeats: [ops]
            )
        }
        let study = QueuesCommand.withHopSummary(
            StudyResult(
                id: "queues-pingpong",
                family: "queues",
                title: "queues ping-pong",
                operation: "one hop",
                parameters: [:],
                threads: [1],
                results: [cell("Ours", .ours, 4e6), cell("Peer", .peer, 1e6)]
            )
        )
        #expect(study.summary.hasPrefix("SUMMARY queues ping-pong: Ours 250 ns/hop (p50 250, p99 900)"))
        #expect(study.summary.contains("Peer 1000 ns/hop"))
        #expect(study.summary.contains("ours = 4.00x the hop rate of Peer"))
    }
}
