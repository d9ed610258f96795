// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import Foundation
import Glibc
import Histogram
import Synchronization
import Threading

/// The `http` family: the example Hummingbird server of `examples/` (`hummingbird-server`), loaded over loopback,
/// once per way its `/blocking` endpoint offloads its blocking call (Threading's blocking pool, a Threading pool as
/// task executor, NIO's thread pools, no offload, `Task.detached`).
///
/// For each round and each mode (rounds interleave the modes, in the order given in odd rounds and reversed in even
/// ones), the family starts the server as a child process on an ephemeral port and drives it with its own closed-loop
/// client: `connections` keep-alive connections (two client threads polling them), each sending `GET /blocking` again
/// as soon as the previous answer came, while a prober thread sends `GET /health` on a connection of its own every few
/// milliseconds. After the warm-up, the measured phase gives requests per second and the latency of `/blocking` (p50,
/// p99), the latency of `/health` under that load (p99), and from `/proc/<pid>/task` of the child the most threads it
/// had and the threads it created during the measured phase (thread ids not seen before it began, sampled every 5 ms),
/// and the server's CPU time per request over the measured phase: the whole process's (`/proc/<pid>/stat`, user and
/// system) and its offload threads' share (the threads named as the mode's pool names them,
/// `/proc/<pid>/task/<tid>/schedstat`: see ``ProcessCPU``). The server is then stopped (SIGTERM, SIGKILL after 5 s).
///
/// With ``Endpoint/health`` the connections send `GET /health` instead: nothing blocks, and the executor modes
/// (``executorModes``) compare Swift Concurrency's default global executor with `WorkerPool.shared` installed as the
/// global executor, what the takeover costs code that does not block.
public enum HTTPBench {
    /// One way of offloading the blocking call: the server's `--offload` value.
    public struct Mode: Sendable, Equatable {
        /// The server's `--offload` argument, also the strategy id.
        public var id: String
        /// Display name.
        public var name: String
        /// Ours (Threading) or a peer.
        public var kind: StrategyKind
        /// How the threads the mode offloads to are named (a prefix of `/proc/<pid>/task/<tid>/comm`, which the
        /// system cuts to 15 bytes); nil for a mode with no threads of its own (no offload, `Task.detached`).
        public var offloadThreadPrefix: String? = nil
    }

    /// Every mode the server knows, ours first; the ratios are taken against `nio-sized` and `nio-singleton`.
    public static let catalog: [Mode] = [
        Mode(
            id: "threading-blocking",
            name: "WorkerPool.blocking.run",
            kind: .ours,
            offloadThreadPrefix: "threading.block"
        ),
        Mode(id: "threading-pool", name: "WorkerPool(N) task executor", kind: .ours, offloadThreadPrefix: "hb.pool"),
        Mode(id: "nio-sized", name: "NIOThreadPool(N)", kind: .peer, offloadThreadPrefix: "TP-#"),
        Mode(id: "nio-singleton", name: "NIOThreadPool.singleton", kind: .peer, offloadThreadPrefix: "TP-#"),
        Mode(id: "inline", name: "inline (no offload)", kind: .peer),
        Mode(id: "detached", name: "Task.detached", kind: .peer),
        // The blocking call inline in the handler, on each global executor: the default one is `inline` above.
        Mode(id: "inline-nio-executor", name: "inline, NIO event loops as global executor", kind: .peer),
        Mode(id: "inline-threading-executor", name: "inline, WorkerPool.shared as global executor", kind: .ours),
    ]

    /// The modes of `--quick` and of the family's test.
    public static let quickModes = ["threading-blocking", "nio-sized"]

    /// The modes of `--endpoint health` (the default executor, then ours as global executor): with nothing blocking,
    /// only the global executor differs between them, and ours is compared with the default one.
    public static let executorModes = ["inline", "inline-threading-executor"]

    /// The mode that runs the server on Swift Concurrency's default global executor, the reference of the
    /// `--endpoint health` ratios.
    public static let defaultExecutorMode = "inline"

    /// The endpoint the closed-loop connections load.
    public enum Endpoint: String, Sendable, Equatable, CaseIterable {
        /// `GET /blocking`: the blocking call, offloaded as the mode says (the family's default).
        case blocking
        /// `GET /health`: a constant answer, no blocking call: what the global executor costs code that does not
        /// block (the modes then differ only by their global executor).
        case health

        /// The request each connection sends.
        var request: [UInt8] { self == .blocking ? HTTPBench.blockingRequest : HTTPBench.healthRequest }
    }

