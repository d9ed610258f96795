// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import Foundation
import Glibc
import Synchronization
import Testing
import Threading

@testable import BenchKit

/// The `http` family's plumbing (not its speed): finding the server, the client against a small server of the test's
/// own, the thread census of a process, the ratios and the writers; and, when the example server is built, one short
/// run of it.
@Suite("http family", .serialized)
struct HTTPFamilyTests {
    @Test func aMissingServerSaysHowToBuildIt() {
        #expect(throws: HTTPBench.ServerMissing.self) {
            try HTTPBench.locateServer(explicit: "/nonexistent/hummingbird-server")
        }
        do {
            _ = try HTTPBench.locateServer(explicit: "/nonexistent/hummingbird-server")
        } catch {
            #expect(error.description.contains(HTTPBench.buildCommand))
            #expect(error.description.contains("/nonexistent/hummingbird-server"))
        }
    }

    /// The closed-loop client against a keep-alive server of the test's own (a thread per connection, 1 ms per
    /// `/blocking`): every connection is answered, the latency covers the 1 ms, and the prober's `/health` answers
    /// are counted.
    @Test func theClientLoadsAKeepAliveServer() throws {
        let server = try TinyHTTPServer(threadPerRequest: false)
        defer { server.stop() }
        let measurement = try load(server, connections: 4, warmup: 0.2, seconds: 0.5) {
            $0.healthIntervalMilliseconds = 2
        }
        #expect(measurement.errors == 0)
        #expect(measurement.requests > 20)
        #expect(measurement.requestsPerSecond > 0)
        #expect(measurement.p50Ns >= 1_000_000)
        #expect(measurement.p99Ns >= measurement.p50Ns)
        #expect(measurement.healthProbes > 0)
        #expect(measurement.healthP99Ns > 0)
        // This process: the test's threads, the server's and the client's.
        #expect(measurement.peakThreads >= 4 + 3)
    }

    /// `--endpoint health`: the connections send `GET /health` only (the test's server counts each path), and the
    /// command line picks the setting and rejects an unknown endpoint.
    @Test func theHealthEndpointLoadsHealthOnly() throws {
        let server = try TinyHTTPServer(threadPerRequest: false)
        defer { server.stop() }
        let measurement = try load(server, connections: 4, warmup: 0.1, seconds: 0.3) { $0.endpoint = .health }
        #expect(measurement.errors == 0)
        #expect(measurement.requests > 0)
        #expect(server.counts.blocking.load(ordering: .acquiring) == 0)
        // The load's answers and the prober's.
        #expect(server.counts.other.load(ordering: .acquiring) >= measurement.requests + measurement.healthProbes)
        let command = try #require(try BenchCommand.parseAsRoot(["http", "--endpoint", "health"]) as? HTTPCommand)
        #expect(command.settings().endpoint == .health)
        let plain = try #require(try BenchCommand.parseAsRoot(["http"]) as? HTTPCommand)
        #expect(plain.settings().endpoint == .blocking)
        #expect(throws: (any Error).self) { try BenchCommand.parseAsRoot(["http", "--endpoint", "cpu"]) }
    }

    /// One short load of the test's own server, with `configure`'s changes to the settings.
    private func load(
        _ server: TinyHTTPServer,
        connections: Int,
        warmup: Double,
        seconds: Double,
        _ configure: (inout HTTPBench.Settings) -> Void = { _ in }
    ) throws -> HTTPBench.Measurement {
        var settings = HTTPBench.Settings()
        settings.connections = connections
        settings.warmupSeconds = warmup
        settings.seconds = seconds
        configure(&settings)
        return try HTTPBench.load(port: server.port, pid: getpid(), settings: settings).get()
    }

    /// The global executor modes against the default one (`inline`): requests/s and p99 ratios for
    /// `inline-threading-executor` only (not for a mode that offloads), in its figures and the SUMMARY line.
    @Test func ratiosAgainstTheDefaultExecutor() throws {
        func measurement(_ rate: Double, p99: UInt64) -> HTTPBench.Measurement {
            HTTPBench.Measurement(
                requestsPerSecond: rate,
                requests: Int(rate),
                p50Ns: 500_000,
                p99Ns: p99,
                healthP99Ns: 1_000_000,
                healthProbes: 100,
                peakThreads: 8,
                threadsCreated: 0,
                errors: 0
            )
        }
        let ids = ["inline", "inline-threading-executor", "threading-blocking"]
        let rates: [String: Double] = ["inline": 50_000, "inline-threading-executor": 40_000, "threading-blocking": 1]
        let p99s: [String: UInt64] = [
            "inline": 2_000_000, "inline-threading-executor": 2_500_000, "threading-blocking": 1,
        ]
        let cells = HTTPBench.catalog.filter { ids.contains($0.id) }.map { mode in
            HTTPBench.cell(
                mode: mode,
                connections: 64,
                measurements: [measurement(rates[mode.id]!, p99: p99s[mode.id]!)],
                failures: []
            )
        }
        let study = studyWithRatios(cells, operation: "GET /health")
        let takeover = try #require(study.results.first { $0.id == "inline-threading-executor" }?.http)
        #expect(takeover.throughputVsDefaultExecutor == 0.8)
        #expect(takeover.p99VsDefaultExecutor == 1.25)
        #expect(study.results.first { $0.id == "inline" }?.http?.throughputVsDefaultExecutor == nil)
        #expect(study.results.first { $0.id == "threading-blocking" }?.http?.throughputVsDefaultExecutor == nil)
        #expect(
            study.summary.contains(
                "inline-threading-executor 0.80x default executor's req/s, p99 1.25x default executor's, 0 threads"
            )
        )
        #expect(HTTPBench.executorModes.allSatisfy { id in HTTPBench.catalog.contains { $0.id == id } })
    }

    /// A server that answers each `/blocking` from a new thread (living 10 ms) is seen creating threads while
    /// measured, each with its name (other tests of this process may create threads meanwhile too).
    @Test func threadsCreatedWhileMeasuredAreCounted() throws {
        let server = try TinyHTTPServer(threadPerRequest: true)
        defer { server.stop() }
        let measurement = try load(server, connections: 2, warmup: 0.1, seconds: 0.5)
        #expect(measurement.errors == 0)
        #expect(measurement.threadsCreated > 0)
        #expect(measurement.createdThreadNames.count == measurement.threadsCreated)
        #expect(measurement.createdThreadNames.contains("tiny.request"))
    }

    /// The census of a process that creates no thread: one thread (`sleep`), none created.
    @Test func aProcessWithOneThreadCreatesNone() throws {
        var pid: pid_t = 0
        var arguments: [UnsafeMutablePointer<CChar>?] = [strdup("/bin/sleep"), strdup("5"), nil]
        defer { for pointer in arguments { free(pointer) } }
        #expect(posix_spawn(&pid, "/bin/sleep", nil, nil, &arguments, environ) == 0)
        defer {
            kill(pid, SIGKILL)
            var status: Int32 = 0
            _ = waitpid(pid, &status, 0)
        }
        let phase = HTTPBench.LoadPhase()
        let sampler = ThreadSampler(pid: pid)
        let thread = try PosixThread { sampler.run(phase: phase) }
        usleep(50_000)
        sampler.markSteady()
        phase.set(.measuring)
        usleep(100_000)
        phase.set(.stopped)
        let census = thread.join()
        #expect(census.peak == 1)
        #expect(census.created.isEmpty)
    }

    @Test func ratiosAgainstTheNIOPoolsAndTheWriters() throws {
        // CPU per request: 100 us for ours, 125 us for the NIO pools; the offload threads 20 us.
        func measurement(
            _ rate: Double,
            health: UInt64,
            created: [String],
            cpuPerRequest: UInt64
        )
            -> HTTPBench.Measurement
        {
            HTTPBench.Measurement(
                requestsPerSecond: rate,
                requests: Int(rate),
                p50Ns: 2_100_000,
                p99Ns: 4_000_000,
                healthP99Ns: health,
                healthProbes: 100,
                peakThreads: 70,
                threadsCreated: created.count,
                createdThreadNames: created,
                errors: 0,
                cpuNanoseconds: UInt64(rate) * cpuPerRequest,
                offloadCpuNanoseconds: UInt64(rate) * 20_000
            )
        }
        let modes = HTTPBench.catalog.filter { ["threading-blocking", "nio-sized", "nio-singleton"].contains($0.id) }
        let rates: [String: Double] = ["threading-blocking": 3_000, "nio-sized": 2_000, "nio-singleton": 1_000]
        let cpu: [String: UInt64] = ["threading-blocking": 100_000, "nio-sized": 125_000, "nio-singleton": 125_000]
        let cells = modes.map { mode in
            HTTPBench.cell(
                mode: mode,
                connections: 64,
                measurements: [
                    measurement(rates[mode.id]!, health: 1_000_000, created: [], cpuPerRequest: cpu[mode.id]!),
                    measurement(
                        rates[mode.id]! + 10,
                        health: 2_000_000,
                        created: ["pool.blocking"],
                        cpuPerRequest: cpu[mode.id]!
                    ),
                    measurement(rates[mode.id]! - 10, health: 500_000, created: [], cpuPerRequest: cpu[mode.id]!),
                ],
                failures: []
            )
        }
        let study = studyWithRatios(cells, operation: "GET /blocking")
        let ours = try #require(study.results.first { $0.id == "threading-blocking" })
        #expect(ours.opsPerSecond == 3_000)  // the median round
        let figures = try #require(ours.http)
        #expect(figures.throughputVsNIOSized == 1.5)
        #expect(figures.throughputVsNIOSingleton == 3.0)
        #expect(figures.healthP99Ns == 1_000_000)
        #expect(figures.healthP99VsNIOSized == 1.0)
        #expect(figures.threadsCreated == 0)
        #expect(figures.threadsCreatedPerRound == [0, 1, 0])
        #expect(figures.createdThreadNames == ["pool.blocking": 1])
        #expect(study.summary.contains("1.50x nio-sized"))
        #expect(study.summary.contains("[pool.blocking x1]"))
        #expect(ours.cpuNsPerOp == 100_000)
        #expect(figures.offloadCpuNsPerRequest == 20_000)
        #expect(figures.cpuPerRequestVsNIOSized == 0.8)
        #expect(study.summary.contains(", cpu per request 0.80x nio-sized's"))
        let report = Reporter.report([study])
        let table = TextTable.render(report)
        #expect(table.contains("health p99 us"))
        #expect(table.contains("1.50x"))
        #expect(table.contains("cpu us/req"))
        #expect(table.contains("offload us/req"))
        let oursRow = try #require(table.split(separator: "\n").first { $0.contains("WorkerPool.blocking.run") })
        #expect(oursRow.contains(" 100.0 ") && oursRow.contains(" 20.0 ") && oursRow.contains(" 0.80x "))
        let csv = CSVWriter.render(report).split(separator: "\n")
        #expect(csv.count == 4)
        for line in csv {
            #expect(line.split(separator: ",", omittingEmptySubsequences: false).count == CSVWriter.columns.count)
        }
        let decoded = try JSONDecoder().decode(BenchReport.self, from: Data(try JSONWriter.render(report).utf8))
        #expect(decoded.studies.first?.results.first?.http == study.results.first?.http)
    }

    /// The CPU time of a `stat` file: `utime` plus `stime` (fields 14 and 15), counted after the command name
    /// whatever it holds; of a `schedstat` file, its first field; and the CPU a process and its named threads used,
    /// read from `/proc`.
    @Test func cpuTimeIsReadFromProc() throws {
        let tick = ProcessCPU.nanosecondsPerTick
        let line = "4242 (a (weird) name) S 1 4242 4242 0 -1 4194560 100 0 0 0 250 40 0 0 20 0 3 0 100 0 0"
        #expect(ProcessCPU.cpuNanoseconds(stat: line) == 290 * tick)
        #expect(ProcessCPU.cpuNanoseconds(stat: "4242 (short) S 1 2") == nil)
        #expect(ProcessCPU.cpuNanoseconds(stat: "garbage") == nil)
        #expect(ProcessCPU.cpuNanoseconds(schedstat: "834204 2347380 1\n") == 834_204)
        #expect(ProcessCPU.cpuNanoseconds(schedstat: "") == nil)
        #expect(ProcessCPU.elapsed(from: [1: 10, 2: 5], to: [1: 30, 3: 7]) == 27)
        #expect(ProcessCPU.elapsed(from: 50, to: 20) == 0)
        // A thread of this process named for the test burns 60 ms of its own CPU time (at most 10 s of wall time on
        // busy cores): the process counts it to a tick or two, the thread (its `schedstat`) exactly.
        let before = ProcessCPU.process(getpid())
        let burner = try PosixThread(name: "bench.cpu.burn") {
            func threadCPU() -> UInt64 {
                var now = timespec()
                clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now)
                return UInt64(now.tv_sec) * 1_000_000_000 + UInt64(now.tv_nsec)
            }
            let start = threadCPU()
            let deadline = monotonicNanoseconds() &+ 10_000_000_000
            while threadCPU() &- start < 60_000_000 && monotonicNanoseconds() < deadline {}
            return (threadCPU() &- start, ProcessCPU.threads(of: getpid(), namedWith: "bench.cpu.b"))
        }
        let (burnt, threads) = burner.join()
        try #require(burnt >= 60_000_000, "the burner got no CPU for 10 s")
        let after = ProcessCPU.process(getpid())
        #expect(threads.count == 1)
        #expect((threads.values.first ?? 0) >= 60_000_000)
        #expect(after >= before + 40_000_000)
    }

    /// A mode whose rounds failed is invalid and says why.
    @Test func aFailedModeIsInvalid() {
        let cell = HTTPBench.cell(
            mode: HTTPBench.catalog[0],
            connections: 64,
            measurements: [],
            failures: ["the server printed no port (got '')"]
        )
        #expect(!cell.valid)
        #expect(cell.outcome.contains("printed no port"))
        #expect(cell.http == nil)
    }

    /// One short round of the real example server, when it is built (`HTTPBench.buildCommand`).
    @Test(.enabled(if: (try? HTTPBench.locateServer()) != nil, "the example server is not built"))
    func theExampleServerServesEveryMode() throws {
        let server = try HTTPBench.locateServer()
        var settings = HTTPBench.Settings()
        settings.connections = 8
        settings.warmupSeconds = 0.3
        settings.seconds = 0.5
        settings.rounds = 1
        let modes = HTTPBench.catalog.filter { HTTPBench.quickModes.contains($0.id) }
        let study = HTTPBench.study(
            server: server,
            modes: modes,
            settings: settings,
            progress: Progress(enabled: false)
        )
        for cell in study.results {
            #expect(cell.valid, "\(cell.id): \(cell.outcome)")
            #expect(cell.opsPerSecond > 0)
            #expect((cell.http?.peakThreads ?? 0) > 1)
        }
    }
}

