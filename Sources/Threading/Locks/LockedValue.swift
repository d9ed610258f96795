// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

/// A value that is only reachable while holding its lock (NIO's `NIOLockedValueBox`).
///
/// The value lives in the same allocation as its ``MutexLock``'s word, right after it (so a small value shares the
/// lock word's cache line and a contended acquisition moves one line between cores); `LockedValue` is a struct
/// holding a reference to that box, so copies share the value (reference semantics). The only way in is
/// ``withLock(_:)``, so the value cannot be touched unlocked.
///
/// ```swift
/// let counts = LockedValue([String: Int]())
/// counts.withLock { $0["hits", default: 0] += 1 }
/// ```
///
/// `Sendable` when `Value` is: the value moves between threads, and every access holds the lock.
public struct LockedValue<Value> {
    @usableFromInline
    final class Storage: @unchecked Sendable {
        @usableFromInline let lock: MutexLock
        /// The value, in the lock's allocation (``MutexLock/init(name:payload:)``). Only touched while holding
        /// `lock`; reached through a pointer, so no run-time exclusivity check is paid on every `withLock`.
        @usableFromInline let value: UnsafeMutablePointer<Value>

        init(value: Value, name: String?) {
            lock = MutexLock(name: name, payload: Value.self)
            self.value = lock.payload(Value.self)
            self.value.initialize(to: value)
        }

        deinit {
            value.deinitialize(count: 1)  // before `lock` (and the allocation with it) goes
        }
    }

    @usableFromInline
    let storage: Storage

    /// Wraps `value` with a new lock.
    ///
    /// - Parameters:
    ///   - value: The initial value.
    ///   - name: A name for the lock's diagnostics and statistics.
    public init(_ value: Value, name: String? = nil) {
        storage = Storage(value: value, name: name)
    }

    /// Runs `body` with exclusive access to the value.
    ///
    /// - Parameter body: Reads or changes the value; do not let the `inout` reference escape.
    /// - Returns: What `body` returns.
    /// - Throws: What `body` throws (the lock is released either way; changes made before the throw stay).
    @inlinable
    public func withLock<Result, Failure: Error>(
        _ body: (inout Value) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        storage.lock.lock()
        defer { storage.lock.unlock() }
        return try body(&storage.value.pointee)
    }

    /// Runs `body` with exclusive access if the lock is free now.
    ///
    /// - Parameter body: Reads or changes the value.
    /// - Returns: What `body` returns, or `nil` when the lock was held.
    /// - Throws: What `body` throws.
    @inlinable
    public func withLockIfAvailable<Result, Failure: Error>(
        _ body: (inout Value) throws(Failure) -> Result
    ) throws(Failure) -> Result? {
        guard storage.lock.tryLock() else { return nil }
        defer { storage.lock.unlock() }
        return try body(&storage.value.pointee)
    }

    /// Whether the lock counts contention statistics (see ``MutexLock/statisticsEnabled``).
    public var statisticsEnabled: Bool {
        get { storage.lock.statisticsEnabled }
        nonmutating set { storage.lock.statisticsEnabled = newValue }
    }

    /// The lock's contention statistics.
    public var statistics: LockStatistics { storage.lock.statistics }
}

extension LockedValue: Sendable where Value: Sendable {}