    /// What one run loads and for how long.
    public struct Settings: Sendable, Equatable {
        /// Keep-alive connections sending `/blocking` in a closed loop.
        public var connections = 64
        /// Microseconds the blocking call sleeps (the server's `--blocking-us`).
        public var blockingMicroseconds = 2_000
        /// The size of the pools a mode creates (the server's `--threads`): `WorkerPool(N)`, `NIOThreadPool(N)`.
        public var poolThreads = 64
        /// Discarded seconds of load before the measured phase.
        public var warmupSeconds = 2.0
        /// Measured seconds.
        public var seconds = 5.0
        /// Rounds; each runs every mode once, in turn.
        public var rounds = 3
        /// Milliseconds between two `/health` probes.
        public var healthIntervalMilliseconds = 5
        /// The endpoint the connections load (the prober always sends `/health`).
        public var endpoint = Endpoint.blocking

        /// The defaults: 64 connections, 2 ms calls, pools of 64, 2 s warm-up, 5 s measured, 3 rounds.
        public init() {}
    }

    /// What one run of one mode measured.
    public struct Measurement: Sendable, Equatable {
        /// `/blocking` answers per second in the measured phase.
        public var requestsPerSecond: Double
        /// `/blocking` answers in the measured phase.
        public var requests: Int
        /// Latency of `/blocking`, nanoseconds.
        public var p50Ns: UInt64
        /// Latency of `/blocking`, nanoseconds.
        public var p99Ns: UInt64
        /// Latency of `/health` while `/blocking` is loaded, nanoseconds (0 when no probe answered).
        public var healthP99Ns: UInt64
        /// `/health` answers in the measured phase.
        public var healthProbes: Int
        /// The most threads the server had, from its start to the end of the measured phase.
        public var peakThreads: Int
        /// Threads the server created during the measured phase (ids not seen before it began).
        public var threadsCreated: Int
        /// The names (`/proc/<pid>/task/<tid>/comm`) of those threads, sorted: whose they are (a pool names its
        /// threads after its label; `?` for a thread gone before its name was read).
        public var createdThreadNames: [String] = []
        /// Answers that were not `200`, and connections that failed.
        public var errors: Int
        /// The server process's CPU time (user and system, all its threads) over the measured phase, nanoseconds
        /// (0 when `/proc` could not be read).
        public var cpuNanoseconds: UInt64 = 0
        /// The part of ``cpuNanoseconds`` spent by the mode's offload threads (``Mode/offloadThreadPrefix``); nil
        /// for a mode with none.
        public var offloadCpuNanoseconds: UInt64? = nil

        /// The server's CPU time per `/blocking` answer, nanoseconds (0 when not measured).
        public var cpuNsPerRequest: Double { requests > 0 ? Double(cpuNanoseconds) / Double(requests) : 0 }

        /// The offload threads' CPU time per `/blocking` answer, nanoseconds.
        public var offloadCpuNsPerRequest: Double? {
            guard let offloadCpuNanoseconds, requests > 0 else { return nil }
            return Double(offloadCpuNanoseconds) / Double(requests)
        }
    }

    // MARK: Finding the server

    /// The command that builds the server (from the repository root).
    public static let buildCommand = "swift build --package-path examples -c release --product hummingbird-server"

    /// The environment variable naming the server binary.
    public static let serverEnvironment = "THREADING_HUMMINGBIRD_SERVER"

    /// The release build of the example server: `explicit` when given, else `$THREADING_HUMMINGBIRD_SERVER`, else
    /// `examples/.build/release/hummingbird-server` under the current directory or any folder above it or above
    /// this executable (the bench runs from the repository root, from `benchmarks/`, or from its build folder).
    ///
    /// - Parameter explicit: A path given on the command line.
    /// - Returns: The binary's path.
    /// - Throws: ``ServerMissing`` naming where it looked and how to build it.
    public static func locateServer(explicit: String? = nil) throws(ServerMissing) -> String {
        if let explicit {
            guard access(explicit, X_OK) == 0 else { throw ServerMissing(looked: [explicit]) }
            return explicit
        }
        if let path = ProcessInfo.processInfo.environment[serverEnvironment], !path.isEmpty {
            guard access(path, X_OK) == 0 else { throw ServerMissing(looked: [path]) }
            return path
        }
        var looked: [String] = []
        var starts = [FileManager.default.currentDirectoryPath]
        starts.append(ChildProcessRunner.currentExecutable().deletingLastPathComponent().path)
        for start in starts {
            var folder = URL(fileURLWithPath: start).standardizedFileURL
            while true {
                let candidate = folder.appendingPathComponent("examples/.build/release/hummingbird-server").path
                if !looked.contains(candidate) {
                    looked.append(candidate)
                    if access(candidate, X_OK) == 0 { return candidate }
                }
                let parent = folder.deletingLastPathComponent()
                if parent.path == folder.path { break }
                folder = parent
            }
        }
        throw ServerMissing(looked: looked)
    }

