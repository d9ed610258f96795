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
