// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

#if ServiceLifecycleSupport
import Logging
import ServiceLifecycle

/// A ``WorkerPool`` run as a swift-service-lifecycle `Service` (trait `ServiceLifecycleSupport`): ``run()`` waits
/// for the group's graceful shutdown, then shuts the pool down within ``drainTimeout`` and reports what was left.
///
/// At graceful shutdown the pool stops taking work from other threads (the recoverable forms answer
/// `ThreadingError.shutDown` or nil, see <doc:Pools>), runs what it accepted for at most ``drainTimeout``, and
/// ``run()`` returns: the result is logged at `info` when everything ran and at `warning`, with `tasks_not_run`
/// and `busy_threads`, when the deadline left work behind. A `ServiceGroup` shuts its services down in the reverse
/// order of its list, each after the one after it returned: list the pool **before** the HTTP server, so the server
/// stops taking requests first and the pool then drains what they submitted:
///
/// <!-- sample-context
/// import Logging
/// import ServiceLifecycle
///
/// /// Stands in for the HTTP server (Hummingbird's `Application` is a `Service`).
/// struct HTTPServer: Service { func run() async throws { try? await gracefulShutdown() } }
/// let logger = Logger(label: "server")
/// let httpServer = HTTPServer()
/// -->
/// ```swift
/// let pool = WorkerPool(label: "render")
/// let group = ServiceGroup(
///     services: [WorkerPoolService(pool, logger: logger), httpServer],
///     gracefulShutdownSignals: [.sigterm],
///     logger: logger
/// )
/// try await group.run()
/// ```
///
/// When the task running ``run()`` is cancelled instead (the group ends because a service failed), the pool is shut
/// down with no drain (tasks not started are dropped and counted).
///
/// A value type of `Sendable` parts, so it is `Sendable`.
public struct WorkerPoolService: Service {
    /// The pool the service shuts down.
    public let pool: WorkerPool
    /// The longest graceful drain of the accepted work.
    public let drainTimeout: Duration
    /// Where the outcome of the shutdown is reported.
    public let logger: Logger

    /// Creates the service for `pool`.
    ///
    /// - Parameters:
    ///   - pool: A pool the service owns: not ``WorkerPool/shared`` or ``WorkerPool/blocking`` (never shut down;
    ///     ``run()`` traps for them, as ``WorkerPool/shutdown()-8p8u6`` does).
    ///   - drainTimeout: The longest wait for the accepted work at graceful shutdown (default: 10 s, well inside
    ///     the usual 30 s between SIGTERM and SIGKILL).
    ///   - logger: Where the outcome of the shutdown goes (default: a logger labelled `threading`).
    public init(_ pool: WorkerPool, drainTimeout: Duration = .seconds(10), logger: Logger = Logger(label: "threading"))
    {
        self.pool = pool
        self.drainTimeout = drainTimeout
        self.logger = logger
    }

    /// Waits for the graceful shutdown (or cancellation), shuts the pool down, logs the outcome and returns.
    ///
    /// Traps for ``WorkerPool/shared`` and ``WorkerPool/blocking`` (see ``WorkerPool/shutdown()-8p8u6``).
    ///
    /// - Throws: Nothing: the shutdown's outcome is logged, not thrown (a deadline that left work is an expected
    ///   outcome of a shutdown).
    public func run() async throws {
        let graceful: Bool
        do {
            try await gracefulShutdown()
            graceful = true
        } catch {
            graceful = false  // cancelled: the group is going down without a grace period
        }
        let started = ContinuousClock.now
        let result = await pool.shutdownGracefully(timeout: graceful ? drainTimeout : .zero)
        let elapsed = ContinuousClock.now - started
        var metadata: Logger.Metadata = [
            "pool": .string(pool.label),
            "duration_ms": .string("\(Int(elapsed / .milliseconds(1)))"),
            "graceful": .string("\(graceful)"),
        ]
        if result.isComplete {
            logger.info("worker pool drained and stopped", metadata: metadata)
        } else {
            metadata["tasks_not_run"] = .string("\(result.tasksNotRun)")
            metadata["busy_threads"] = .string("\(result.busyThreads)")
            metadata["drain_timeout_ms"] = .string("\(Int(drainTimeout / .milliseconds(1)))")
            logger.warning("worker pool stopped with work left at its drain deadline", metadata: metadata)
        }
    }
}

#if MetricsSupport
/// With `MetricsSupport` and `ServiceLifecycleSupport`, the poller is a `Service`: ``WorkerPoolMetrics/run()``
/// polls until the group's graceful shutdown, polls once more and returns.
extension WorkerPoolMetrics: Service {}
#endif
#endif
