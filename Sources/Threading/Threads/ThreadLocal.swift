// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import CThreading

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A value per thread: each thread that reads it gets its own, created on first use from a default.
///
/// Built on a pthread key, with a small per-thread cache in front of it: a read of a value this thread has already used
/// is one load from the thread's own static TLS, with no call into libc. Unlike a bare key, every value is released
/// exactly once: when its thread exits, when it is replaced, and when the `ThreadLocal` itself is dropped while threads
/// still hold values (`pthread_key_delete` alone leaks those). Values released by a drop are released on the dropping
/// thread.
///
/// ```swift
/// let scratch = try ThreadLocal { [UInt8](repeating: 0, count: 4096) }
/// scratch.withValue { buffer in buffer[0] = 1 }  // this thread's buffer only
/// ```
///
/// A reference type and `Sendable` for any `Value`: a thread only ever reaches its own value; the one cross-thread
/// step is releasing the values of other threads when the `ThreadLocal` is dropped, after which nobody can reach
/// them.
public final class ThreadLocal<Value>: @unchecked Sendable {
    @usableFromInline
    let key: pthread_key_t
    /// This variable's id in the per-thread cache (`cthr_tsd_cache`): unique for the life of the process.
    @usableFromInline
    let cacheID = cthr_tsd_cache_id()
    let registry = ThreadLocalRegistry()
    @usableFromInline
    let makeDefault: @Sendable () -> Value

    /// Creates a thread-local value whose per-thread default is made by `makeDefault` on first access.
    ///
    /// - Parameter makeDefault: Makes a thread's initial value; runs on that thread, at most once per thread
    ///   (again after ``removeValue()``).
    /// - Throws: ``ThreadingError/tryAgain`` when the process ran out of thread-specific data keys
    ///   (`PTHREAD_KEYS_MAX`, 1024 on Linux).
    ///
    /// The corresponding C function is `pthread_key_create`.
    public init(_ makeDefault: @escaping @Sendable () -> Value) throws(ThreadingError) {
        _ = threadLocalRecordKey  // created before any value exists
        var key = pthread_key_t()
        try ThreadingError.check(cthr_tsd_create(&key, nil), "pthread_key_create")
        self.key = key
        self.makeDefault = makeDefault
    }

    deinit {
        var released: [ThreadLocalCell] = []
        threadLocalLock.withLock {
            for cell in registry.cells.values {
                cell.registry = nil
                released.append(cell)
            }
            registry.cells.removeAll()
            _ = cthr_tsd_delete(key)
        }
        for cell in released { cell.clear() }
    }

    /// The calling thread's value (created from the default on first access); setting it releases the old value.
    ///
    /// - Complexity: A value this thread has read or set before is read with one load from the thread's cache,
    ///   inlined into the caller (a `pthread_getspecific` when another live `ThreadLocal` took the cache slot).
    ///
    /// The corresponding C functions are `pthread_getspecific` and `pthread_setspecific`.
    @inlinable
    public var value: Value {
        get {
            if let pointer = cthr_tsd_cache_get(cacheID),
                let value = Unmanaged<ThreadLocalTypedCell<Value>>.fromOpaque(pointer).takeUnretainedValue().value
            {
                return value
            }
            return makeValue()
        }
        set {
            setValue(newValue)
        }
    }

    @usableFromInline
    func setValue(_ newValue: Value) {
        currentCell().value = newValue
    }

    /// The first read of ``value`` on this thread (or the first after ``removeValue()``): registers the cell if
    /// needed and stores the default.
    @usableFromInline
    func makeValue() -> Value {
        let cell = currentCell()
        if let value = cell.value { return value }
        let value = makeDefault()
        cell.value = value
        return value
    }

    /// Runs `body` with in-place access to the calling thread's value (created from the default if needed).
    ///
    /// - Parameter body: Reads or changes this thread's value.
    /// - Returns: What `body` returns.
    /// - Throws: What `body` throws.
    public func withValue<Result, Failure: Error>(
        _ body: (inout Value) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        let cell = currentCell()
        if cell.value == nil { cell.value = makeDefault() }
        return try body(&cell.value!)
    }

    /// Whether the calling thread currently holds a value (without creating one).
    ///
    /// False on a thread that never read nor set the value, and after ``removeValue()``: this is the "unset" state
    /// that a bare `pthread_getspecific` reports as `NULL`. Reading ``value`` or calling ``withValue(_:)`` creates
    /// the default and makes it true.
    public var hasValue: Bool {
        valueIfSet != nil
    }

    /// The calling thread's value if it holds one, or `nil`, without creating the default.
    ///
    /// Use it to ask "has this thread set it?" and get the value in one step; unlike ``value`` it never runs the
    /// default maker. (When `Value` is itself optional, a thread that stored `nil` gets `.some(nil)`.)
    ///
    /// The corresponding C function is `pthread_getspecific`.
    public var valueIfSet: Value? {
        guard let pointer = cthr_tsd_get(key) else { return nil }
        return Unmanaged<ThreadLocalTypedCell<Value>>.fromOpaque(pointer).takeUnretainedValue().value
    }

    /// Releases the calling thread's value now; the next access makes a new one from the default.
    public func removeValue() {
        guard let pointer = cthr_tsd_get(key) else { return }
        Unmanaged<ThreadLocalTypedCell<Value>>.fromOpaque(pointer).takeUnretainedValue().value = nil
    }

    /// The calling thread's cell, registered on first use.
    private func currentCell() -> ThreadLocalTypedCell<Value> {
        if let pointer = cthr_tsd_get(key) {
            cthr_tsd_cache_set(cacheID, pointer)
            return Unmanaged<ThreadLocalTypedCell<Value>>.fromOpaque(pointer).takeUnretainedValue()
        }
        let cell = ThreadLocalTypedCell<Value>(key: key)
        threadLocalLock.withLock {
            let record = currentThreadLocalRecord()
            record.cells.removeAll { $0.registry == nil }  // forget cells of dropped ThreadLocals
            record.cells.append(cell)
            cell.registry = registry
            registry.cells[ObjectIdentifier(cell)] = cell
        }
        let pointer = Unmanaged.passUnretained(cell).toOpaque()
        let code = cthr_tsd_set(key, pointer)
        require(code == 0, "ThreadLocal: pthread_setspecific failed with \(errnoName(code))")
        cthr_tsd_cache_set(cacheID, pointer)
        return cell
    }
}
