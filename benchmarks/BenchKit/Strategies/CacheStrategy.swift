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

/// A shared cache of keys to values of one ``CacheShape``, guarded by one synchronization strategy.
///
/// The workload creates one instance per run, prefilled with a value of token k for the key of index k, and calls
/// `read` and `write` from many threads at once. A conforming type is one small generic class: its storage and its
/// guard. Implementations must be safe to call from any thread (that is the point), hence `Sendable`.
public protocol CacheStrategy: AnyObject, Sendable {
    /// The key and value types.
    associatedtype Shape: CacheShape
    /// Display name in tables and charts, e.g. `NSLock`.
    static var name: String { get }
    /// Command-line identifier, e.g. `nslock`.
    static var id: String { get }
    /// Ours, peer or reference.
    static var kind: StrategyKind { get }
    /// One line for `--list`: what is measured.
    static var summary: String { get }

    /// Creates the cache with ``CacheShape/prefilled(keyCount:)``.
    init(keyCount: Int)

    /// Returns the token of the value for `key` (``CacheShape/token(_:)``, read inside the strategy's critical or
    /// read section), or nil when it is missing.
    func read(_ key: Shape.Key) -> Int?

    /// Stores `value` for `key`.
    func write(_ key: Shape.Key, _ value: Shape.Value)

    /// Waits until every write issued so far is applied (asynchronous strategies); the default does nothing.
    func quiesce()
}

extension CacheStrategy {
    /// Nothing to wait for.
    public func quiesce() {}
}

extension Dictionary {
    /// The token of the value for `key` in a dictionary of a ``CacheShape``'s keys and values.
    @inline(__always)
    public func token<Shape: CacheShape>(_ key: Key, _ shape: Shape.Type) -> Int?
    where Key == Shape.Key, Value == Shape.Value {
        self[key].map { Shape.token($0) }
    }
}

/// The cache's dictionary in a fixed heap cell, for strategies that guard it with an external lock.
///
/// Reached through a pointer, so every lock-based strategy runs the same critical section (`storage[key]`) without
/// the dynamic exclusivity checks Swift adds to a class's `var` properties, which would otherwise be a large, equal
/// share of every measurement. Not thread-safe by itself: the owning strategy provides the synchronization and calls
/// ``destroy()`` from its `deinit`.
public struct DictionaryCell<Shape: CacheShape>: @unchecked Sendable {
    private let pointer: UnsafeMutablePointer<[Shape.Key: Shape.Value]>

    /// Allocates the cell, prefilled with ``CacheShape/prefilled(keyCount:)``.
    public init(keyCount: Int) {
        pointer = .allocate(capacity: 1)
        pointer.initialize(to: Shape.prefilled(keyCount: keyCount))
    }

    /// The token of the value for `key`.
    @inline(__always)
    public func get(_ key: Shape.Key) -> Int? { pointer.pointee.token(key, Shape.self) }

    /// Stores `value` for `key`.
    @inline(__always)
    public func set(_ key: Shape.Key, _ value: Shape.Value) { pointer.pointee[key] = value }

    /// Frees the cell; call once, when no thread can use it any more.
    public func destroy() {
        pointer.deinitialize(count: 1)
        pointer.deallocate()
    }
}
