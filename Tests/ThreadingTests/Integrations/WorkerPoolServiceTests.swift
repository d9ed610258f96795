// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

#if ServiceLifecycleSupport
import InMemoryLogging
import Logging
import ServiceLifecycle
import ServiceLifecycleTestKit
import Synchronization
import Testing

@testable import Threading

/// A pool as a swift-service-lifecycle `Service` (trait `ServiceLifecycleSupport`).
@Suite struct WorkerPoolServiceTests {
    /// Until the graceful shutdown the pool takes work; then it stops taking it, runs what it accepted, `run()`
    /// returns and the outcome is logged at info with the pool's name.
    @Test func gracefulShutdownDrainsTheAcceptedWork() async throws {
        let (handler, logger) = InMemoryLogHandler.makeLogger(labeled: "threading")
        let pool = WorkerPool(label: "service.drain", threads: 2)
        let service = WorkerPoolService(pool, drainTimeout: .seconds(20), logger: logger)
        let queue = ConcurrentQueue(label: "service.drain.queue", pool: pool)
        let ran = Atomic<Int>(0)
        try await testGracefulShutdown { trigger in
            try await withDeadline {
                try await withThrowingTaskGroup(of: Void.self) { group in
                    group.addTask { try await service.run() }
                    for _ in 0..<20 {
                        #expect(
                            queue.tryAsync {
                                PosixThread.sleep(for: .milliseconds(5))
                                ran.add(1, ordering: .relaxed)
                            }
                        )
                    }
                    #expect(!pool.isShutDown)
                    trigger.triggerGracefulShutdown()
                    try await group.waitForAll()
                }
            }
        }
        #expect(ran.load(ordering: .relaxed) == 20)
        #expect(pool.isShutDown)
        #expect(!queue.tryAsync {})  // it takes no more work
        let entries = handler.entries
        #expect(entries.count == 1)
        #expect(entries.first?.level == .info)
        #expect(entries.first?.metadata["pool"] == "service.drain")
        #expect(entries.first?.metadata["graceful"] == "true")
        #expect(entries.first?.metadata["tasks_not_run"] == nil)
    }

    /// Work that does not finish within the drain deadline is left, and the warning says how much.
    @Test func theDrainDeadlineBoundsTheShutdownAndTheLeftoverIsLogged() async throws {
        let (handler, logger) = InMemoryLogHandler.makeLogger(labeled: "threading")
        let (pool, gate) = try #require(poolTestBlockedPool(label: "service.deadline"))
        let queue = ConcurrentQueue(label: "service.deadline.queue", pool: pool)
        let ran = Atomic<Int>(0)
        for _ in 0..<3 { #expect(queue.tryAsync { ran.add(1, ordering: .relaxed) }) }
        let service = WorkerPoolService(pool, drainTimeout: .milliseconds(100), logger: logger)
        try await testGracefulShutdown { trigger in
            try await withDeadline {
                try await withThrowingTaskGroup(of: Void.self) { group in
                    group.addTask { try await service.run() }
                    trigger.triggerGracefulShutdown()
                    try await group.waitForAll()
                }
            }
        }
        gate.open()  // the blocked task returns; its thread exits
        #expect(ran.load(ordering: .relaxed) == 0)
        let entry = try #require(handler.entries.first)
        #expect(handler.entries.count == 1)
        #expect(entry.level == .warning)
        #expect(entry.metadata["pool"] == "service.deadline")
        #expect(entry.metadata["tasks_not_run"] == "3")
        #expect(entry.metadata["busy_threads"] == "1")
        #expect(entry.metadata["drain_timeout_ms"] == "100")
    }

    /// When the service's task is cancelled (the group ends without a grace period) the pool stops without
    /// draining, and `run()` returns.
    @Test func cancellationStopsThePoolWithoutADrain() async throws {
        let (handler, logger) = InMemoryLogHandler.makeLogger(labeled: "threading")
        let (pool, gate) = try #require(poolTestBlockedPool(label: "service.cancel"))
        let queue = ConcurrentQueue(label: "service.cancel.queue", pool: pool)
        #expect(queue.tryAsync {})
        let service = WorkerPoolService(pool, drainTimeout: .seconds(60), logger: logger)
        let task = Task { try await service.run() }
        task.cancel()
        try await withDeadline { try await task.value }
        gate.open()
        #expect(pool.isShutDown)
        let entry = try #require(handler.entries.first)
        #expect(entry.level == .warning)
        #expect(entry.metadata["graceful"] == "false")
        #expect(entry.metadata["tasks_not_run"] == "1")
    }

    /// In a `ServiceGroup`, the services shut down in the reverse order of the list: a pool listed before the
    /// server drains after the server returned, so work the server submitted while stopping still runs.
    @Test func inAServiceGroupThePoolDrainsAfterTheServiceListedAfterIt() async throws {
        let (handler, logger) = InMemoryLogHandler.makeLogger(labeled: "threading")
        let pool = WorkerPool(label: "service.group", threads: 2)
        let queue = ConcurrentQueue(label: "service.group.queue", pool: pool)
        let order = LockedValue<[String]>([])
        let server = ServerStandIn(queue: queue, order: order)
        let group = ServiceGroup(
            services: [WorkerPoolService(pool, logger: logger), server],
            logger: Logger(label: "group") { _ in SwiftLogNoOpLogHandler() }
        )
        try await testGracefulShutdown { trigger in
            try await withDeadline {
                try await withThrowingTaskGroup(of: Void.self) { tasks in
                    tasks.addTask { try await group.run() }
                    #expect(await suspendUntil { server.started.load(ordering: .acquiring) })
                    trigger.triggerGracefulShutdown()
                    try await tasks.waitForAll()
                }
            }
        }
        #expect(order.withLock { $0 } == ["server stopped", "last request ran"])
        #expect(handler.entries.first?.level == .info)
        #expect(pool.isShutDown)
    }
}

/// Stands in for an HTTP server: at graceful shutdown it stops, submitting one last piece of work to the pool
/// first (a request it was finishing).
private final class ServerStandIn: Service {
    let queue: ConcurrentQueue
    let order: LockedValue<[String]>
    let started = Atomic<Bool>(false)

    init(queue: ConcurrentQueue, order: LockedValue<[String]>) {
        self.queue = queue
        self.order = order
    }

    func run() async throws {
        started.store(true, ordering: .releasing)
        try? await gracefulShutdown()
        let order = self.order
        _ = queue.tryAsync {
            PosixThread.sleep(for: .milliseconds(50))
            order.withLock { $0.append("last request ran") }
        }
        order.withLock { $0.append("server stopped") }
    }
}
#endif
