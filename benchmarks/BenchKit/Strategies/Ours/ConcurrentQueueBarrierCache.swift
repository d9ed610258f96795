// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import Threading

/// Ours: the cache on Threading's `ConcurrentQueue`: reads `sync`, writes `async` barriers.
///
/// `@unchecked Sendable`: reads run concurrently with each other only; a barrier item runs alone on `queue`.
public final class ConcurrentQueueBarrierCache: CacheStrategy, @unchecked Sendable {
    public static let name = "ConcurrentQueue+barrier"
    public static let id = "concurrentqueue-barrier"
    public static let kind = StrategyKind.ours
    public static let summary = "Threading ConcurrentQueue, queue.sync reads, queue.async(flags: .barrier) writes"

    private let queue = ConcurrentQueue(label: "bench.cache.concurrent-barrier")
    private let storage: DictionaryCell

    public init(keyCount: Int) { storage = DictionaryCell(keyCount: keyCount) }

    deinit { storage.destroy() }

    @inline(__always)
    public func read(_ key: Int) -> Int? { queue.sync { storage.get(key) } }

    @inline(__always)
    public func write(_ key: Int, _ value: Int) { queue.async(flags: .barrier) { self.storage.set(key, value) } }

    public func quiesce() { queue.sync(flags: .barrier) {} }
}
