// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import Glibc
import Synchronization
import Testing

@testable import Threading

/// A saturated pool says so: one line on stderr naming the pool, its cap, the queued count and the advice, and
/// counters in its statistics; a pool that only queues briefly says nothing.
@Suite struct PoolSaturationTests {
    @Test func saturationPrintsOneLineAndCounts() async {
        let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
            exit(poolSaturationScenario())
        }
        let text = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        let lines = text.split(separator: "\n").filter { $0.contains("is saturated") }
        #expect(lines.count == 1, "stderr: \(text)")
        let line = lines.first.map(String.init) ?? ""
        #expect(line.contains("worker pool 'sat.pool'"), "\(line)")
        #expect(line.contains("all 2 of its 2 threads (its cap) are busy"), "\(line)")
        #expect(line.contains("3 unit(s) wait"), "\(line)")
        #expect(line.contains("raise its cap"), "\(line)")
        #expect(!text.contains("'sat.calm'"), "stderr: \(text)")
        #expect(!text.contains("saturation scenario:"), "stderr: \(text)")
    }

    /// Both `run` bodies of a two-thread blocking pool wait (no deadline) for a third `run` queued on the same pool,
    /// which can never start: the saturation report says it is a deadlock, naming the pool and each thread's wait.
    @Test func everyThreadAtTheCapWaitingForWorkOfTheSamePoolIsReportedAsADeadlock() async {
        let result = await #expect(processExitsWith: .success, observing: [\.standardOutputContent]) {
            startExitTestWatchdog()
            let observer = CollectingObserver()
            RuntimeObservation.observer = observer
            let pool = WorkerPool(label: "sat.cycle", threads: 2, kind: .blocking)
            let gate = Semaphore(value: 0)
            for _ in 0..<2 { Task { try await pool.run { gate.wait() } } }
            Task {
                try await pool.run {
                    gate.signal()
                    gate.signal()
                }
            }
            let deadlocks = { observer.events(where: "deadlock", is: "true") }
            guard waitUntil(seconds: 10, { !deadlocks().isEmpty }), let event = deadlocks().first,
                event.kind == .saturationBegan, event.severity == .error, event.metadata["pool"] == "sat.cycle"
            else {
                print("no deadlock event: \(observer.events.withLock { $0.map(\.message) })")
                exit(1)
            }
            print(event.message)
            exit(0)
        }
        let text = String(decoding: result?.standardOutputContent ?? [], as: UTF8.self)
        #expect(
            text.contains(
                "Threading: deadlock: worker pool 'sat.cycle' is at its cap of 2 threads and every one of them is "
                    + "blocked in a wait with no deadline while 1 unit(s) queued on this same pool wait for a thread: "
                    + "thread "
            ),
            "\(text)"
        )
        #expect(text.split(separator: "waits on Semaphore at").count == 3, "two waits named: \(text)")
        #expect(text.contains("a run body waiting for another run on the same pool"), "\(text)")
    }
}

/// Two threads of a two-thread blocking pool block, three tasks wait behind them for 1.5 s (three grace periods):
/// one warning, one counted episode. A second pool that runs short tasks never warns.
private func poolSaturationScenario() -> Int32 {
    let pool = WorkerPool(label: "sat.pool", threads: 2, kind: .blocking)
    let calm = WorkerPool(label: "sat.calm", threads: 1, kind: .blocking)
    let queue = ConcurrentQueue(label: "sat.queue", pool: pool)
    let calmQueue = SerialQueue(label: "sat.calm.q", pool: calm)
    let gate = Semaphore(value: 0)
    let started = Atomic<Int>(0)
    let finished = WorkGroup()
    for _ in 0..<5 {
        queue.async(group: finished) {
            started.add(1, ordering: .relaxed)
            _ = gate.wait(timeout: .seconds(30))
        }
    }
    for _ in 0..<200 { calmQueue.async(group: finished) {} }
    guard waitUntil({ started.load(ordering: .relaxed) == 2 }) else {
        faultLog("saturation scenario: the pool did not start its two tasks\n")
        return 1
    }
    usleep(1_500_000)
    let statistics = pool.statistics
    for _ in 0..<5 { gate.signal() }
    guard finished.wait(timeout: .seconds(30)) else { return 2 }
    guard statistics.saturations == 1, statistics.saturationWarnings == 1, calm.statistics.saturations == 0 else {
        faultLog("saturation scenario: counters \(statistics.saturations) \(statistics.saturationWarnings)\n")
        return 3
    }
    _ = poolTestShutDown(pool)
    _ = poolTestShutDown(calm)
    return 0
}