    /// The example server's binary was not found.
    public struct ServerMissing: Error, Sendable, CustomStringConvertible {
        /// The paths tried.
        public var looked: [String]

        /// Says what is missing, where it was looked for, and how to build it.
        public var description: String {
            "bench http: the example server (hummingbird-server) is not built; build it from the repository root with "
                + "`\(HTTPBench.buildCommand)` (a first build takes several minutes), or name it with --server PATH "
                + "or $\(HTTPBench.serverEnvironment). Looked at: "
                + looked.prefix(4).joined(separator: ", ") + (looked.count > 4 ? ", ..." : "")
        }
    }

    // MARK: One run

    /// Starts the server in `mode`, loads it as `settings` say, stops it, and returns what was measured.
    ///
    /// - Parameters:
    ///   - server: The server binary.
    ///   - mode: The `--offload` value.
    ///   - settings: The load.
    /// - Returns: The measurement, or why the run failed (the server did not start, or no request was answered).
    public static func run(server: String, mode: String, settings: Settings) -> Result<Measurement, RunFailure> {
        let arguments = [
            "--port", "0", "--offload", mode, "--threads", String(settings.poolThreads),
            "--blocking-us", String(settings.blockingMicroseconds),
        ]
        let child: ServerProcess
        switch ServerProcess.start(server, arguments: arguments, deadlineSeconds: 60) {
        case .success(let started): child = started
        case .failure(let failure): return .failure(failure)
        }
        defer { child.stop() }
        let prefix = catalog.first { $0.id == mode }?.offloadThreadPrefix
        return load(port: child.port, pid: child.pid, settings: settings, offloadThreadPrefix: prefix)
    }

    /// Why a run produced no measurement.
    public struct RunFailure: Error, Sendable, Equatable, CustomStringConvertible {
        /// What went wrong.
        public var description: String
    }

    /// Loads a server already listening on `127.0.0.1:port` (process `pid`, whose threads are sampled, and whose CPU
    /// time, and that of its threads named with `offloadThreadPrefix`, is read when the measured phase begins and
    /// ends).
    static func load(
        port: UInt16,
        pid: pid_t,
        settings: Settings,
        offloadThreadPrefix: String? = nil
    ) -> Result<Measurement, RunFailure> {
        let phase = LoadPhase()
        let census = ThreadSampler(pid: pid)
        let clientThreads = min(2, settings.connections)
        var loaders: [PosixThread<LoadResult>] = []
        do {
            for index in 0..<clientThreads {
                let count =
                    settings.connections / clientThreads + (index < settings.connections % clientThreads ? 1 : 0)
                loaders.append(
                    try PosixThread(name: "bench.http.load") {
                        runLoad(port: port, connections: count, request: settings.endpoint.request, phase: phase)
                    }
                )
            }
            let interval = settings.healthIntervalMilliseconds
            let prober = try PosixThread(name: "bench.http.health") {
                runProbe(port: port, intervalMilliseconds: interval, phase: phase)
            }
            let sampler = try PosixThread(name: "bench.http.census") { census.run(phase: phase) }
            sleepSeconds(settings.warmupSeconds)
            census.markSteady()
            let cpuBefore = ProcessCPU.process(pid)
            let offloadBefore = offloadThreadPrefix.map { ProcessCPU.threads(of: pid, namedWith: $0) }
            let started = monotonicNanoseconds()
            phase.set(.measuring)
            sleepSeconds(settings.seconds)
            phase.set(.stopped)
            let measured = Double(monotonicNanoseconds() &- started) / 1e9
            let cpuAfter = ProcessCPU.process(pid)
            let offloadAfter = offloadThreadPrefix.map { ProcessCPU.threads(of: pid, namedWith: $0) }
            var latency = LatencySampler.makeHistogram()
            var requests = 0
            var errors = 0
            for loader in loaders {
                let result = loader.join()
                latency.add(result.latency)
                requests += result.requests
                errors += result.errors
            }
            let probe = prober.join()
            let threads = sampler.join()
            errors += probe.errors
            guard requests > 0 else {
                let path = settings.endpoint.rawValue
                return .failure(RunFailure(description: "no /\(path) request was answered (\(errors) errors)"))
            }
            return .success(
                Measurement(
                    requestsPerSecond: Double(requests) / measured,
                    requests: requests,
                    p50Ns: latency.valueAtPercentile(50),
                    p99Ns: latency.valueAtPercentile(99),
                    healthP99Ns: probe.requests > 0 ? probe.latency.valueAtPercentile(99) : 0,
                    healthProbes: probe.requests,
                    peakThreads: threads.peak,
                    threadsCreated: threads.created.count,
                    createdThreadNames: threads.created.sorted(),
                    errors: errors,
                    cpuNanoseconds: ProcessCPU.elapsed(from: cpuBefore, to: cpuAfter),
                    offloadCpuNanoseconds: offloadAfter.map { ProcessCPU.elapsed(from: offloadBefore ?? [:], to: $0) }
                )
            )
        } catch {
            phase.set(.stopped)
            for loader in loaders { _ = loader.join() }
            return .failure(RunFailure(description: "could not start a client thread: \(error)"))
        }
    }

