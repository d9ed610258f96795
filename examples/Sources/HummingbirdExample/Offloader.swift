// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import NIOPosix
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

    /// Sets up the pools the server uses, once, at start-up: the one place where the server creates, configures and
    /// observes its pools (where logging, metrics and a lifecycle service for them are to be adopted).
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
            return Offloader(mode: mode, threads: threads, workerPool: pool, nioPool: nil)
        case .nioSized:
            let pool = NIOThreadPool(numberOfThreads: threads)
            pool.start()
            return Offloader(mode: mode, threads: threads, workerPool: nil, nioPool: pool)
        case .threadingBlocking, .nioSingleton, .inline, .detached:
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
        case .inline:
            return body()
        case .detached:
            return await Task.detached { body() }.value
        }
    }

    /// Stops the pools ``make(mode:threads:)`` created (the process-wide ones are never stopped), after their work.
    ///
    /// - Throws: What `NIOThreadPool.shutdownGracefully()` throws.
    public func shutdown() async throws {
        await workerPool?.shutdownGracefully()
        try await nioPool?.shutdownGracefully()
    }
}
