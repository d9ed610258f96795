// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import ArgumentParser

/// `bench pools`: a pool's whole life (create, one task, shutdown), ours vs Dispatch and a bare thread.
public struct PoolsCommand: ParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "pools",
        abstract: "WorkerPool create + one task + shutdown, vs a Dispatch queue and a bare PosixThread.",
        discussion: """
            Defaults: --threads 1 (concurrent callers) --seconds 0.2 --warmup 0.05 --repeat 3.
            \(CommonOptions.quickHelp(defaultThreads: PoolsCommand.defaultThreads)).
            Files: bench-results/pools/ (bench-results/quick/pools/ with --quick).
            """
    )

    /// Default thread counts (concurrent callers).
    public static let defaultThreads = [1]

    /// The options every family shares.
    @OptionGroup public var common: CommonOptions

    public init() {}

    public func run() throws {
        try runSpawnerFamily(
            id: "pools",
            operation: "one pool life: create, run one task, shut down",
            catalog: Pools.lifeCatalog,
            defaultThreads: Self.defaultThreads,
            common: common
        )
    }
}

/// `bench blocking`: batches of blocking tasks on a blocking pool, ours vs Dispatch.
public struct BlockingPoolCommand: ParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "blocking",
        abstract: "256 tasks that each block 1 ms: a 64-thread blocking WorkerPool vs Dispatch's global queue.",
        discussion: """
            Defaults: --threads 1 (concurrent callers) --seconds 0.2 --warmup 0.05 --repeat 3.
            \(CommonOptions.quickHelp(defaultThreads: BlockingPoolCommand.defaultThreads)).
            Files: bench-results/blocking/ (bench-results/quick/blocking/ with --quick).
            """
    )

    /// Default thread counts (concurrent callers).
    public static let defaultThreads = [1]

    /// The options every family shares.
    @OptionGroup public var common: CommonOptions

    public init() {}

    public func run() throws {
        try runSpawnerFamily(
            id: "blocking",
            operation: "one batch of 256 tasks that each block 1 ms",
            catalog: Pools.blockingCatalog,
            defaultThreads: Self.defaultThreads,
            common: common
        )
    }
}

/// Lists or runs a family whose strategies are ``ThreadSpawner`` entries.
func runSpawnerFamily(
    id: String,
    operation: String,
    catalog: [Threads.Entry],
    defaultThreads: [Int],
    common: CommonOptions
) throws {
    let entries = try selectStrategies(catalog, filter: common.strategies, id: \.id, name: \.name, kind: \.kind)
    if common.list {
        print(listing(entries.map { ($0.id, $0.name, $0.kind, operation) }))
        return
    }
    try runFamily(
        id: id,
        title: id,
        operation: operation,
        defaultThreads: defaultThreads,
        common: common,
        cases: entries.map { BenchCase(name: $0.name, id: $0.id, kind: $0.kind, run: $0.run) }
    )
}