    enum Phase: Int {
        case warmup = 0
        case measuring = 1
        case stopped = 2
    }

    /// The phase of a run, shared by the coordinator and the client threads.
    final class LoadPhase: Sendable {
        private let value = Atomic<Int>(Phase.warmup.rawValue)

        var current: Phase { Phase(rawValue: value.load(ordering: .acquiring)) ?? .stopped }

        func set(_ phase: Phase) { value.store(phase.rawValue, ordering: .releasing) }
    }

    static func sleepSeconds(_ seconds: Double) {
        var request = timespec(tv_sec: Int(seconds), tv_nsec: Int((seconds - Double(Int(seconds))) * 1e9))
        var remaining = timespec()
        while nanosleep(&request, &remaining) != 0 && errno == EINTR { request = remaining }
    }

    // MARK: The client

    /// What a client thread measured.
    struct LoadResult: Sendable {
        var latency = LatencySampler.makeHistogram()
        var requests = 0
        var errors = 0
    }

    static let blockingRequest = Array("GET /blocking HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".utf8)
    static let healthRequest = Array("GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".utf8)

    /// One client thread: `connections` keep-alive connections, each with one `request` (`/blocking` or `/health`) in
    /// flight, polled until the phase is `stopped`; answers completed in the measured phase are counted.
    static func runLoad(port: UInt16, connections: Int, request: [UInt8], phase: LoadPhase) -> LoadResult {
        var result = LoadResult()
        var sockets: [HTTPConnection] = []
        for _ in 0..<connections {
            guard let connection = HTTPConnection(port: port) else {
                result.errors += 1
                continue
            }
            sockets.append(connection)
        }
        defer { for connection in sockets { connection.close() } }
        var pollers = sockets.map { pollfd(fd: $0.fd, events: Int16(POLLIN), revents: 0) }
        for connection in sockets where !connection.send(request) { result.errors += 1 }
        while phase.current != .stopped {
            let ready = poll(&pollers, nfds_t(pollers.count), 50)
            guard ready > 0 else { continue }
            for index in pollers.indices where pollers[index].revents != 0 {
                pollers[index].revents = 0
                let connection = sockets[index]
                switch connection.receive() {
                case .pending: continue
                case .failed:
                    result.errors += 1
                    pollers[index].fd = -1  // poll ignores it from now on
                case .answered(let ok):
                    if phase.current == .measuring {
                        _ = result.latency.record(monotonicNanoseconds() &- connection.sentAt)
                        result.requests += 1
                        if !ok { result.errors += 1 }
                    }
                    if !connection.send(request) {
                        result.errors += 1
                        pollers[index].fd = -1
                    }
                }
            }
        }
        return result
    }

    /// The prober: one connection, one `/health` request every `intervalMilliseconds`, each waited for (2 s at most).
    static func runProbe(port: UInt16, intervalMilliseconds: Int, phase: LoadPhase) -> LoadResult {
        var result = LoadResult()
        guard let connection = HTTPConnection(port: port) else {
            result.errors += 1
            return result
        }
        defer { connection.close() }
        while phase.current != .stopped {
            usleep(UInt32(intervalMilliseconds * 1_000))
            guard connection.send(healthRequest) else {
                result.errors += 1
                return result
            }
            var poller = pollfd(fd: connection.fd, events: Int16(POLLIN), revents: 0)
            let deadline = monotonicNanoseconds() &+ 2_000_000_000
            var answered = false
            while !answered && monotonicNanoseconds() < deadline {
                guard poll(&poller, 1, 100) > 0 else { continue }
                switch connection.receive() {
                case .pending: continue
                case .failed:
                    result.errors += 1
                    return result
                case .answered(let ok):
                    answered = true
                    if phase.current == .measuring {
                        _ = result.latency.record(monotonicNanoseconds() &- connection.sentAt)
                        result.requests += 1
                        if !ok { result.errors += 1 }
                    }
                }
            }
            if !answered {
                result.errors += 1
                return result
            }
        }
        return result
    }

