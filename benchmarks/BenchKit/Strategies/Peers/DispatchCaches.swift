// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import Dispatch

/// Peer: the cache guarded by a `DispatchSemaphore` of value 1.
///
/// `@unchecked Sendable`: `storage` is only touched between `wait()` and `signal()`.
public final class DispatchSemaphoreCache<Shape: CacheShape>: CacheStrategy, @unchecked Sendable {
    public static var name: String { "DispatchSemaphore" }
    public static var id: String { "dispatch-semaphore" }
    public static var kind: StrategyKind { .peer }
    public static var summary: String { "DispatchSemaphore(value: 1) as a lock around a [Key: Value]" }

    private let semaphore = DispatchSemaphore(value: 1)
    private let storage: DictionaryCell<Shape>

    public init(keyCount: Int) { storage = DictionaryCell<Shape>(keyCount: keyCount) }

    deinit { storage.destroy() }

    @inline(__always)
    public func read(_ key: Shape.Key) -> Int? {
        semaphore.wait()
        defer { semaphore.signal() }
        return storage.get(key)
    }

    @inline(__always)
    public func write(_ key: Shape.Key, _ value: Shape.Value) {
        semaphore.wait()
        defer { semaphore.signal() }
        storage.set(key, value)
    }
}

/// Peer: the cache confined to a serial `DispatchQueue`, every access through `sync` (the usual fix).
///
/// `@unchecked Sendable`: `storage` is only touched by blocks running on `queue`, which runs one at a time.
public final class DispatchSerialSyncCache<Shape: CacheShape>: CacheStrategy, @unchecked Sendable {
    public static var name: String { "DispatchQueue serial sync" }
    public static var id: String { "dispatch-serial-sync" }
    public static var kind: StrategyKind { .peer }
    public static var summary: String { "serial DispatchQueue, queue.sync for reads and writes" }

    private let queue = DispatchQueue(label: "bench.cache.serial-sync")
    private let storage: DictionaryCell<Shape>

    public init(keyCount: Int) { storage = DictionaryCell<Shape>(keyCount: keyCount) }

    deinit { storage.destroy() }

    @inline(__always)
    public func read(_ key: Shape.Key) -> Int? { queue.sync { storage.get(key) } }

    @inline(__always)
    public func write(_ key: Shape.Key, _ value: Shape.Value) { queue.sync { storage.set(key, value) } }
}

/// Peer: the cache confined to a serial `DispatchQueue`, writes `async`, reads `sync`.
///
/// `@unchecked Sendable`: `storage` is only touched by blocks running on `queue`, which runs one at a time.
public final class DispatchSerialAsyncWriteCache<Shape: CacheShape>: CacheStrategy, @unchecked Sendable {
    public static var name: String { "DispatchQueue async-write" }
    public static var id: String { "dispatch-serial-async-write" }
    public static var kind: StrategyKind { .peer }
    public static var summary: String { "serial DispatchQueue, queue.async for writes and queue.sync for reads" }

    private let queue = DispatchQueue(label: "bench.cache.serial-async-write")
    private let storage: DictionaryCell<Shape>

    public init(keyCount: Int) { storage = DictionaryCell<Shape>(keyCount: keyCount) }

    deinit { storage.destroy() }

    @inline(__always)
    public func read(_ key: Shape.Key) -> Int? { queue.sync { storage.get(key) } }

    @inline(__always)
    public func write(_ key: Shape.Key, _ value: Shape.Value) { queue.async { self.storage.set(key, value) } }

    public func quiesce() { queue.sync {} }
}

/// Peer: the cache on a concurrent `DispatchQueue`: reads `sync`, writes `async(flags: .barrier)`.
///
/// `@unchecked Sendable`: reads run concurrently with each other only; a barrier block runs alone on `queue`.
public final class DispatchConcurrentBarrierCache<Shape: CacheShape>: CacheStrategy, @unchecked Sendable {
    public static var name: String { "DispatchQueue concurrent+barrier" }
    public static var id: String { "dispatch-concurrent-barrier" }
    public static var kind: StrategyKind { .peer }
    public static var summary: String {
        "concurrent DispatchQueue, queue.sync reads, queue.async(flags: .barrier) writes"
    }

    private let queue = DispatchQueue(label: "bench.cache.concurrent-barrier", attributes: .concurrent)
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
