// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import ArgumentParser
import Threading

/// `bench locks`: uncontended (1 thread) and contended lock + increment + unlock, ours vs peers.
public struct LocksCommand: ParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "locks",
        abstract: "Lock/unlock cost, uncontended (1 thread) and contended (2+ threads), ours vs peers.",
        discussion: "Defaults: --threads 1,2,4,8 --seconds 0.2 --warmup 0.05 --repeat 3 (about 40 s)."
    )

    /// The options every family shares.
    @OptionGroup public var common: CommonOptions

    public init() {}

    public func run() throws {
        let entries = try selectStrategies(
            Locks.catalog,
            filter: common.strategies,
            id: \.id,
            name: \.name,
            kind: \.kind
        )
        if common.list {
            print(listing(entries.map { ($0.id, $0.name, $0.kind, "lock, increment a shared counter, unlock") }))
            return
        }
        try runFamily(
            id: "locks",
            title: "locks",
            operation: "lock, increment a shared counter, unlock",
            defaultThreads: CacheCommand.defaultThreads,
            common: common,
            cases: entries.map { BenchCase(name: $0.name, id: $0.id, kind: $0.kind, run: $0.run) }
        )
    }
}

/// `bench handoff`: condition/semaphore ping-pong between pairs of threads.
public struct HandoffCommand: ParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "handoff",
        abstract: "Ping-pong round trips between pairs of threads (semaphores, conditions, monitors).",
        discussion: "Defaults: --threads 2,4 (pairs of threads) --seconds 0.2 --warmup 0.05 --repeat 3."
    )

    /// The options every family shares.
    @OptionGroup public var common: CommonOptions

    public init() {}

    public func run() throws {
        let entries = try selectStrategies(
            Handoff.catalog,
            filter: common.strategies,
            id: \.id,
            name: \.name,
            kind: \.kind
        )
        if common.list {
            print(listing(entries.map { ($0.id, $0.name, $0.kind, "ping-pong round trip between two threads") }))
            return
        }
        try runFamily(
            id: "handoff",
            title: "handoff",
            operation: "one ping-pong round trip between two threads",
            defaultThreads: [2, 4],
            common: common,
            cases: entries.map { BenchCase(name: $0.name, id: $0.id, kind: $0.kind, run: $0.run) }
        )
    }
}

/// `bench threads`: spawn + join, ours vs raw pthread and Foundation `Thread`.
public struct ThreadsCommand: ParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "threads",
        abstract: "Thread spawn + join cost: PosixThread vs raw pthread_create and Foundation Thread.",
        discussion: "Defaults: --threads 1,2 (concurrent spawners) --seconds 0.2 --warmup 0.05 --repeat 3."
    )

    /// The options every family shares.
    @OptionGroup public var common: CommonOptions

    public init() {}

    public func run() throws {
        let entries = try selectStrategies(
            Threads.catalog,
            filter: common.strategies,
            id: \.id,
            name: \.name,
            kind: \.kind
        )
        if common.list {
            print(listing(entries.map { ($0.id, $0.name, $0.kind, "spawn a thread and join it") }))
            return
        }
        try runFamily(
            id: "threads",
            title: "threads",
            operation: "spawn a thread and join it",
            defaultThreads: [1, 2],
            common: common,
            cases: entries.map { BenchCase(name: $0.name, id: $0.id, kind: $0.kind, run: $0.run) }
        )
    }
}

/// Runs one study of a family with the shared options and emits it.
func runFamily(
    id: String,
    title: String,
    operation: String,
    defaultThreads: [Int],
    common: CommonOptions,
    cases: [BenchCase]
) throws {
    Reporter.warnIfDebug()
    let settings = common.settings(defaults: CacheCommand.defaultSettings)
    let threads = common.threadCounts(defaults: defaultThreads)
    let progress = Progress(enabled: !common.quiet)
    progress.expect(threads.count)
    let study = runStudy(
        id: id,
        family: id,
        title: title,
        operation: operation,
        parameters: [
            "seconds": String(settings.seconds), "warmup": String(settings.warmup),
            "repeats": String(settings.repeats),
        ],
        threads: threads,
        cases: cases,
        settings: settings,
        progress: progress
    )
    try Reporter.emit(Reporter.report([study]), options: common)
}

