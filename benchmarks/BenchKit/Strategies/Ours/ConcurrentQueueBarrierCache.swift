// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import Threading

/// Ours: the cache on Threading's `ConcurrentQueue`: reads `sync`, writes `async` barriers.
///
/// `@unchecked Sendable`: reads run concurrently with each other only; a barrier item runs alone on `queue`.
public final class ConcurrentQueueBarrierCache<Shape: CacheShape>: CacheStrategy, @unchecked Sendable {
    public static var name: String { "ConcurrentQueue+barrier" }
    public static var id: String { "concurrentqueue-barrier" }
    public static var kind: StrategyKind { .ours }
    public static var summary: String {
        "Threading ConcurrentQueue, queue.sync reads, queue.async(flags: .barrier) writes"
    }

    private let queue = ConcurrentQueue(label: "bench.cache.concurrent-barrier")
    private let storage: DictionaryCell<Shape>

    public init(keyCount: Int) { storage = DictionaryCell<Shape>(keyCount: keyCount) }

    deinit { storage.destroy() }

    @inline(__always)
    public func read(_ key: Shape.Key) -> Int? { queue.sync { storage.get(key) } }

    @inline(__always)
    public func write(_ key: Shape.Key, _ value: Shape.Value) {
        queue.async(flags: .barrier) { self.storage.set(key, value) }
    }

    public func quiesce() { queue.sync(flags: .barrier) {} }
}
