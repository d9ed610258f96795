// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import Threading

/// Ours: the whole cache as one `RCUValue<[Key: Value]>`: lock-free reads, writers copy the dictionary and publish.
///
/// `Sendable`: the only state is the `RCUValue`, which is `Sendable`.
public final class RCUValueCache<Shape: CacheShape>: CacheStrategy, Sendable {
    public static var name: String { "RCUValue" }
    public static var id: String { "rcuvalue" }
    public static var kind: StrategyKind { .ours }
    public static var summary: String {
        "Threading RCUValue<[Key: Value]>: RCU read section per read, copy-update per write"
    }

    private let value: RCUValue<[Shape.Key: Shape.Value]>

    public init(keyCount: Int) { value = RCUValue(Shape.prefilled(keyCount: keyCount)) }

    @inline(__always)
    public func read(_ key: Shape.Key) -> Int? { value.read { $0.token(key, Shape.self) } }

    @inline(__always)
    public func write(_ key: Shape.Key, _ value: Shape.Value) {
        self.value.update { old in
            var new = old
            new[key] = value
            return new
        }
    }

    /// Waits for the deferred releases of replaced dictionaries, so their cost counts in this run.
    public func quiesce() { RCU.barrier() }
}

/// Ours: the cache as an `RCUMap<Key, Value>`: lock-free reads (the value borrowed in the read section) and per-key
/// writes. `RCUMap<Int, Int>` uses the flat RCU table; `RCUMap<String, CachedPage>` the chained hash table.
///
/// `Sendable`: the only state is the `RCUMap`, which is `Sendable`.
public final class RCUMapCache<Shape: CacheShape>: CacheStrategy, Sendable {
    public static var name: String { "RCUMap" }
    public static var id: String { "rcumap" }
    public static var kind: StrategyKind { .ours }
    public static var summary: String {
        "Threading RCUMap<Key, Value> (flat table for Int keys and values): RCU reads, per-key writes"
    }

    private let map: RCUMap<Shape.Key, Shape.Value>

    public init(keyCount: Int) {
        map = RCUMap(minimumCapacity: keyCount)
        for (index, key) in Shape.makeKeys(keyCount).enumerated() {
            map.set(Shape.makeValue(index), forKey: key)
        }
    }

    @inline(__always)
    public func read(_ key: Shape.Key) -> Int? { map.withValue(forKey: key) { Shape.token($0) } }

    @inline(__always)
    public func write(_ key: Shape.Key, _ value: Shape.Value) { map.set(value, forKey: key) }

    /// Waits for the deferred releases of replaced entries, so their cost counts in this run.
    public func quiesce() { RCU.barrier() }
}
