// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import HummingbirdExample
import Logging
import ServiceLifecycle
import Testing
import Threading

/// The example server's pieces without a socket: its command line and every offload mode.
@Suite struct HummingbirdExampleTests {
    @Test func defaultsWithNoArguments() throws {
        let options = try ServerOptions.parse([]).get()
        #expect(options == ServerOptions())
        #expect(options.port == 0)
        #expect(options.offload == .threadingBlocking)
        #expect(options.threads == 64)
        #expect(options.blockingMicroseconds == 2_000)
    }

    @Test func parsesEveryFlag() throws {
        let options = try ServerOptions.parse([
            "--port", "8080", "--offload", "nio-sized", "--threads", "8", "--blocking-us", "500", "--cpu-rounds", "10",
            "--host", "0.0.0.0",
        ]).get()
        #expect(options.port == 8080)
        #expect(options.offload == .nioSized)
        #expect(options.threads == 8)
        #expect(options.blockingMicroseconds == 500)
        #expect(options.cpuRounds == 10)
        #expect(options.host == "0.0.0.0")
    }

    @Test(arguments: [
        ["--offload", "threads"], ["--port", "70000"], ["--threads", "0"], ["--port"], ["--bogus", "1"],
        ["--blocking-us", "-1"],
    ])
    func refusesABadCommandLine(_ arguments: [String]) {
        guard case .failure(let error) = ServerOptions.parse(arguments) else {
            Issue.record("\(arguments) was accepted")
            return
        }
        // The message names the argument at fault.
        #expect(error.description.contains(arguments[0]))
    }

    @Test func everyModeHasItsCommandLineName() {
        #expect(
            OffloadMode.allCases.map(\.rawValue) == [
                "threading-blocking", "threading-pool", "nio-singleton", "nio-sized", "inline", "detached",
                "inline-nio-executor", "inline-threading-executor",
            ]
        )
    }

    /// Each mode runs the blocking call and returns its result; the pools it made stop afterwards.
    @Test(arguments: OffloadMode.allCases)
    func everyModeRunsTheBlockingCall(_ mode: OffloadMode) async throws {
        let offloader = Offloader.make(mode: mode, threads: 4)
        #expect(offloader.mode == mode)
        let results = try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<8 { group.addTask { try await offloader.run { blockingCall(microseconds: 1_000) } } }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(results == Array(repeating: 1_000, count: 8))
        try await offloader.shutdown()
    }

    /// The pool a mode creates runs as a service beside a metrics poller, listed after it (so the poller stops last
    /// and its last poll follows the drain); at the group's graceful shutdown the pool stops after the call it
    /// accepted ran, and the poller returns.
    @Test func thePoolAndItsMetricsRunInTheServiceGroup() async throws {
        let offloader = Offloader.make(mode: .threadingPool, threads: 2)
        let logger = Logger(label: "test") { _ in SwiftLogNoOpLogHandler() }
        let services = offloader.services(logger: logger)
        #expect(services.count == 2)
        #expect(services.first is WorkerPoolMetrics)
        let poolService = try #require(services.last as? WorkerPoolService)
        #expect(poolService.pool.label == "hb.pool")
        #expect(poolService.pool.recordsScheduleDelays)
        let group = ServiceGroup(services: services, logger: logger)
        let running = Task { try await group.run() }
        #expect(try await offloader.run { blockingCall(microseconds: 1_000) } == 1_000)
        await group.triggerGracefulShutdown()
        try await running.value
        #expect(poolService.pool.isShutDown)
        #expect(poolService.pool.statistics.scheduleDelays?.count ?? 0 >= 1)
        try await offloader.shutdown()
    }

    /// A mode that uses only process-wide or NIO pools has no pool service, only the poller.
    @Test(arguments: [OffloadMode.threadingBlocking, .nioSized, .inline])
    func otherModesExportMetricsOnly(_ mode: OffloadMode) async throws {
        let offloader = Offloader.make(mode: mode, threads: 2)
        let services = offloader.services(logger: Logger(label: "test") { _ in SwiftLogNoOpLogHandler() })
        #expect(services.count == 1)
        #expect(services.first is WorkerPoolMetrics)
        try await offloader.shutdown()
    }

    @Test func cpuWorkIsAHashOfItsRounds() {
        #expect(cpuWork(rounds: 0) == 0xcbf2_9ce4_8422_2325)
        #expect(cpuWork(rounds: 1_000) == cpuWork(rounds: 1_000))
        #expect(cpuWork(rounds: 1_000) != cpuWork(rounds: 1_001))
    }
}
