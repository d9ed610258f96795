// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import ArgumentParser
import Foundation
import Threading

/// `bench actors`: Swift Concurrency on Threading — actor ping-pong on serial queues vs default actors, a Dispatch
/// adapter and NIO event loops; blocking calls offloaded to the blocking pool vs `NIOThreadPool`; async waits vs
/// hand-built continuations.
public struct ActorsCommand: ParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "actors",
        abstract: "Actors on SerialQueue vs default actors, a DispatchQueue adapter and NIO event loops (ping-pong, "
            + "1/2/8 pairs); blocking-call offload; await semaphore/group latency.",
        discussion: """
            Defaults: --threads 1,2,8 (actor pairs for ping-pong; concurrent tasks for offload and fan-out) --seconds 0.2
            --warmup 0.05 --repeat 3. The waits run one pair of tasks.
            \(CommonOptions.quickHelp(defaultThreads: ActorsCommand.defaultThreads)).
            --global-executor installs WorkerPool.shared as Swift Concurrency's global executor first (compare with a
            run without it: default actors and fan-out measure the takeover).
            Files: bench-results/actors/ (bench-results/quick/actors/ with --quick).
            """
    )

    /// Default counts: actor pairs (ping-pong) and concurrent tasks (offload).
    public static let defaultThreads = [1, 2, 8]

    /// The options every family shares.
    @OptionGroup public var common: CommonOptions

    /// Runs every case with `WorkerPool.shared` as Swift Concurrency's global executor (installed first thing). The
    /// takeover is for the life of the process, so "with" and "without" are two runs: interleave them.
    @Flag(name: .customLong("global-executor"), help: "Install WorkerPool.shared as the global executor first.")
    public var globalExecutor = false

    public init() {}

    public func run() throws {
        if globalExecutor { try WorkerPool.installAsGlobalConcurrentExecutor() }
        let all =
            Actors.pingPongCatalog + Actors.offloadCatalog + Actors.waitCatalog
            + Actors.completionWaitCatalog + Actors.fanOutCatalog
        // A filter may name cases of any study: it is checked against all of them, and each study keeps its own.
        let selected = Set(
            try selectStrategies(all, filter: common.strategies, id: \.id, name: \.name, kind: \.kind).map(\.id)
        )
        let pick = { (catalog: [Actors.Entry]) in catalog.filter { selected.contains($0.id) } }
        if common.list {
            print(listing(all.map { ($0.id, $0.name, $0.kind, "actors family case") }))
            return
        }
        Reporter.warnIfDebug()
        let settings = common.settings(defaults: CacheCommand.defaultSettings)
        let threads = common.threadCounts(defaults: Self.defaultThreads)
        let progress = Progress(enabled: !common.quiet)
        let studyPlan: [(id: String, operation: String, threads: [Int], entries: [Actors.Entry])] = [
            (
                "ping-pong", "one round trip: an actor awaits a method of its peer (threads = actor pairs)", threads,
                pick(Actors.pingPongCatalog)
            ),
            (
                "offload", "one blocking call (getppid) moved off the cooperative pool and awaited (threads = tasks)",
                threads, pick(Actors.offloadCatalog)
            ),
            (
                "waits", "one async wait: a semaphore round trip between two tasks (one operation = two waits)", [1],
                pick(Actors.waitCatalog)
            ),
            (
                "fan-out", "one task group of 100 children that each return a number, summed (threads = tasks)",
                threads, pick(Actors.fanOutCatalog)
            ),
            (
                "completion-waits",
                "one async wait for work a queue runs: a group it leaves, an item or a job it finishes", [1],
                pick(Actors.completionWaitCatalog)
            ),
        ]
        let plan = studyPlan.filter { !$0.entries.isEmpty }
        progress.expect(plan.reduce(0) { $0 + $1.threads.count })
        let parameters = [
            "seconds": String(settings.seconds), "warmup": String(settings.warmup),
            "repeats": String(settings.repeats),
        ]
        func study(_ id: String, _ operation: String, _ threads: [Int], _ entries: [Actors.Entry]) -> StudyResult {
            Self.withPeerRatios(
                runStudy(
                    id: "actors-\(id)",
                    family: "actors",
                    title: "actors \(id)",
                    operation: operation,
                    parameters: parameters,
                    threads: threads,
                    cases: entries.map { BenchCase(name: $0.name, id: $0.id, kind: $0.kind, run: $0.run) },
                    settings: settings,
                    progress: progress
                )
            )
        }
        let studies = plan.map { study($0.id, $0.operation, $0.threads, $0.entries) }
        try Reporter.emit(Reporter.report(studies), options: common, family: "actors")
    }

    /// Cases of ours that are also compared with another case of ours (by id): actors sharing one queue against
    /// actors on a queue each.
    static let oursBaselines = ["shared-queue": ["serial-queue"]]

    /// The study with a summary giving ours against every peer at every count: `1: actor on SerialQueue 1.20x
    /// default actor, 2.50x actor on DispatchQueue adapter, ...` (and against the cases of ``oursBaselines``).
    public static func withPeerRatios(_ study: StudyResult) -> StudyResult {
        var study = study
        var parts: [String] = []
        for count in study.threads {
            let cells = study.results.filter { $0.threads == count && $0.valid && $0.opsPerSecond > 0 }
            for ours in cells where ours.kind == .ours {
                let baselines = oursBaselines[ours.id] ?? []
                let ratios = cells.filter { $0.kind == .peer || baselines.contains($0.id) }.map {
                    "\(formatRatio(ours.opsPerSecond / $0.opsPerSecond)) \($0.strategy)"
                }
                guard !ratios.isEmpty else { continue }
                parts.append("\(count): \(ours.strategy) " + ratios.joined(separator: ", "))
            }
        }
        if !parts.isEmpty { study.summary = "SUMMARY \(study.title): " + parts.joined(separator: "; ") }
        return study
    }
}
