// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import Synchronization

/// Peer: the cache inside the standard library's `Synchronization.Mutex`.
///
/// `Sendable` without `@unchecked`: the only state is the `Mutex`, which is `Sendable`.
public final class SynchronizationMutexCache<Shape: CacheShape>: CacheStrategy, Sendable {
    public static var name: String { "Synchronization.Mutex" }
    public static var id: String { "sync-mutex" }
    public static var kind: StrategyKind { .peer }
    public static var summary: String { "Swift standard library Mutex<[Key: Value]> (withLock per read and write)" }

    private let state: Mutex<[Shape.Key: Shape.Value]>

    public init(keyCount: Int) { state = Mutex(Shape.prefilled(keyCount: keyCount)) }

    @inline(__always)
    public func read(_ key: Shape.Key) -> Int? { state.withLock { $0.token(key, Shape.self) } }

    @inline(__always)
    public func write(_ key: Shape.Key, _ value: Shape.Value) { state.withLock { $0[key] = value } }
}
