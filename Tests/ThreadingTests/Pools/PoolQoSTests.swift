// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import CThreading
import Glibc
import Synchronization
import Testing

@testable import Threading

/// QoS orders lanes inside a pool and never demotes a thread: no nice changes, privileged or not.
@Suite struct PoolQoSTests {
    /// In a child that dropped root (no `CAP_SYS_NICE`, as in a default container), `.background` and `.default`
    /// tasks alternate on one worker: every default task runs at the process's nice value (0 normally), none
    /// at the background lane's former 10.
    @Test(.disabled(if: faultForkBlockedBySanitizer, "TSan does not support multi-threaded fork children"))
    func defaultTasksRunAtNiceZeroAfterBackgroundWorkUnprivileged() async {
        let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
            exit(poolNiceScenario())
        }
        let errors = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(!errors.contains("pool nice:"), "stderr: \(errors)")
    }
}

private func poolNiceScenario() -> Int32 {
    faultRunForked {
        guard faultDropRoot() else { return 1 }
        var start: Int32 = 0
        _ = cthr_thread_get_nice(&start)
        // One thread, so the same worker runs both lanes one after the other.
        let pool = WorkerPool(label: "nice.pool", threads: 1, kind: .blocking)
        let background = SerialQueue(label: "nice.background", qos: .background, pool: pool)
        let normal = SerialQueue(label: "nice.default", qos: .default, pool: pool)
        let niceValues = QueueTestLocked<[Int32]>([])
        let done = WorkGroup()
        for _ in 0..<50 {
            background.async(group: done) {
                var value: Int32 = 0
                _ = cthr_thread_get_nice(&value)  // a system call, as background work makes
            }
            normal.async(group: done) {
                var value: Int32 = -100
                _ = cthr_thread_get_nice(&value)
                niceValues.withLock { $0.append(value) }
            }
        }
        guard done.wait(timeout: .seconds(30)) else {
            faultLog("pool nice: the tasks did not finish\n")
            return 2
        }
        _ = poolTestShutDown(pool)
        let values = niceValues.withLock { $0 }
        guard values.count == 50, values.allSatisfy({ $0 == start }) else {
            faultLog("pool nice: default tasks ran at \(Set(values)), the process at \(start)\n")
            return 3
        }
        return 0
    }
}
