// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import ArgumentParser
import BenchKit
import Glibc
import NIOConcurrencyHelpers
import Testing
import Threading

/// Broken on purpose: runs the critical section twice, so the counter no longer matches the operations.
final class DoubleEntryLock: BenchLock, Sendable {
    static let name = "double entry (test)", id = "test-double", kind = StrategyKind.reference
    private let lock = NIOLock()
    func withLock<R>(_ body: () -> R) -> R {
        lock.withLock {
            _ = body()
            return body()
        }
    }
}

@Suite("Other families", .serialized)
struct FamilyTests {
    @Test("the locks workload catches a lock whose counter disagrees with the operations")
    func brokenLockIsInvalid() {
        let sample = Locks.runWorkload(DoubleEntryLock.self, threads: 1, seconds: 0.01)
        #expect(sample.operations > 0)
        #expect(sample.badOperations == sample.operations)
    }

    /// Whether this test binary runs under ThreadSanitizer.
    static let underThreadSanitizer = dlsym(dlopen(nil, RTLD_NOW), "__tsan_init") != nil

    /// In-process locks only: the membarrier-mode rows run in a child bench process (`ChildProcessTests`).
    @Test(
        "every lock keeps the counter exact under contention",
        arguments: Locks.catalog.map(\.id).filter { !$0.hasSuffix("-membarrier") }
    )
    func locksAreValid(id: String) throws {
        let entry = try #require(Locks.catalog.first { $0.id == id })
        // Synchronization.Mutex on Linux is a futex in the uninstrumented standard library: TSan cannot see the
        // ordering it provides and reports the counter it guards, so under TSan it runs uncontended only.
        let threads = id == "sync-mutex" && Self.underThreadSanitizer ? 1 : 2
        let sample = entry.run(threads, 0.01)
        #expect(sample.operations > 0)
        #expect(sample.badOperations == 0)
    }

    @Test("every baton completes round trips", arguments: Handoff.catalog.map(\.id))
    func handoffRuns(id: String) throws {
        let entry = try #require(Handoff.catalog.first { $0.id == id })
        let sample = entry.run(2, 0.01)
        #expect(sample.operations > 0)
        #expect(sample.badOperations == 0)
    }

    @Test(
        "every once and thread-local reader reads the value set up",
        arguments: (BenchReads.onceCatalog + BenchReads.threadLocalCatalog).map(\.id)
    )
    func readsAreValid(id: String) throws {
        let entry = try #require((BenchReads.onceCatalog + BenchReads.threadLocalCatalog).first { $0.id == id })
        let sample = entry.run(2, 0.01)
        #expect(sample.operations > 0)
        #expect(sample.badOperations == 0)
    }

    @Test("bench locks --counters: one COUNTERS line in the documented form for each futex-lock strategy only")
    func locksCountersLines() throws {
        let counted = Locks.catalog.filter { $0.countersRun != nil }.map(\.id).sorted()
        #expect(counted == ["lockedvalue", "mutexlock", "recursivelock"])
        let entry = try #require(Locks.catalog.first { $0.id == "mutexlock" })
        let line = try #require(entry.countersRun?(2, 0.01))
        let pattern =
            #/^COUNTERS locks: mutexlock T=2 eagain_per_1k=[0-9.]+ rmw_per_contended=[0-9.]+ spinners_mean=[0-9.]+ futex_calls_per_contended=[0-9.]+ handoffs_per_ms=[0-9.]+ owner_changes_per_1k=[0-9.]+ contended_per_1k=[0-9.]+$/#
        #expect(line.wholeMatch(of: pattern) != nil, "\(line)")
        #expect(!LockProtocolCounters.isCounting)  // the run restores the process's setting
    }

    @Test("bench pool-async --counters: one COUNTERS line in the documented form per queue of ours, every task run")
    func poolAsyncCountersLines() {
        let pattern =
            #/^COUNTERS pool-async: (ConcurrentQueue|SerialQueue)\(pool:\) T=2 asyncs=[0-9]+ units_per_async=[0-9.]+ wakeups_per_async=[0-9.]+ pool_locks_per_async=[0-9.]+$/#
        for concurrent in [true, false] {
            let line = PoolAsync.countersLine(concurrent: concurrent, threads: 2, seconds: 0.01, poolThreads: 4)
            #expect(line.wholeMatch(of: pattern) != nil, "\(line)")
            #expect(line.contains(concurrent ? "ConcurrentQueue(pool:)" : "SerialQueue(pool:)"))
        }
    }

