// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import NIOConcurrencyHelpers

/// Peer: the cache guarded by swift-nio's `NIOLock`.
///
/// `@unchecked Sendable`: `storage` is only touched while `lock` is held.
public final class NIOLockCache<Shape: CacheShape>: CacheStrategy, @unchecked Sendable {
    public static var name: String { "NIOLock" }
    public static var id: String { "nio-lock" }
    public static var kind: StrategyKind { .peer }
    public static var summary: String { "swift-nio NIOLock around a [Key: Value] (withLock per read and write)" }

    private let lock = NIOLock()
    private let storage: DictionaryCell<Shape>

    public init(keyCount: Int) { storage = DictionaryCell<Shape>(keyCount: keyCount) }

    deinit { storage.destroy() }

    @inline(__always)
    public func read(_ key: Shape.Key) -> Int? { lock.withLock { storage.get(key) } }

    @inline(__always)
    public func write(_ key: Shape.Key, _ value: Shape.Value) { lock.withLock { storage.set(key, value) } }
}

/// Peer: the cache inside swift-nio's `NIOLockedValueBox`.
///
/// `Sendable`: the only state is the box, which is `Sendable` for a `Sendable` value.
public final class NIOLockedValueBoxCache<Shape: CacheShape>: CacheStrategy, Sendable {
    public static var name: String { "NIOLockedValueBox" }
    public static var id: String { "nio-locked-value-box" }
    public static var kind: StrategyKind { .peer }
    public static var summary: String {
        "swift-nio NIOLockedValueBox<[Key: Value]> (withLockedValue per read and write)"
    }

    private let box: NIOLockedValueBox<[Shape.Key: Shape.Value]>

    public init(keyCount: Int) { box = NIOLockedValueBox(Shape.prefilled(keyCount: keyCount)) }

    @inline(__always)
    public func read(_ key: Shape.Key) -> Int? { box.withLockedValue { $0.token(key, Shape.self) } }

    @inline(__always)
    public func write(_ key: Shape.Key, _ value: Shape.Value) { box.withLockedValue { $0[key] = value } }
}
