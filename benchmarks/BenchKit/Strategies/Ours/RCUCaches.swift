// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import Threading

/// Ours: the whole cache as one `RCUValue<[Int: Int]>`: lock-free reads, writers copy the dictionary and publish.
///
/// `Sendable`: the only state is the `RCUValue`, which is `Sendable`.
public final class RCUValueCache: CacheStrategy, Sendable {
    public static let name = "RCUValue"
    public static let id = "rcuvalue"
    public static let kind = StrategyKind.ours
    public static let summary = "Threading RCUValue<[Int: Int]>: RCU read section per read, copy-update per write"

    private let value: RCUValue<[Int: Int]>

    public init(keyCount: Int) { value = RCUValue(prefilledCache(keyCount: keyCount)) }

    @inline(__always)
    public func read(_ key: Int) -> Int? { value.read { $0[key] } }

    @inline(__always)
    public func write(_ key: Int, _ value: Int) {
        self.value.update { old in
            var new = old
            new[key] = value
            return new
        }
    }

    /// Waits for the deferred releases of replaced dictionaries, so their cost counts in this run.
    public func quiesce() { RCU.barrier() }
}

/// Ours: the cache as an `RCUMap<Int, Int>` (integer keys and values: the flat RCU table): lock-free reads and
/// per-key writes.
///
/// `Sendable`: the only state is the `RCUMap`, which is `Sendable`.
public final class RCUMapCache: CacheStrategy, Sendable {
    public static let name = "RCUMap"
    public static let id = "rcumap"
    public static let kind = StrategyKind.ours
    public static let summary = "Threading RCUMap<Int, Int> (flat RCU table): RCU reads, per-key writes"

    private let map: RCUMap<Int, Int>

    public init(keyCount: Int) {
        map = RCUMap(minimumCapacity: keyCount)
        for key in 0..<keyCount {
            map.set(key, forKey: key)
        }
    }

    @inline(__always)
    public func read(_ key: Int) -> Int? { map.get(key) }

    @inline(__always)
    public func write(_ key: Int, _ value: Int) { map.set(value, forKey: key) }

    /// Waits for the deferred releases of replaced entries, so their cost counts in this run.
    public func quiesce() { RCU.barrier() }
}