    @Test("the locks workload reports its longest batch as the worst wait")
    func locksReportTheWorstWait() throws {
        let entry = try #require(Locks.catalog.first { $0.id == "mutexlock" })
        let sample = entry.run(2, 0.01)
        #expect(sample.worstNanoseconds > 0)
    }

    @Test("every spawner returns the thread's result", arguments: Threads.catalog.map(\.id))
    func threadsRun(id: String) throws {
        let entry = try #require(Threads.catalog.first { $0.id == id })
        let sample = entry.run(1, 0.01)
        #expect(sample.operations > 0)
        #expect(sample.badOperations == 0)
    }

    @Test("every queue runs sync and async items exactly once", arguments: Queues.catalog.map(\.id))
    func queuesRun(id: String) throws {
        let entry = try #require(Queues.catalog.first { $0.id == id })
        for sample in [entry.runSync(2, 0.01), entry.runAsync(2, 0.01)] {
            #expect(sample.operations > 0)
            #expect(sample.badOperations == 0)
        }
    }

    @Test("every RCU-family reader reads the shared value", arguments: RCUFamily.catalog.map(\.id))
    func rcuRuns(id: String) throws {
        let entry = try #require(RCUFamily.catalog.first { $0.id == id })
        let sample = entry.run(2, 0.01)
        #expect(sample.operations > 0)
        #expect(sample.badOperations == 0)
    }

    @Test(
        "both grace-period strategies (ours and raw liburcu) complete grace periods while readers read",
        arguments: RCUFamily.graceCatalog.map(\.id)
    )
    func graceRuns(id: String) throws {
        let entry = try #require(RCUFamily.graceCatalog.first { $0.id == id })
        let sample = entry.run(2, 0.01)
        #expect(sample.operations > 0)
        #expect(sample.badOperations == 0)
    }

    @Test("the rcu family's grace study compares ours with the raw liburcu reference")
    func graceStudySelection() throws {
        let all = try #require(try BenchCommand.parseAsRoot(["rcu"]) as? RCUCommand)
        let (reads, grace) = try all.selectedEntries()
        #expect(reads.map(\.id) == RCUFamily.catalog.map(\.id))
        #expect(grace.map(\.kind) == [.ours, .reference])
        let peers = try #require(try BenchCommand.parseAsRoot(["rcu", "--strategies", "peers"]) as? RCUCommand)
        #expect(try peers.selectedEntries().grace.isEmpty)
        let one = try #require(
            try BenchCommand.parseAsRoot(["rcu", "--strategies", "urcu-synchronize"]) as? RCUCommand
        )
        #expect(try one.selectedEntries().reads.isEmpty)
        #expect(try one.selectedEntries().grace.map(\.id) == ["urcu-synchronize"])
    }

    @Test("the grace summary gives microseconds per grace period and ours against the reference")
    func graceSummary() {
        func cell(_ name: String, _ kind: StrategyKind, _ ops: Double) -> CellResult {
            CellResult(
                strategy: name,
                id: name,
                kind: kind,
                threads: 2,
                opsPerSecond: ops,
                cpuNsPerOp: 0,
                p50Ns: 0,
                p99Ns: 0,
                fairness: 1,
                badOperations: 0,
                valid: true,
                outcome: "ok",
                repeats: [ops]
            )
        }
        let study = RCUCommand.withGraceSummary(
            StudyResult(
                id: "rcu-grace",
                family: "rcu",
                title: "rcu grace period",
                operation: "grace period",
                parameters: [:],
                threads: [2],
                results: [cell("RCU.synchronize", .ours, 50_000), cell("synchronize_rcu", .reference, 100_000)]
            )
        )
        #expect(study.summary.contains("RCU.synchronize 20.0 us"))
        #expect(study.summary.contains("synchronize_rcu 10.0 us"))
        #expect(study.summary.contains("ours = 0.50x the reference's rate"))
    }

    @Test("subcommands parse", arguments: ["locks", "threads", "handoff", "queues", "rcu"])
    func subcommands(name: String) throws {
        let command = try BenchCommand.parseAsRoot([name, "--threads", "2", "--quick", "--format", "json"])
        switch command {
        case let locks as LocksCommand: #expect(locks.common.threads?.values == [2])
        case let threads as ThreadsCommand: #expect(threads.common.format == .json)
        case let handoff as HandoffCommand: #expect(handoff.common.quick)
        case let queues as QueuesCommand: #expect(queues.common.threads?.values == [2])
        case let rcu as RCUCommand: #expect(rcu.common.format == .json)
        default: Issue.record("unexpected command \(type(of: command))")
        }
    }
}
