// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import BenchKit
import Testing

/// The pool families (`pools`, `blocking`, `pool-async`, `kv-server`, `timers`): every strategy completes its
/// operation and returns the checked result, and the validation catches what it must.
@Suite(.serialized) struct PoolsFamilyTests {
    @Test(
        "every pools and blocking strategy returns its result",
        arguments: (Pools.lifeCatalog + Pools.blockingCatalog).map(\.id)
    )
    func poolsRun(id: String) throws {
        let entry = try #require((Pools.lifeCatalog + Pools.blockingCatalog).first { $0.id == id })
        let sample = entry.run(1, 0.01)
        #expect(sample.operations > 0)
        #expect(sample.badOperations == 0)
    }

    @Test("the blocking family runs 10,000 tasks per batch, on ours, NIOThreadPool and Dispatch")
    func blockingBatchHasTenThousandTasks() {
        #expect(Pools.batchTasks == 10_000)
        #expect(Pools.blockingCatalog.map(\.id) == ["blocking-pool", "nio-threadpool", "dispatch-blocking"])
    }

    @Test("every pool-async queue counts each task once", arguments: PoolAsync.catalog.map(\.id), [1, 4])
    func poolAsyncRuns(id: String, producers: Int) throws {
        let entry = try #require(PoolAsync.catalog.first { $0.id == id })
        let sample = entry.run(producers, 0.02)
        #expect(sample.operations > 0)
        #expect(sample.badOperations == 0)
    }

    @Test("every kv-server side answers every connection correctly", arguments: KVServer.catalog.map(\.id))
    func kvServerServesEveryConnection(id: String) throws {
        let entry = try #require(KVServer.catalog.first { $0.id == id })
        let sample = entry.run(16, 0.1)
        #expect(sample.operations >= 16)
        #expect(sample.badOperations == 0)
        #expect(sample.abnormalOutcome == nil)
    }

    @Test("a connection nobody serves makes the kv-server run invalid instead of hanging")
    func unservedConnectionIsCounted() {
        let sample = KVServer.run(connections: 4, seconds: 0.1, server: SkipFirstServer())
        #expect(sample.badOperations >= 1)
        #expect(sample.operations > 0)
    }

    @Test("a kv-server cell of ours with an unserved connection fails the command")
    func unservedConnectionIsAnError() {
        let served = CellResult(
            strategy: "ours",
            id: "kv-blocking-pool",
            kind: .ours,
            threads: 64,
            opsPerSecond: 1,
            cpuNsPerOp: 0,
            p50Ns: 1,
            p99Ns: 1,
            fairness: 1,
            badOperations: 0,
            valid: true,
            outcome: "ok",
            repeats: [1]
        )
        var unserved = served
        unserved.valid = false
        unserved.badOperations = 3
        unserved.outcome = "INVALID (3 bad)"
        let good = StudyResult(
            id: "kv-server",
            family: "kv-server",
            title: "kv-server",
            operation: "",
            parameters: [:],
            threads: [64],
            results: [served]
        )
        let bad = StudyResult(
            id: "kv-server",
            family: "kv-server",
            title: "kv-server",
            operation: "",
            parameters: [:],
            threads: [64],
            results: [unserved]
        )
        #expect(KVServerCommand.unservedFailure(good) == nil)
        #expect(KVServerCommand.unservedFailure(bad) != nil)
    }

    @Test("every timers case fires and records its lateness", arguments: TimerLateness.catalog.map(\.id))
    func timersRun(id: String) throws {
        let entry = try #require(TimerLateness.catalog.first { $0.id == id })
        let sample = entry.run(1, 0.1)
        #expect(sample.operations > 0)
        #expect(sample.badOperations == 0)
        #expect(sample.abnormalOutcome == nil)
        #expect(sample.latency.totalCount == UInt64(sample.operations))
    }

    @Test func poolFamiliesAreSubcommands() throws {
        #expect(try BenchCommand.parseAsRoot(["pools", "--format", "json"]) is PoolsCommand)
        #expect(try BenchCommand.parseAsRoot(["blocking", "--format", "json"]) is BlockingPoolCommand)
        #expect(try BenchCommand.parseAsRoot(["pool-async", "--format", "json"]) is PoolAsyncCommand)
        #expect(try BenchCommand.parseAsRoot(["kv-server", "--format", "json"]) is KVServerCommand)
        #expect(try BenchCommand.parseAsRoot(["timers", "--format", "json"]) is TimersCommand)
    }
}

/// Serves every connection but the first (on threads): the bench must count the unserved one.
final class SkipFirstServer: KVServerRunner {
    private let threads = ThreadServer()
    private var skipped = false

    func start(_ handler: @escaping @Sendable () -> Void) {
        if skipped {
            threads.start(handler)
        } else {
            skipped = true
        }
    }

    func finish(seconds: Double) -> Bool { threads.finish(seconds: seconds) }
}
