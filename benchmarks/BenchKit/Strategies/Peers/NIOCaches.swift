// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import NIOConcurrencyHelpers

/// Peer: the cache guarded by swift-nio's `NIOLock`.
///
/// `@unchecked Sendable`: `storage` is only touched while `lock` is held.
public final class NIOLockCache: CacheStrategy, @unchecked Sendable {
    public static let name = "NIOLock"
    public static let id = "nio-lock"
    public static let kind = StrategyKind.peer
    public static let summary = "swift-nio NIOLock around a [Int: Int] (withLock per read and write)"

    private let lock = NIOLock()
    private let storage: DictionaryCell

    public init(keyCount: Int) { storage = DictionaryCell(keyCount: keyCount) }

    deinit { storage.destroy() }

    @inline(__always)
    public func read(_ key: Int) -> Int? { lock.withLock { storage.get(key) } }

    @inline(__always)
    public func write(_ key: Int, _ value: Int) { lock.withLock { storage.set(key, value) } }
}

/// Peer: the cache inside swift-nio's `NIOLockedValueBox`.
///
/// `Sendable`: the only state is the box, which is `Sendable` for a `Sendable` value.
public final class NIOLockedValueBoxCache: CacheStrategy, Sendable {
    public static let name = "NIOLockedValueBox"
    public static let id = "nio-locked-value-box"
    public static let kind = StrategyKind.peer
    public static let summary = "swift-nio NIOLockedValueBox<[Int: Int]> (withLockedValue per read and write)"

    private let box: NIOLockedValueBox<[Int: Int]>

    public init(keyCount: Int) { box = NIOLockedValueBox(prefilledCache(keyCount: keyCount)) }

    @inline(__always)
    public func read(_ key: Int) -> Int? { box.withLockedValue { $0[key] } }

    @inline(__always)
    public func write(_ key: Int, _ value: Int) { box.withLockedValue { $0[key] = value } }
}
