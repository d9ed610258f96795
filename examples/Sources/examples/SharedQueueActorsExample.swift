// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

// Chatty actors: two actors that call each other all the time share one serial queue as their executor. The Swift
// runtime runs a call between actors of the same executor on the caller's thread, at once (no job is queued, no
// thread is woken), so each round trip costs about a function call; the two actors never run in parallel, which is
// the price. The same calls between actors on two queues hop through the pool twice per round trip.

import Threading

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The stock of an order desk: isolated to whatever queue it is given.
private actor Inventory {
    private let queue: SerialQueue
    nonisolated var unownedExecutor: UnownedSerialExecutor { queue.asUnownedSerialExecutor() }
    private var stock = 1_000_000

    init(queue: SerialQueue) { self.queue = queue }

    /// Takes `count` items; returns what is left.
    func reserve(_ count: Int) -> Int {
        stock -= count
        return stock
    }

    /// Whether this code runs on the queue (always, for an actor on it).
    func runsOnQueue() -> Bool { queue.isCurrent }
}

/// Orders that ask the inventory for every line: the chatty side.
private actor Orders {
    private let queue: SerialQueue
    nonisolated var unownedExecutor: UnownedSerialExecutor { queue.asUnownedSerialExecutor() }
    private let inventory: Inventory
    private var placed = 0

    init(queue: SerialQueue, inventory: Inventory) {
        self.queue = queue
        self.inventory = inventory
    }

    /// Places `count` one-item orders, each a round trip to the inventory; returns the stock left.
    func place(_ count: Int) async -> Int {
        var left = 0
        for _ in 0..<count {
            left = await inventory.reserve(1)
            placed += 1  // back on this actor
        }
        return left
    }
}

/// Runs `count` orders against an inventory, on one queue for both actors or on one queue each; returns the stock
/// left, whether the inventory ran on its queue, and how long the orders took.
private func run(sharing: Bool, count: Int) async -> (left: Int, onQueue: Bool, elapsed: Duration) {
    let inventoryQueue = SerialQueue(label: "desk.inventory")
    let inventory = Inventory(queue: inventoryQueue)
    // Sharing: the orders use the inventory's queue. Each actor still has its own state and its own isolation.
    let orders = Orders(queue: sharing ? inventoryQueue : SerialQueue(label: "desk.orders"), inventory: inventory)
    let clock = ContinuousClock()
    let start = clock.now
    let left = await orders.place(count)
    let elapsed = clock.now - start
    return (left, await inventory.runsOnQueue(), elapsed)
}

let sharedQueueActorsExample = Example(
    name: "shared-queue",
    summary: "chatty actors share one serial queue: calls between them run at once, on the caller's thread"
) {
    let done = Semaphore(value: 0)
    let orders = 20_000
    Task {
        let shared = await run(sharing: true, count: orders)
        let separate = await run(sharing: false, count: orders)
        say("shared queue: \(orders) orders, stock left \(shared.left), on its queue: \(shared.onQueue)")
        say("separate queues: \(orders) orders, stock left \(separate.left), on its queue: \(separate.onQueue)")
        let speedup = separate.elapsed / max(shared.elapsed, .nanoseconds(1))
        say("round trips on one queue were \(Int(speedup.rounded()))x as fast as across two (timing varies)")
        done.signal()
    }
    guard done.wait(timeout: .seconds(60)) else {
        say("shared-queue: the orders did not finish within 60 s")
        exit(1)
    }
}
