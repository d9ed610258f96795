// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

// YYKit's YYDispatchQueuePool: a fixed set of serial queues per QoS handed out round-robin. Work given the same
// queue stays ordered; different queues run in parallel; the number of queues bounds how many workers the pool's
// work can occupy, instead of one thread per queue.

import Synchronization
import Threading

let queuePoolExample = Example(name: "queue-pool", summary: "a pool of serial queues per QoS, round-robin") {
    print("default pool size: \(QueuePool.defaultCount) (cores + 1, clamped to 2...32)")
    let pool = QueuePool(label: "images", qos: .utility, count: 3)
    let log = Mutex<[String: [Int]]>([:])
    let group = WorkGroup()
    for task in 1...9 {
        let queue = pool.next()
        queue.async(group: group) {
            log.withLock { $0[queue.label, default: []].append(task) }
        }
    }
    _ = group.wait(timeout: .seconds(10))
    for queue in pool.queues {
        let tasks = log.withLock { $0[queue.label] ?? [] }
        print("\(queue.label) (\(queue.qos)): tasks \(tasks)")
    }
    let shared = QueuePool.shared(for: .background)
    print("shared background pool: \(shared.queues.count) queues, first \(shared.queues[0].label)")
}