/// `bench queues`: serial-queue `sync` round trips and `async` throughput, ours vs Dispatch.
public struct QueuesCommand: ParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "queues",
        abstract: "Serial queue sync round trips and async throughput (1 and 4 producers), SerialQueue vs Dispatch.",
        discussion: "Defaults: --threads 1,4 --seconds 0.2 --warmup 0.05 --repeat 3."
    )

    /// The options every family shares.
    @OptionGroup public var common: CommonOptions

    public init() {}

    public func run() throws {
        let entries = try selectStrategies(
            Queues.catalog,
            filter: common.strategies,
            id: \.id,
            name: \.name,
            kind: \.kind
        )
        if common.list {
            print(listing(entries.map { ($0.id, $0.name, $0.kind, "serial queue: sync round trip, async submit") }))
            return
        }
        Reporter.warnIfDebug()
        let settings = common.settings(defaults: CacheCommand.defaultSettings)
        let threads = common.threadCounts(defaults: [1, 4])
        let progress = Progress(enabled: !common.quiet)
        progress.expect(threads.count * 2)
        let parameters = [
            "seconds": String(settings.seconds), "warmup": String(settings.warmup),
            "repeats": String(settings.repeats),
        ]
        let sync = runStudy(
            id: "queues-sync",
            family: "queues",
            title: "queues sync",
            operation: "queue.sync { counter += 1 }",
            parameters: parameters,
            threads: threads,
            cases: entries.map { BenchCase(name: $0.name, id: $0.id, kind: $0.kind, run: $0.runSync) },
            settings: settings,
            progress: progress
        )
        let async = runStudy(
            id: "queues-async",
            family: "queues",
            title: "queues async",
            operation: "queue.async { counter += 1 } (drained before the clock stops)",
            parameters: parameters,
            threads: threads,
            cases: entries.map { BenchCase(name: $0.name, id: $0.id, kind: $0.kind, run: $0.runAsync) },
            settings: settings,
            progress: progress
        )
        try Reporter.emit(Reporter.report([sync, async]), options: common)
    }
}

/// `bench rcu`: RCU read-side cost vs readers, and grace-period latency.
public struct RCUCommand: ParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "rcu",
        abstract: "RCU read-side cost as readers are added (vs Mutex, NIOLockedValueBox, pthread_rwlock), and "
            + "grace-period latency.",
        discussion: "Defaults: --threads 1,2,4,8 --seconds 0.2 --warmup 0.05 --repeat 3."
    )

    /// The options every family shares.
    @OptionGroup public var common: CommonOptions

    public init() {}

    public func run() throws {
        let entries = try selectStrategies(
            RCUFamily.catalog,
            filter: common.strategies,
            id: \.id,
            name: \.name,
            kind: \.kind
        )
        if common.list {
            print(listing(entries.map { ($0.id, $0.name, $0.kind, "read one shared Int") }))
            return
        }
        Reporter.warnIfDebug()
        let settings = common.settings(defaults: CacheCommand.defaultSettings)
        let threads = common.threadCounts(defaults: CacheCommand.defaultThreads)
        let progress = Progress(enabled: !common.quiet)
        progress.expect(threads.count * 2)
        let parameters = [
            "seconds": String(settings.seconds), "warmup": String(settings.warmup),
            "repeats": String(settings.repeats), "membarrier": String(RCU.usesMembarrier),
        ]
        let reads = runStudy(
            id: "rcu-read",
            family: "rcu",
            title: "rcu read side",
            operation: "read one shared Int",
            parameters: parameters,
            threads: threads,
            cases: entries.map { BenchCase(name: $0.name, id: $0.id, kind: $0.kind, run: $0.run) },
            settings: settings,
            progress: progress
        )
        let grace = runStudy(
            id: "rcu-grace",
            family: "rcu",
            title: "rcu grace period",
            operation: "RCU.synchronize() with T-1 threads reading",
            parameters: parameters,
            threads: threads.map { max($0, 1) },
            cases: [
                BenchCase(name: "RCU.synchronize", id: "synchronize", kind: .ours) { threads, seconds in
                    RCUFamily.gracePeriods(threads: threads, seconds: seconds)
                }
            ],
            settings: settings,
            progress: progress
        )
        try Reporter.emit(Reporter.report([reads, grace]), options: common)
    }
}
