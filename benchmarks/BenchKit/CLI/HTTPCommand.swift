// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import ArgumentParser
import Foundation

extension HTTPBench.Endpoint: ExpressibleByArgument {}

/// `bench http`: the example Hummingbird server loaded over loopback, once per way of offloading its blocking call.
public struct HTTPCommand: ParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "http",
        abstract: "The example Hummingbird server under load: Threading's blocking pool vs NIOThreadPool and others.",
        discussion: """
            Needs the example server's release build; from the repository root:
              \(HTTPBench.buildCommand)
            (or --server PATH, or $\(HTTPBench.serverEnvironment)). Per round, each offload mode in turn: the server
            starts on an ephemeral port, 64 keep-alive connections send GET /blocking (a 2 ms sleep) in a closed
            loop while GET /health is probed every 5 ms; after the warm-up, the measured phase gives req/s, p50 and
            p99 of /blocking, p99 of /health, the server's CPU time per request (the whole process, /proc/<pid>/stat,
            and its offload threads' share, their schedstat), and the server's peak threads and threads created
            while measured (/proc/<pid>/task). Ratios against nio-sized (NIOThreadPool(N)) and nio-singleton.
            Defaults: --threads 64 (connections) --seconds 5 --warmup 2 --repeat 3 (rounds; every other round runs
            the modes in reverse order), every mode (about 2 minutes). --quick: --seconds 1 --warmup 0.5 --repeat 1, threading-blocking and nio-sized (under 30 s).
            --endpoint health: the connections load GET /health instead (a constant answer, nothing blocks), and the
            default modes are \(HTTPBench.executorModes.joined(separator: " and ")): the default global executor
            against WorkerPool.shared as global executor (ratios against the default one in the SUMMARY line).
            Files: bench-results/http/ (bench-results/quick/http/ with --quick).
            """
    )

    /// The default connection count.
    public static let defaultConnections = 64

    /// The options every family shares (`--threads` is the connection count; `--repeat` the rounds).
    @OptionGroup public var common: CommonOptions

    /// The server binary.
    @Option(name: .long, help: "The hummingbird-server binary (default: examples/.build/release/hummingbird-server).")
    public var server: String?

    /// Microseconds the blocking call sleeps.
    @Option(name: .customLong("blocking-us"), help: "Microseconds the blocking call of /blocking sleeps.")
    public var blockingMicroseconds = 2_000

    /// The size of the pools a mode creates.
    @Option(name: .customLong("pool-threads"), help: "Threads of WorkerPool(N) and NIOThreadPool(N).")
    public var poolThreads = 64

    /// The endpoint the connections load.
    @Option(
        name: .long,
        help: "The endpoint the connections load: blocking (the offloaded call) or health (nothing blocks)."
    )
    public var endpoint = HTTPBench.Endpoint.blocking

    public init() {}

    public func validate() throws {
        if let threads = common.threads, threads.values.count != 1 {
            throw ValidationError("--threads: give one connection count")
        }
        if !(0...10_000_000).contains(blockingMicroseconds) { throw ValidationError("--blocking-us: 0...10000000") }
        if !(1...4_096).contains(poolThreads) { throw ValidationError("--pool-threads: 1...4096") }
    }

    /// The settings of this invocation.
    public func settings() -> HTTPBench.Settings {
        var settings = HTTPBench.Settings()
        if common.quick {
            settings.seconds = 1
            settings.warmupSeconds = 0.5
            settings.rounds = 1
        }
        settings.connections = common.threads?.values.first ?? Self.defaultConnections
        settings.seconds = common.seconds ?? settings.seconds
        settings.warmupSeconds = common.warmup ?? settings.warmupSeconds
        settings.rounds = common.repeats ?? settings.rounds
        settings.blockingMicroseconds = blockingMicroseconds
        settings.poolThreads = poolThreads
        settings.endpoint = endpoint
        return settings
    }

    public func run() throws {
        let defaults = endpoint == .health ? HTTPBench.executorModes : (common.quick ? HTTPBench.quickModes : nil)
        let filter = common.strategies ?? defaults?.joined(separator: ",")
        let modes = try selectStrategies(HTTPBench.catalog, filter: filter, id: \.id, name: \.name, kind: \.kind)
        if common.list {
            print(listing(modes.map { ($0.id, $0.name, $0.kind, "GET /\(endpoint.rawValue) on the example server") }))
            return
        }
        let binary: String
        do {
            binary = try HTTPBench.locateServer(explicit: server)
        } catch {
            throw ValidationError(error.description)
        }
        Reporter.warnIfDebug()
        let study = HTTPBench.study(
            server: binary,
            modes: modes,
            settings: settings(),
            progress: Progress(enabled: !common.quiet)
        )
        try Reporter.emit(Reporter.report([study]), options: common, family: "http")
        if study.results.contains(where: { !$0.valid }) {
            throw ValidationError(
                "http: a mode failed: " + study.results.filter { !$0.valid }.map(\.outcome).joined(separator: "; ")
            )
        }
    }
}