    // MARK: Reporting

    /// The medians of `measurements` (one per round) as a cell of the study; `failures` are the rounds that failed.
    public static func cell(mode: Mode, connections: Int, measurements: [Measurement], failures: [String]) -> CellResult
    {
        func median<T: Comparable>(_ values: [T]) -> T? { values.isEmpty ? nil : values.sorted()[values.count / 2] }
        let errors = measurements.map(\.errors).reduce(0, +)
        let valid = failures.isEmpty && errors == 0 && !measurements.isEmpty
        var outcome = "ok"
        if let failure = failures.first {
            outcome = "failed: \(failure)"
        } else if errors > 0 {
            outcome = "INVALID (\(errors) errors)"
        }
        var cell = CellResult(
            strategy: mode.name,
            id: mode.id,
            kind: mode.kind,
            threads: connections,
            opsPerSecond: median(measurements.map(\.requestsPerSecond)) ?? 0,
            cpuNsPerOp: median(measurements.map(\.cpuNsPerRequest)) ?? 0,
            p50Ns: median(measurements.map(\.p50Ns)) ?? 0,
            p99Ns: median(measurements.map(\.p99Ns)) ?? 0,
            fairness: 0,
            badOperations: errors,
            valid: valid,
            outcome: outcome,
            repeats: measurements.map(\.requestsPerSecond)
        )
        if !measurements.isEmpty {
            cell.http = HTTPFigures(
                healthP99Ns: median(measurements.map(\.healthP99Ns)) ?? 0,
                peakThreads: measurements.map(\.peakThreads).max() ?? 0,
                threadsCreated: median(measurements.map(\.threadsCreated)) ?? 0,
                threadsCreatedPerRound: measurements.map(\.threadsCreated),
                createdThreadNames: measurements.flatMap(\.createdThreadNames).reduce(into: [:]) {
                    $0[$1, default: 0] += 1
                },
                offloadCpuNsPerRequest: median(measurements.compactMap(\.offloadCpuNsPerRequest))
            )
        }
        return cell
    }

    /// Fills each cell's ratios against `nio-sized` and `nio-singleton` (requests per second; `/health` p99 and the
    /// server's CPU time per request: above 1 is a longer wait, more CPU, than the peer's) and makes the study's
    /// summary line.
    public static func withRatios(_ study: StudyResult) -> StudyResult {
        var study = study
        let sized = study.results.first { $0.id == "nio-sized" && $0.valid }
        let singleton = study.results.first { $0.id == "nio-singleton" && $0.valid }
        let defaultExecutor = study.results.first { $0.id == defaultExecutorMode && $0.valid }
        for index in study.results.indices {
            guard var figures = study.results[index].http, study.results[index].opsPerSecond > 0 else { continue }
            let cell = study.results[index]
            if let sized, sized.opsPerSecond > 0 {
                figures.throughputVsNIOSized = cell.opsPerSecond / sized.opsPerSecond
                if let peer = sized.http, peer.healthP99Ns > 0 {
                    figures.healthP99VsNIOSized = Double(figures.healthP99Ns) / Double(peer.healthP99Ns)
                }
                if sized.cpuNsPerOp > 0 && cell.cpuNsPerOp > 0 {
                    figures.cpuPerRequestVsNIOSized = cell.cpuNsPerOp / sized.cpuNsPerOp
                }
            }
            if let singleton, singleton.opsPerSecond > 0 {
                figures.throughputVsNIOSingleton = cell.opsPerSecond / singleton.opsPerSecond
            }
            if let defaultExecutor, defaultExecutor.opsPerSecond > 0, cell.id != defaultExecutorMode,
                executorModes.contains(cell.id)
            {
                figures.throughputVsDefaultExecutor = cell.opsPerSecond / defaultExecutor.opsPerSecond
                if defaultExecutor.p99Ns > 0 && cell.p99Ns > 0 {
                    figures.p99VsDefaultExecutor = Double(cell.p99Ns) / Double(defaultExecutor.p99Ns)
                }
            }
            study.results[index].http = figures
        }
        var parts: [String] = []
        for cell in study.results where cell.kind == .ours {
            guard let figures = cell.http else { continue }
            var text = "\(cell.id)"
            if let ratio = figures.throughputVsNIOSized { text += " \(formatRatio(ratio)) nio-sized req/s" }
            if let ratio = figures.throughputVsNIOSingleton { text += ", \(formatRatio(ratio)) nio-singleton req/s" }
            if let ratio = figures.healthP99VsNIOSized { text += ", health p99 \(formatRatio(ratio)) nio-sized's" }
            if let ratio = figures.cpuPerRequestVsNIOSized {
                text += ", cpu per request \(formatRatio(ratio)) nio-sized's"
            }
            if let ratio = figures.throughputVsDefaultExecutor {
                text += (text == cell.id ? " " : ", ") + "\(formatRatio(ratio)) default executor's req/s"
                if let p99 = figures.p99VsDefaultExecutor { text += ", p99 \(formatRatio(p99)) default executor's" }
            }
            text += ", \(figures.threadsCreated) threads created while measured (peak \(figures.peakThreads))"
            if !figures.createdThreadNames.isEmpty { text += " [\(Self.describe(figures.createdThreadNames))]" }
            parts.append(text)
        }
        study.summary =
            "SUMMARY \(study.title): " + (parts.isEmpty ? "no cell of ours ran" : parts.joined(separator: "; "))
        return study
    }

