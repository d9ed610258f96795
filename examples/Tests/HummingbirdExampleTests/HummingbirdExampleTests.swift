// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import HummingbirdExample
import Testing

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

    @Test func cpuWorkIsAHashOfItsRounds() {
        #expect(cpuWork(rounds: 0) == 0xcbf2_9ce4_8422_2325)
        #expect(cpuWork(rounds: 1_000) == cpuWork(rounds: 1_000))
        #expect(cpuWork(rounds: 1_000) != cpuWork(rounds: 1_001))
    }
}
