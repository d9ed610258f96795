// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

/// Who a strategy belongs to: the library under test, a peer a user would pick instead, or a reference point.
public enum StrategyKind: String, Codable, Sendable, CaseIterable {
    /// A strategy built on the public `Threading` API.
    case ours
    /// A strategy built on what a server-Swift engineer would otherwise use (Foundation, Dispatch, NIO, ...).
    case peer
    /// A reference point that is not a real choice: the raw compare-exchange floor, the unsynchronized run.
    case reference
}

/// A shared cache of integer keys to integer values, guarded by one synchronization strategy.
///
/// The workload creates one instance per run, prefilled with `key -> key` for every key in `0..<keyCount`, and calls
/// `read` and `write` from many threads at once. A conforming type is one small class: its storage and its guard.
/// Implementations must be safe to call from any thread (that is the point), hence `Sendable`.
public protocol CacheStrategy: AnyObject, Sendable {
    /// Display name in tables and charts, e.g. `NSLock`.
    static var name: String { get }
    /// Command-line identifier, e.g. `nslock`.
    static var id: String { get }
    /// Ours, peer or reference.
    static var kind: StrategyKind { get }
    /// One line for `--list`: what is measured.
    static var summary: String { get }

    /// Creates the cache with `key -> key` for every key in `0..<keyCount`.
    init(keyCount: Int)

    /// Returns the value for `key`, or nil when it is missing.
    func read(_ key: Int) -> Int?

    /// Stores `value` for `key`.
    func write(_ key: Int, _ value: Int)

    /// Waits until every write issued so far is applied (asynchronous strategies); the default does nothing.
    func quiesce()
}

extension CacheStrategy {
    /// Nothing to wait for.
    public func quiesce() {}
}

/// Builds the prefilled dictionary every dictionary-backed strategy starts from.
@inline(never)
public func prefilledCache(keyCount: Int) -> [Int: Int] {
    var storage = [Int: Int](minimumCapacity: keyCount)
    for key in 0..<keyCount {
        storage[key] = key
    }
    return storage
}

/// The cache's dictionary in a fixed heap cell, for strategies that guard it with an external lock.
///
/// Reached through a pointer, so every lock-based strategy runs the same critical section (`storage[key]`) without
/// the dynamic exclusivity checks Swift adds to a class's `var` properties, which would otherwise be a large, equal
/// share of every measurement. Not thread-safe by itself: the owning strategy provides the synchronization and calls
/// ``destroy()`` from its `deinit`.
public struct DictionaryCell: @unchecked Sendable {
    private let pointer: UnsafeMutablePointer<[Int: Int]>

    /// Allocates the cell, prefilled with `key -> key` for every key in `0..<keyCount`.
    public init(keyCount: Int) {
        pointer = .allocate(capacity: 1)
        pointer.initialize(to: prefilledCache(keyCount: keyCount))
    }

    /// The value for `key`.
    @inline(__always)
    public func get(_ key: Int) -> Int? { pointer.pointee[key] }

    /// Stores `value` for `key`.
    @inline(__always)
    public func set(_ key: Int, _ value: Int) { pointer.pointee[key] = value }

    /// Frees the cell; call once, when no thread can use it any more.
    public func destroy() {
        pointer.deinitialize(count: 1)
        pointer.deallocate()
    }
}