    /// Thread names with their counts, most first: `threading.block x3, NIOThreadPool x1`.
    static func describe(_ names: [String: Int]) -> String {
        names.sorted { ($0.value, $1.key) > ($1.value, $0.key) }.map { "\($0.key) x\($0.value)" }
            .joined(separator: ", ")
    }
}

/// One keep-alive HTTP/1.1 connection to `127.0.0.1` and the answer being read on it.
final class HTTPConnection {
    let fd: Int32
    /// When the request in flight was sent (monotonic nanoseconds).
    var sentAt: UInt64 = 0
    private var buffer: [UInt8] = []

    /// Connects (with `TCP_NODELAY`); nil when the server refuses.
    init?(port: UInt16) {
        let socketFD = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard socketFD >= 0 else { return nil }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = UInt32(0x7f00_0001).bigEndian
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(socketFD, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard connected == 0 else {
            Glibc.close(socketFD)
            return nil
        }
        var one: Int32 = 1
        _ = setsockopt(socketFD, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        fd = socketFD
        buffer.reserveCapacity(1024)
    }

    func close() { Glibc.close(fd) }

    /// Sends a whole request and notes the time; false when the connection failed.
    func send(_ request: [UInt8]) -> Bool {
        sentAt = monotonicNanoseconds()
        var done = 0
        while done < request.count {
            let sent = request.withUnsafeBytes {
                Glibc.send(fd, $0.baseAddress! + done, $0.count - done, Int32(MSG_NOSIGNAL))
            }
            if sent > 0 {
                done += sent
            } else if sent < 0 && errno == EINTR {
                continue
            } else {
                return false
            }
        }
        return true
    }

    enum Received {
        /// The answer is not complete yet.
        case pending
        /// A whole answer came; whether its status was 200.
        case answered(ok: Bool)
        /// The server closed the connection or it failed.
        case failed
    }

    /// Reads what is there (once) and reports whether a whole answer (headers and `Content-Length` bytes) came.
    func receive() -> Received {
        var chunk = [UInt8](repeating: 0, count: 4096)
        let got = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
        if got == 0 { return .failed }
        if got < 0 { return errno == EAGAIN || errno == EINTR ? .pending : .failed }
        buffer.append(contentsOf: chunk[0..<got])
        guard let headerEnd = HTTPConnection.headerEnd(buffer) else { return .pending }
        let length = HTTPConnection.contentLength(buffer[0..<headerEnd]) ?? 0
        let total = headerEnd + 4 + length
        guard buffer.count >= total else { return .pending }
        let ok = buffer.starts(with: Array("HTTP/1.1 200".utf8))
        buffer.removeFirst(total)
        return .answered(ok: ok)
    }

    /// The index of the `\r\n\r\n` that ends the headers.
    static func headerEnd(_ bytes: [UInt8]) -> Int? {
        guard bytes.count >= 4 else { return nil }
        for index in 0...(bytes.count - 4)
        where bytes[index] == 13 && bytes[index + 1] == 10 && bytes[index + 2] == 13 && bytes[index + 3] == 10 {
            return index
        }
        return nil
    }

    /// The value of the `Content-Length` header (case-insensitive), read byte by byte (a `String` would hold
    /// `\r\n` as one character).
    static func contentLength(_ header: ArraySlice<UInt8>) -> Int? {
        let name = Array("\r\ncontent-length:".utf8)
        let bytes = Array(header)
        guard bytes.count >= name.count else { return nil }
        for start in 0...(bytes.count - name.count) {
            var matches = true
            for offset in 0..<name.count {
                var byte = bytes[start + offset]
                if byte >= 65 && byte <= 90 { byte += 32 }  // ASCII lower case
                if byte != name[offset] {
                    matches = false
                    break
                }
            }
            guard matches else { continue }
            var value = 0
            var digits = 0
            for byte in bytes[(start + name.count)...] {
                if byte == 32 || byte == 9 { continue }
                guard byte >= 48 && byte <= 57 else { break }
                value = value * 10 + Int(byte - 48)
                digits += 1
            }
            return digits > 0 ? value : nil
        }
        return nil
    }
}

/// Samples the threads of a process from `/proc/<pid>/task` every 5 ms: the most it had, and the thread ids that
/// appeared after ``markSteady()``.
final class ThreadSampler: Sendable {
    let pid: pid_t
    private let steady = Atomic<Bool>(false)

    init(pid: pid_t) { self.pid = pid }

    /// From now on, new thread ids count as created during the measured phase.
    func markSteady() { steady.store(true, ordering: .releasing) }

    /// Samples until the phase is `stopped`; returns the peak and the names of the threads created while steady.
    func run(phase: HTTPBench.LoadPhase) -> (peak: Int, created: [String]) {
        var peak = 0
        var seen = Set<Int>()
        var created: [String] = []
        while phase.current != .stopped {
            let tids = ThreadSampler.threadIDs(of: pid)
            peak = max(peak, tids.count)
            let isSteady = steady.load(ordering: .acquiring) && phase.current == .measuring
            for tid in tids where seen.insert(tid).inserted && isSteady {
                created.append(ThreadSampler.threadName(of: pid, thread: tid) ?? "?")
            }
            usleep(5_000)
        }
        return (peak, created)
    }

    /// The name of thread `tid` of `pid` (its `comm`, at most 15 bytes), nil when it is gone.
    static func threadName(of pid: pid_t, thread tid: Int) -> String? {
        guard let name = try? String(contentsOfFile: "/proc/\(pid)/task/\(tid)/comm", encoding: .utf8) else {
            return nil
        }
        return name.trimmingCharacters(in: .newlines)
    }

    /// The thread ids of `pid` now (empty when it is gone).
    static func threadIDs(of pid: pid_t) -> [Int] {
        guard let directory = opendir("/proc/\(pid)/task") else { return [] }
        defer { closedir(directory) }
        var ids: [Int] = []
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            if let id = Int(name) { ids.append(id) }
        }
        return ids
    }
}

/// CPU time from `/proc`, in nanoseconds: a process's from `/proc/<pid>/stat` (user plus system, all its threads,
/// the ones that exited included), and a thread's from `/proc/<pid>/task/<tid>/schedstat` (its time on a CPU, user and
/// system, counted in nanoseconds by the scheduler).
///
/// A `stat` file counts clock ticks (`sysconf(_SC_CLK_TCK)`, usually 10 ms each), each figure rounded down: for a
/// whole process loaded for seconds that is exact to a fraction of a percent, but a pool thread that runs a few
/// microseconds per call has 0 or 1 tick after seconds, and 64 of them each lose up to a tick. So the threads' share
/// reads `schedstat`, and falls back to `stat` only where the kernel has no `schedstat` (`CONFIG_SCHED_INFO` off).
enum ProcessCPU {
    static let nanosecondsPerTick = UInt64(1_000_000_000 / max(1, sysconf(Int32(_SC_CLK_TCK))))

