// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

@testable import Threading

/// Runs `body` in a synchronous context and returns its result.
///
/// Exit-test bodies (`#expect(processExitsWith:)`) are async closures, while the blocking calls many of them exercise
/// (`join()`, `wait(timeout:)`, `sync`) are `noasync`: that attribute applies to async contexts only, so a test that
/// means to block the thread says so with this wrapper.
@discardableResult
func blockingCall<Result>(_ body: () throws -> Result) rethrows -> Result {
    try body()
}

/// Whether the calling thread is a worker of `pool`.
func isOnPool(_ pool: WorkerPool) -> Bool {
    SchedulerThread.current.pointee.worker?.takeUnretainedValue().poolCore === pool.poolCore
}

/// The operation did not finish before its deadline.
struct DeadlineExceeded: Error {}

/// Runs `operation` and fails with ``DeadlineExceeded`` when it has not finished within `seconds` (the operation is
/// cancelled then).
func withDeadline<Result: Sendable>(
    seconds: Int = 20,
    _ operation: @escaping @Sendable () async throws -> Result
) async throws -> Result {
    try await withThrowingTaskGroup(of: Result?.self) { group in
        group.addTask { try await operation() }
        group.addTask {
            try await Task.sleep(for: .seconds(seconds))
            return nil
        }
        defer { group.cancelAll() }
        guard let first = try await group.next(), let value = first else { throw DeadlineExceeded() }
        return value
    }
}

/// An actor whose executor is a serial queue.
actor QueueActor {
    let queue: SerialQueue
    let log: LockedValue<[Int]>

    init(queue: SerialQueue, log: LockedValue<[Int]> = LockedValue([])) {
        self.queue = queue
        self.log = log
    }

    nonisolated var unownedExecutor: UnownedSerialExecutor { queue.asUnownedSerialExecutor() }

    var counter = 0

    func record(_ value: Int) { log.withLock { $0.append(value) } }

    func isOnQueue() -> Bool { queue.isCurrent }

    func increment() -> Int {
        counter += 1
        return counter
    }
}

/// A task whose end a test can wait for with a deadline: a wait the code under test never ends fails the test
/// (``result(within:)`` answers nil) instead of hanging it, which awaiting `task.result` alone would.
final class WatchedTask<Success: Sendable>: Sendable {
    let task: Task<Success, any Error>
    private let ended: TestCounter

    init(_ operation: @escaping @Sendable () async throws -> Success) {
        let ended = TestCounter()
        self.ended = ended
        task = Task {
            defer { ended.add() }
            return try await operation()
        }
    }

    func cancel() { task.cancel() }

    /// The task's result once it ended, or nil when it has not ended within `seconds`.
    func result(within seconds: Double = 20) async -> Result<Success, any Error>? {
        guard await suspendUntil(seconds: seconds, { self.ended.value == 1 }) else { return nil }
        return await task.result
    }
}
