// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import Hummingbird
import Logging
import NIOCore
import NIOPosix
import ServiceLifecycle
import Threading

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// What the example server does: where it listens, how `/blocking` offloads, and the size of the work behind each
/// endpoint.
///
/// A value type of `Sendable` values, so it is `Sendable`.
public struct ServerOptions: Sendable, Equatable {
    /// The host to bind; `127.0.0.1` by default.
    public var host = "127.0.0.1"
    /// The port to bind; 0 (the default) lets the system pick one, which the server prints.
    public var port = 0
    /// How `/blocking` offloads its call.
    public var offload = OffloadMode.threadingBlocking
    /// The size of the pool the offload mode creates (see ``Offloader/make(mode:threads:)``); 64 by default.
    public var threads = 64
    /// How long the call of `/blocking` sleeps, in microseconds; 2,000 (2 ms) by default.
    public var blockingMicroseconds = 2_000
    /// The rounds of the hash loop of `/cpu`; 200,000 by default (about half a millisecond in a release build).
    public var cpuRounds = 200_000

    /// Options with every default.
    public init() {}

    /// Parses the server's command line (without the program name).
    ///
    /// Flags: `--host H`, `--port P`, `--offload MODE` (one of ``OffloadMode``'s raw values), `--threads N`,
    /// `--blocking-us MICROSECONDS`, `--cpu-rounds N`.
    ///
    /// - Parameter arguments: The arguments.
    /// - Returns: The options, or a message naming the bad argument.
    public static func parse(_ arguments: [String]) -> Result<ServerOptions, UsageError> {
        var options = ServerOptions()
        var remaining = arguments[...]
        while let flag = remaining.popFirst() {
            guard let value = remaining.popFirst() else { return .failure(UsageError("\(flag) needs a value")) }
            func integer(_ range: ClosedRange<Int>) -> Int? {
                guard let number = Int(value), range.contains(number) else { return nil }
                return number
            }
            switch flag {
            case "--host": options.host = value
            case "--port":
                guard let port = integer(0...65_535) else { return .failure(UsageError("bad --port \(value)")) }
                options.port = port
            case "--offload":
                guard let mode = OffloadMode(rawValue: value) else {
                    let modes = OffloadMode.allCases.map(\.rawValue).joined(separator: ", ")
                    return .failure(UsageError("bad --offload \(value); one of: \(modes)"))
                }
                options.offload = mode
            case "--threads":
                guard let threads = integer(1...4_096) else { return .failure(UsageError("bad --threads \(value)")) }
                options.threads = threads
            case "--blocking-us":
                guard let micros = integer(0...10_000_000) else {
                    return .failure(UsageError("bad --blocking-us \(value)"))
                }
                options.blockingMicroseconds = micros
            case "--cpu-rounds":
                guard let rounds = integer(0...1_000_000_000) else {
                    return .failure(UsageError("bad --cpu-rounds \(value)"))
                }
                options.cpuRounds = rounds
            default: return .failure(UsageError("unknown argument \(flag)"))
            }
        }
        return .success(options)
    }
}

/// A command line the server does not accept.
///
/// A value type holding a `String`, so it is `Sendable`.
public struct UsageError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What is wrong, naming the argument.
    public let description: String

    /// Makes the error.
    ///
    /// - Parameter description: What is wrong.
    public init(_ description: String) { self.description = description }
}

/// The blocking call of `/blocking`: sleeps the calling thread for `microseconds` (`nanosleep`, resumed after a
/// signal). Returns the microseconds slept, as asked.
///
/// - Parameter microseconds: How long to block.
/// - Returns: `microseconds`.
public func blockingCall(microseconds: Int) -> Int {
    var request = timespec(tv_sec: microseconds / 1_000_000, tv_nsec: (microseconds % 1_000_000) * 1_000)
    var remaining = timespec()
    while nanosleep(&request, &remaining) != 0 && errno == EINTR { request = remaining }
    return microseconds
}