extension HTTPBench {
    /// Runs every mode `settings.rounds` times, interleaved (round 1: every mode, round 2: every mode in reverse,
    /// ...), and returns the study with medians and ratios.
    ///
    /// - Parameters:
    ///   - server: The server binary.
    ///   - modes: The modes, in the order they run in odd rounds; even rounds run them in reverse, so that no mode
    ///     always runs first (or right after the same one).
    ///   - settings: The load.
    ///   - progress: Where progress lines go.
    /// - Returns: The study.
    public static func study(server: String, modes: [Mode], settings: Settings, progress: Progress) -> StudyResult {
        progress.expect(modes.count * settings.rounds)
        var measurements: [String: [Measurement]] = [:]
        var failures: [String: [String]] = [:]
        for round in 1...settings.rounds {
            for mode in round % 2 == 1 ? modes : modes.reversed() {
                switch run(server: server, mode: mode.id, settings: settings) {
                case .success(let measurement):
                    measurements[mode.id, default: []].append(measurement)
                    progress.cellDone(
                        "http round \(round) \(mode.id): \(compactRate(measurement.requestsPerSecond)) req/s, "
                            + "p99 \(measurement.p99Ns / 1_000) us, "
                            + "health p99 \(measurement.healthP99Ns / 1_000) us, "
                            + String(format: "cpu %.1f us/req", measurement.cpuNsPerRequest / 1e3)
                            + (measurement.offloadCpuNsPerRequest.map {
                                String(format: " (offload threads %.1f)", $0 / 1e3)
                            } ?? "") + ", "
                            + "\(measurement.threadsCreated) threads created"
                            + (measurement.createdThreadNames.isEmpty
                                ? "" : " (\(measurement.createdThreadNames.joined(separator: ", ")))")
                    )
                case .failure(let failure):
                    failures[mode.id, default: []].append(failure.description)
                    progress.cellDone("http round \(round) \(mode.id): \(failure.description)")
                }
            }
        }
        let cells = modes.map {
            cell(
                mode: $0,
                connections: settings.connections,
                measurements: measurements[$0.id] ?? [],
                failures: failures[$0.id] ?? []
            )
        }
        let parameters = [
            "connections": String(settings.connections), "blocking-us": String(settings.blockingMicroseconds),
            "pool-threads": String(settings.poolThreads), "seconds": String(settings.seconds),
            "warmup": String(settings.warmupSeconds), "rounds": String(settings.rounds),
            "health-interval-ms": String(settings.healthIntervalMilliseconds),
            "endpoint": settings.endpoint.rawValue,
        ]
        return withRatios(
            StudyResult(
                id: "http",
                family: "http",
                title: "http",
                operation: settings.endpoint == .blocking
                    ? "GET /blocking answered (a \(settings.blockingMicroseconds) us blocking call, offloaded)"
                    : "GET /health answered (nothing blocks)",
                parameters: parameters,
                threads: [settings.connections],
                results: cells
            )
        )
    }
}