    /// User plus system time from the text of a `stat` file, nanoseconds; nil when it is not one. The fields are
    /// counted after the last `)`, which ends the command name (a name may hold spaces and parentheses): `utime` and
    /// `stime` are the file's fields 14 and 15, the 12th and 13th after the name.
    static func cpuNanoseconds(stat text: String) -> UInt64? {
        guard let close = text.lastIndex(of: ")") else { return nil }
        let fields = text[text.index(after: close)...].split(separator: " ", omittingEmptySubsequences: true)
        guard fields.count > 12, let user = UInt64(fields[11]), let system = UInt64(fields[12]) else { return nil }
        return (user &+ system) &* nanosecondsPerTick
    }

    /// The CPU time process `pid` used so far, nanoseconds (0 when it is gone).
    static func process(_ pid: pid_t) -> UInt64 {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8) else { return 0 }
        return cpuNanoseconds(stat: text) ?? 0
    }

    /// The time on a CPU from the text of a `schedstat` file (its first field, nanoseconds); nil when it is not one.
    static func cpuNanoseconds(schedstat text: String) -> UInt64? {
        text.split(separator: " ", maxSplits: 1).first.flatMap { UInt64($0) }
    }

    /// The CPU time so far of thread `tid` of `pid`, nanoseconds; nil when it is gone.
    static func thread(_ tid: Int, of pid: pid_t) -> UInt64? {
        let folder = "/proc/\(pid)/task/\(tid)/"
        if let text = try? String(contentsOfFile: folder + "schedstat", encoding: .utf8) {
            return cpuNanoseconds(schedstat: text)
        }
        return (try? String(contentsOfFile: folder + "stat", encoding: .utf8)).flatMap { cpuNanoseconds(stat: $0) }
    }