/// The CPU-bound work of `/cpu`: `rounds` rounds of a 64-bit FNV-1a hash over a counter.
///
/// - Parameter rounds: How many rounds.
/// - Returns: The hash.
public func cpuWork(rounds: Int) -> UInt64 {
    var hash: UInt64 = 0xcbf2_9ce4_8422_2325
    for round in 0..<rounds {
        hash = (hash ^ UInt64(truncatingIfNeeded: round)) &* 0x0000_0100_0000_01b3
    }
    return hash
}

/// Builds the example's router: `GET /health` (a constant), `GET /blocking` (``blockingCall(microseconds:)``
/// through `offloader`), `GET /cpu` (``cpuWork(rounds:)`` in the handler).
///
/// - Parameters:
///   - options: The sizes of the endpoints' work.
///   - offloader: How `/blocking` offloads.
/// - Returns: The router.
public func makeRouter(options: ServerOptions, offloader: Offloader) -> Router<BasicRequestContext> {
    let router = Router()
    let micros = options.blockingMicroseconds
    let rounds = options.cpuRounds
    router.get("/health") { _, _ in "ok\n" }
    router.get("/blocking") { _, _ in
        let slept = try await offloader.run { blockingCall(microseconds: micros) }
        return "blocked \(slept) us\n"
    }
    router.get("/cpu") { _, _ in "hash \(cpuWork(rounds: rounds))\n" }
    return router
}

/// Runs the example server until SIGTERM or SIGINT, set up as a service adopts Threading: the runtime's reports
/// (saturation, stalls, wait cycles) go to the server's logger; the pools (``Offloader/make(mode:threads:)``) and
/// their metrics poller run in one `ServiceGroup` with the HTTP server, listed before it (the poller first), so that
/// on SIGTERM the server stops taking requests first, then the pool drains the calls it accepted, then the poller
/// exports the final counts. `onBound` gets the bound port (the server prints it).
///
/// - Parameters:
///   - options: Where to listen and how to offload.
///   - logger: The server's logger (default: `hummingbird-server`, at `info`).
///   - onBound: Called once with the bound port, before the first request is served.
/// - Throws: What binding or serving throws.
/// Installs the global executor `mode` asks for (``OffloadMode/inlineNIOExecutor``: NIO's event loops;
/// ``OffloadMode/inlineThreadingExecutor``: Threading's shared pool); the other modes keep the runtime's. Call it once,
/// first thing in `main`, before the first task.
///
/// - Parameter mode: The server's offload mode.
/// - Throws: What `WorkerPool.installAsGlobalConcurrentExecutor()` throws; a ``UsageError`` when NIO refused.
public func installGlobalExecutor(for mode: OffloadMode) throws {
    switch mode {
    case .inlineNIOExecutor:
        guard NIOSingletons.unsafeTryInstallSingletonPosixEventLoopGroupAsConcurrencyGlobalExecutor() else {
            throw UsageError("NIO could not install its event loops as the global executor with this compiler")
        }
    case .inlineThreadingExecutor:
        try WorkerPool.installAsGlobalConcurrentExecutor()
    case .threadingBlocking, .threadingPool, .nioSingleton, .nioSized, .inline, .detached:
        break
    }
}

public func runServer(
    options: ServerOptions,
    logger: Logger = Logger(label: "hummingbird-server"),
    onBound: @escaping @Sendable (Int) -> Void
) async throws {
    RuntimeObservation.log(to: logger)
    let offloader = Offloader.make(mode: options.offload, threads: options.threads)
    let app = Application(
        router: makeRouter(options: options, offloader: offloader),
        configuration: ApplicationConfiguration(address: .hostname(options.host, port: options.port)),
        onServerRunning: { channel in onBound(channel.localAddress?.port ?? -1) },
        logger: logger
    )
    let group = ServiceGroup(
        services: offloader.services(logger: logger) + [app],
        gracefulShutdownSignals: [.sigterm, .sigint],
        logger: logger
    )
    do {
        try await group.run()
    } catch {
        try? await offloader.shutdown()
        throw error
    }
    try await offloader.shutdown()
}
