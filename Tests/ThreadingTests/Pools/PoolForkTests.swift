// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import CThreading
import Glibc
import Synchronization
import Testing

@testable import Threading

/// `fork()` with pools of one's own: every live pool takes part, and a forked child drops each pool's pending work.
@Suite struct PoolForkTests {
    @Test(.disabled(if: faultForkBlockedBySanitizer, "TSan does not support multi-threaded fork children"))
    func forkedChildDropsThePendingWorkOfEveryPool() async {
        let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
            exit(poolForkScenario())
        }
        let errors = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(!errors.contains("pool fork:"), "stderr: \(errors)")
    }

    /// The runtime's locks that a thread takes while nothing else of the runtime is held: a pool's observation
    /// lock (a worker attaching or exiting, the stall watchdog sampling), the runtime registry's (the watchdog walks
    /// the pools), the event ring's (the delivery thread takes each event), the main thread's wait record's (a
    /// main-thread join or group wait, a `sync` onto the main queue) and the wait-cycle reporter's.
    enum LeafLock: String, CaseIterable, Sendable, Codable {
        case observation, registry, events, mainThreadWait, waitCycles
    }

    /// A fork while another thread holds one of those locks waits for it, so the child, which has none of the
    /// parent's threads, does not inherit it held: its pool's new workers (each attaches to the observation) run
    /// its work, it makes a pool of its own (registered), hands an event to the delivery ring, ends a main-thread
    /// wait record and takes the cycle reporter's lock.
    @Test(
        .disabled(if: faultForkBlockedBySanitizer, "TSan does not support multi-threaded fork children"),
        arguments: LeafLock.allCases
    )
    func aForkWhileAnotherThreadHoldsALeafLockLeavesTheChildWorking(_ held: LeafLock) async {
        let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) { [held] in
            exit(leafLockForkScenario(held))
        }
        let errors = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(!errors.contains("leaf lock fork:"), "stderr: \(errors)")
    }

    /// A pool worker forks from inside a unit: in the child it is the pool's one thread, and the pool has no
    /// monitor. When its unit returns it parks, which starts a monitor to retire it; the idle timeout later, it
    /// exits (a worker parks with no deadline of its own, so without the monitor it would stay for ever).
    @Test(.disabled(if: faultForkBlockedBySanitizer, "TSan does not support multi-threaded fork children"))
    func aWorkerThatForksIsRetiredInTheChildOnceIdle() async {
        let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
            exit(workerForkRetireScenario())
        }
        let errors = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(!errors.contains("worker fork:"), "stderr: \(errors)")
    }
}

/// The scenario of ``PoolForkTests/aWorkerThatForksIsRetiredInTheChildOnceIdle()``: 0 when it held.
private func workerForkRetireScenario() -> Int32 {
    let pool = WorkerPool(label: "fork.retire", threads: 2, kind: .blocking)
    let queue = ConcurrentQueue(label: "fork.retire.q", pool: pool)
    let child = Atomic<Int32>(-1)
    let done = WorkGroup()
    queue.async(group: done) {
        faultWaitUntilQuiet()
        let pid = fork()
        guard pid == 0 else {
            child.store(pid, ordering: .releasing)
            return
        }
        // The child: this thread alone. Another thread watches the pool while this one returns to its worker loop.
        let watcher = try? PosixThread(name: "fork.retire.watch") {
            let retired = waitUntil(seconds: 20) { pool.statistics.threads == 0 }
            if !retired { faultLog("worker fork: the child's idle worker was not retired\n") }
            _exit(retired ? 0 : 1)
        }
        if watcher == nil { _exit(2) }
    }
    guard done.wait(timeout: .seconds(20)) else {
        faultLog("worker fork: the forking unit did not end\n")
        return 3
    }
    let pid = child.load(ordering: .acquiring)
    guard pid > 0 else { return 4 }
    let status = faultWaitForChild(pid, seconds: 60)
    _ = poolTestShutDown(pool)
    if status != 0 { faultLog("worker fork: the child exited with \(status)\n") }
    return status == 0 ? 0 : 10 + status
}

/// A thread takes `held` and keeps it for 100 ms while the main thread forks; the child's first task on a pool that
/// has no thread yet needs a new worker (which attaches to the pool's observation), then it makes a pool and reports
/// an event.
private func leafLockForkScenario(_ held: PoolForkTests.LeafLock) -> Int32 {
    let pool = WorkerPool(label: "fork.leaf", threads: 1)
    let lock: RuntimeLock
    switch held {
    case .observation: lock = pool.poolCore.observation.lock
    case .registry: lock = RuntimeRegistry.lock
    case .events: lock = RuntimeEventDelivery.shared.lock
    case .mainThreadWait: lock = MainThreadWait.lock
    case .waitCycles: lock = WaitCycleDetector.lock
    }
    let taken = QueueGate()
    let holder: PosixThread<Void>
    do {
        holder = try PosixThread {
            lock.lock()
            taken.open()
            _ = cthr_sleep_ns(100_000_000)
            lock.unlock()
        }
    } catch {
        return 1
    }
    guard taken.wait(seconds: 20) else {
        faultLog("leaf lock fork: the holder did not start\n")
        return 2
    }
    let status = faultRunForked(seconds: 30) {
        let ran = QueueGate()
        SerialQueue(label: "fork.leaf.q", pool: pool).async { ran.open() }
        guard ran.wait(seconds: 10) else {
            faultLog("leaf lock fork: the child's task did not run\n")
            return 1
        }
        let own = WorkerPool(label: "fork.leaf.child", threads: 1)
        _ = poolTestShutDown(own)
        let event = RuntimeEvent(kind: .warning, severity: .info, message: "Threading: a child's event", metadata: [:])
        _ = RuntimeEventDelivery.shared.handOff(event)
        MainThreadWait.endWait()
        WaitCycleDetector.lock.withLock {}
        return 0
    }
    _ = holder.join(timeout: .seconds(20))
    _ = poolTestShutDown(pool)
    if status != 0 { faultLog("leaf lock fork: the child exited with \(status)\n") }
    return status == 0 ? 0 : 10 + status
}

/// A pool whose one thread is blocked, with three tasks waiting behind it, forks: the child runs its own work on the
/// pool (which restarted empty) and none of the three, and can shut the pool down; the parent runs the three once.
private func poolForkScenario() -> Int32 {
    guard let (pool, gate) = poolTestBlockedPool(label: "fork.pool") else { return 1 }
    let queue = SerialQueue(label: "fork.pool.q", pool: pool)
    let ran = Atomic<Int>(0)
    for _ in 0..<3 { queue.async { ran.add(1, ordering: .relaxed) } }
    let status = faultRunForked {
        let fresh = QueueGate()
        queue.async { fresh.open() }
        guard fresh.wait(seconds: 20) else {
            faultLog("pool fork: the child's own task did not run\n")
            return 1
        }
        _ = cthr_sleep_ns(50_000_000)
        guard ran.load(ordering: .relaxed) == 0 else {
            faultLog("pool fork: the child ran the parent's tasks\n")
            return 2
        }
        _ = poolTestShutDown(pool)
        return 0
    }
    gate.open()
    guard waitUntil({ ran.load(ordering: .relaxed) == 3 }) else {
        faultLog("pool fork: the parent's tasks did not run\n")
        return 3
    }
    _ = poolTestShutDown(pool)
    if status != 0 { faultLog("pool fork: the child exited with \(status)\n") }
    return status == 0 ? 0 : 10 + status
}
