// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import Synchronization

/// Peer: the cache inside the standard library's `Synchronization.Mutex`.
///
/// `Sendable` without `@unchecked`: the only state is the `Mutex`, which is `Sendable`.
public final class SynchronizationMutexCache: CacheStrategy, Sendable {
    public static let name = "Synchronization.Mutex"
    public static let id = "sync-mutex"
    public static let kind = StrategyKind.peer
    public static let summary = "Swift standard library Mutex<[Int: Int]> (withLock per read and write)"

    private let state: Mutex<[Int: Int]>

    public init(keyCount: Int) { state = Mutex(prefilledCache(keyCount: keyCount)) }

    @inline(__always)
    public func read(_ key: Int) -> Int? { state.withLock { $0[key] } }

    @inline(__always)
    public func write(_ key: Int, _ value: Int) { state.withLock { $0[key] = value } }
}
