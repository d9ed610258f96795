// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import Logging
import NIOPosix
import ServiceLifecycle
import Threading

/// Runs the server's blocking calls the way its ``OffloadMode`` says, on the pools that mode needs.
///
/// Reference semantics; `Sendable`: its stored properties are constants of `Sendable` types.
public final class Offloader: Sendable {
    /// The mode this offloader runs.
    public let mode: OffloadMode
    /// The most threads of the pool the mode creates (``OffloadMode/threadingPool``, ``OffloadMode/nioSized``).
    public let threads: Int
    private let workerPool: WorkerPool?
    private let nioPool: NIOThreadPool?

    private init(mode: OffloadMode, threads: Int, workerPool: WorkerPool?, nioPool: NIOThreadPool?) {
        self.mode = mode
        self.threads = threads
        self.workerPool = workerPool
        self.nioPool = nioPool
    }

    /// Sets up the pools the server uses, once, at start-up: the one place where the server creates and configures
    /// its pools. The Threading pool the mode uses records its schedule delays (the time a call waits for a thread,
    /// exported by ``services(logger:)``).
    ///
    /// - Parameters:
    ///   - mode: How the blocking endpoint offloads.
    ///   - threads: The size of the pool the mode creates, 1 through 4,096: a ``OffloadMode/threadingPool`` CPU
    ///     pool or a ``OffloadMode/nioSized`` `NIOThreadPool` (the process-wide pools keep their own size).
    /// - Returns: The offloader; call ``shutdown()`` when the server stopped.
    public static func make(mode: OffloadMode, threads: Int) -> Offloader {
        precondition((1...4096).contains(threads), "Offloader.make(mode:threads: \(threads)): threads must be 1...4096")
        switch mode {
        case .threadingPool:
            let pool = WorkerPool(label: "hb.pool", threads: threads)
            pool.recordsScheduleDelays = true
            return Offloader(mode: mode, threads: threads, workerPool: pool, nioPool: nil)
        case .threadingBlocking:
            WorkerPool.blocking.recordsScheduleDelays = true
            return Offloader(mode: mode, threads: threads, workerPool: nil, nioPool: nil)
        case .nioSized:
            let pool = NIOThreadPool(numberOfThreads: threads)
            pool.start()
            return Offloader(mode: mode, threads: threads, workerPool: nil, nioPool: pool)
        case .nioSingleton, .inline, .detached, .inlineNIOExecutor, .inlineThreadingExecutor:
            return Offloader(mode: mode, threads: threads, workerPool: nil, nioPool: nil)
        }
    }

    /// Runs `body`, a blocking call, as the mode says, and returns its result.
    ///
    /// - Parameter body: The blocking call.
    /// - Returns: What `body` returned.
    /// - Throws: What the pool throws when it no longer takes work (`ThreadingError.shutDown`, NIO's
    ///   `NIOThreadPoolError.ThreadPoolInactive`), or `CancellationError`.
    public func run<Result: Sendable>(_ body: @escaping @Sendable () -> Result) async throws -> Result {
        switch mode {
        case .threadingBlocking:
            return try await WorkerPool.blocking.run { body() }
        case .threadingPool:
            return await withTaskExecutorPreference(workerPool!) { body() }
        case .nioSingleton:
            return try await NIOThreadPool.singleton.runIfActive(body)
        case .nioSized:
            return try await nioPool!.runIfActive(body)
        case .inline, .inlineNIOExecutor, .inlineThreadingExecutor:
            return body()
        case .detached:
            return await Task.detached { body() }.value
        }
    }

    /// The Threading side of the server's `ServiceGroup`, to be listed **before** the HTTP server (a group shuts its
    /// services down in the reverse order of its list, each after the one behind it returned, so the server stops
    /// taking requests first):
    ///
    /// - a `WorkerPoolMetrics` poller exporting the process-wide pools and that pool to the metrics backend the
    ///   process bootstrapped (`MetricsSystem.bootstrap`; none: nothing is recorded), first, so that it stops last
    ///   and its last poll exports what the drain did;
    /// - the pool ``make(mode:threads:)`` created, as a `WorkerPoolService`: at graceful shutdown it drains the calls
    ///   the server accepted (at most 10 s) and logs the outcome.
    ///
    /// - Parameter logger: Where the pool service reports its shutdown.
    /// - Returns: The services, in the order to list them.
    public func services(logger: Logger) -> [any Service] {
        guard let workerPool else { return [WorkerPoolMetrics(pools: [.shared, .blocking])] }
        return [
            WorkerPoolMetrics(pools: [.shared, .blocking, workerPool]),
            WorkerPoolService(workerPool, logger: logger),
        ]
    }

    /// Stops the pools ``make(mode:threads:)`` created that are still running (the process-wide ones are never
    /// stopped; a pool whose ``services(logger:)`` ran in a group was stopped there), after their work.
    ///
    /// - Throws: What `NIOThreadPool.shutdownGracefully()` throws.
    public func shutdown() async throws {
        if let workerPool, !workerPool.isShutDown { await workerPool.shutdownGracefully() }
        try await nioPool?.shutdownGracefully()
    }
}