    /// The CPU time so far of each thread of `pid` whose name starts with `prefix`, by thread id.
    static func threads(of pid: pid_t, namedWith prefix: String) -> [Int: UInt64] {
        var times: [Int: UInt64] = [:]
        for tid in ThreadSampler.threadIDs(of: pid) {
            guard let name = ThreadSampler.threadName(of: pid, thread: tid), name.hasPrefix(prefix),
                let time = thread(tid, of: pid)
            else { continue }
            times[tid] = time
        }
        return times
    }

    /// The CPU time used between two readings of a process.
    static func elapsed(from before: UInt64, to after: UInt64) -> UInt64 { after >= before ? after - before : 0 }

    /// The CPU time the threads of `after` used since `before` (a thread absent from `before` was made since: all its
    /// time counts; a thread that exited in between is not counted).
    static func elapsed(from before: [Int: UInt64], to after: [Int: UInt64]) -> UInt64 {
        after.reduce(0) { sum, entry in sum &+ elapsed(from: before[entry.key] ?? 0, to: entry.value) }
    }
}

/// The example server as a child process: started with a pipe on its standard output, whose first line is the port.
final class ServerProcess {
    let pid: pid_t
    let port: UInt16
    private let output: Int32

    private init(pid: pid_t, port: UInt16, output: Int32) {
        self.pid = pid
        self.port = port
        self.output = output
    }

    /// Starts `binary` with `arguments` and waits (at most `deadlineSeconds`) for the port line.
    static func start(
        _ binary: String,
        arguments: [String],
        deadlineSeconds: Double
    ) -> Result<ServerProcess, HTTPBench.RunFailure> {
        var ends: [Int32] = [0, 0]
        guard pipe(&ends) == 0 else { return .failure(.init(description: "pipe failed (errno \(errno))")) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        posix_spawn_file_actions_adddup2(&actions, ends[1], 1)
        posix_spawn_file_actions_addclose(&actions, ends[0])
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        var cArguments = ([binary] + arguments).map { strdup($0) } + [nil]
        var pid: pid_t = 0
        let code = posix_spawn(&pid, binary, &actions, nil, &cArguments, environ)
        for pointer in cArguments { free(pointer) }
        posix_spawn_file_actions_destroy(&actions)
        Glibc.close(ends[1])
        guard code == 0 else {
            Glibc.close(ends[0])
            return .failure(.init(description: "could not start \(binary) (posix_spawn: \(code))"))
        }
        var line: [UInt8] = []
        let deadline = monotonicNanoseconds() &+ UInt64(deadlineSeconds * 1e9)
        var poller = pollfd(fd: ends[0], events: Int16(POLLIN), revents: 0)
        while !line.contains(10) && monotonicNanoseconds() < deadline {
            guard poll(&poller, 1, 100) > 0 else { continue }
            var byte: UInt8 = 0
            guard read(ends[0], &byte, 1) == 1 else { break }
            line.append(byte)
        }
        let text = String(decoding: line, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        guard let port = UInt16(text), port > 0 else {
            let child = ServerProcess(pid: pid, port: 0, output: ends[0])
            child.stop()
            return .failure(.init(description: "the server printed no port (got '\(text)')"))
        }
        return .success(ServerProcess(pid: pid, port: port, output: ends[0]))
    }

    /// SIGTERM, then SIGKILL after 5 s; reaps the child.
    func stop() {
        kill(pid, SIGTERM)
        var status: Int32 = 0
        let deadline = monotonicNanoseconds() &+ 5_000_000_000
        while waitpid(pid, &status, WNOHANG) == 0 {
            if monotonicNanoseconds() > deadline {
                kill(pid, SIGKILL)
                _ = waitpid(pid, &status, 0)
                break
            }
            usleep(10_000)
        }
        Glibc.close(output)
    }
}