/// A small keep-alive HTTP/1.1 server for the client's test: a thread per connection; `/blocking` takes 1 ms (or,
/// with `threadPerRequest`, runs on a new thread that lives 10 ms), anything else answers at once.
final class TinyHTTPServer: @unchecked Sendable {
    let port: UInt16
    /// The requests it answered, by path.
    let counts: Counts
    private let listener: Int32
    private let acceptor: PosixThread<Void>?

    init(threadPerRequest: Bool) throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = UInt32(0x7f00_0001).bigEndian
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, length) == 0 && listen(fd, 64) == 0 && getsockname(fd, $0, &length) == 0
            }
        }
        guard bound else {
            close(fd)
            throw HTTPBench.RunFailure(description: "could not listen (errno \(errno))")
        }
        listener = fd
        port = UInt16(bigEndian: address.sin_port)
        let counts = Counts()
        self.counts = counts
        acceptor = try PosixThread {
            while true {
                let connection = accept(fd, nil, nil)
                guard connection >= 0 else { return }
                _ = try? PosixThread { [counts] in
                    TinyHTTPServer.serve(connection, threadPerRequest: threadPerRequest, counts: counts)
                }
            }
        }
    }

    /// Stops accepting (connections end when their clients close them).
    func stop() {
        shutdown(listener, Int32(SHUT_RDWR))
        close(listener)
        acceptor?.join()
    }

    /// The requests a server answered: `/blocking`, and the others.
    final class Counts: Sendable {
        let blocking = Atomic<Int>(0)
        let other = Atomic<Int>(0)
    }

    static func serve(_ fd: Int32, threadPerRequest: Bool, counts: Counts) {
        defer { close(fd) }
        var pending: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        let answer = Array("HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nok\n".utf8)
        while true {
            let got = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            guard got > 0 else { return }
            pending.append(contentsOf: chunk[0..<got])
            while let end = HTTPConnection.headerEnd(pending) {
                let request = String(decoding: pending[0..<end], as: UTF8.self)
                pending.removeFirst(end + 4)
                let isBlocking = request.hasPrefix("GET /blocking")
                if isBlocking {
                    counts.blocking.wrappingAdd(1, ordering: .acquiringAndReleasing)
                } else {
                    counts.other.wrappingAdd(1, ordering: .acquiringAndReleasing)
                }
                if isBlocking {
                    if threadPerRequest {
                        let thread = try? PosixThread(name: "tiny.request") { usleep(10_000) }
                        _ = thread?.join()
                    } else {
                        usleep(1_000)
                    }
                }
                let sent = answer.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                guard sent == answer.count else { return }
            }
        }
    }
}

/// The `http` study of 64 connections made of `cells`, with the family's ratios filled in (`HTTPBench.withRatios`).
private func studyWithRatios(_ cells: [CellResult], operation: String) -> StudyResult {
    HTTPBench.withRatios(
        StudyResult(
            id: "http",
            family: "http",
            title: "http",
            operation: operation,
            parameters: [:],
            threads: [64],
            results: cells
        )
    )
}
