// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import CThreading

/// A value that many threads read without any lock and that writers replace as a whole (read-copy-update).
///
/// ``read(_:)`` enters an RCU read section (a few instructions with `membarrier`, see ``RCU/usesMembarrier``), loads
/// the current value's pointer and hands the value to the closure borrowed: no lock, no atomic read-modify-write and
/// no reference-count traffic on the shared object, so readers on different cores never write to a shared cache line.
/// Writers publish a new value with ``update(_:)``, ``store(_:)``, ``exchange(_:)`` or
/// ``compareExchange(expected:desired:)``; the old value is released after a grace period (liburcu's `call_rcu`), never while a reader can still see it.
///
/// ```swift
/// struct Config: Sendable {
///     var limit = 100
/// }
///
/// let config = RCUValue(Config())
/// let limit = config.read { $0.limit }  // readers: no lock
/// config.update { old in                 // writers: copy, modify, publish
///     var new = old
///     new.limit = limit / 2
///     return new
/// }
/// ```
///
/// Threads are registered with liburcu automatically on first use and unregistered when they exit. The rules of
/// read sections (do not block in them, do not call ``RCU/synchronize()`` in them) are in <doc:RCURules>.
///
/// `RCUValue` is a reference type: copies of a reference share the value. It is `Sendable` because every access to
/// the shared pointer goes through RCU (readers) or the writer lock plus an atomic exchange (writers), and `Value`
/// itself is `Sendable`, since the same value is handed to many threads at once.
public final class RCUValue<Value: Sendable>: @unchecked Sendable {
    /// The RCU-protected pointer to the current ``RCUBox`` (one retain owned by the cell) and the writer lock.
    @usableFromInline
    let cell: OpaquePointer

    /// Creates an RCU value holding `initial`.
    ///
    /// - Parameter initial: The first value readers see.
    public init(_ initial: Value) {
        _ = RCU.liburcuChecked
        let box = Unmanaged.passRetained(RCUBox(initial)).toOpaque()
        var cell: OpaquePointer?
        let code = cthr_rcu_cell_create(box, &cell)
        require(code == 0, "RCUValue: \(ThreadingError(code: code, operation: "cthr_rcu_cell_create"))")
        self.cell = cell!
    }

    deinit {
        // No reader can be inside `read` on this instance: each one holds a reference to it while it reads.
        if let last = cthr_rcu_cell_destroy(cell) {
            Unmanaged<RCUBox<Value>>.fromOpaque(last).release()
        }
    }

    /// Calls `body` with the current value inside an RCU read section and returns its result.
    ///
    /// The value is borrowed from the shared object without retaining it; it stays valid for the whole call even if
    /// a writer replaces it meanwhile (the old value is reclaimed only after this read section ends). Copying it out
    /// (returning it) is fine: the copy is yours.
    ///
    /// Rules for `body` (see <doc:RCURules>): keep it short and non-blocking, since a long read section delays the
    /// reclamation of every old value; never call ``RCU/synchronize()`` or ``RCU/barrier()`` in it (they trap there).
    /// Nested reads and updates are allowed.
    ///
    /// - Parameter body: Reads the value.
    /// - Returns: What `body` returns.
    /// - Throws: What `body` throws.
    /// - Complexity: O(1) plus `body`; no lock, no allocation, no atomic read-modify-write.
    @inlinable
    public func read<R, E: Error>(_ body: (Value) throws(E) -> R) throws(E) -> R {
        cthr_rcu_read_lock()
        defer { cthr_rcu_read_unlock() }
        let raw = cthr_rcu_cell_get(cell).unsafelyUnwrapped
        // `_withUnsafeGuaranteedRef`, the one underscored standard-library call here, and on purpose: the box is kept
        // alive by the read section, so the reference needs no retain. `takeUnretainedValue()` would add a retain and
        // a release, two atomic read-modify-writes on the shared box's reference count per read: the cache line every
        // reader on every core then fights over, which is what RCU exists to avoid (the read path does no atomic
        // read-modify-write, see `Complexity`). Its closure only rethrows, so the typed error goes through a Result.
        let result = Unmanaged<RCUBox<Value>>.fromOpaque(raw)._withUnsafeGuaranteedRef { box in
            Result { () throws(E) -> R in try body(box.value) }
        }
        return try result.get()
    }

    /// Returns a copy of the current value.
    ///
    /// - Returns: The current value.
    @inlinable
    public func load() -> Value {
        read { $0 }
    }

    /// Replaces the value with the result of `transform(old)`, atomically with respect to other writers.
    ///
    /// Writers of one `RCUValue` are serialised by its writer lock (the library's futex lock, error-checking), so `transform` sees the
    /// latest value and runs exactly once. Readers are never blocked: until the new value is published they see the
    /// old one. If `transform` throws, nothing changes.
    ///
    /// - Parameter transform: Computes the new value from the current one. It runs outside any read section, so it
    ///   may block, but it must not write to this same `RCUValue` (that traps: the writer lock is not recursive).
    /// - Returns: The value published.
    /// - Throws: What `transform` throws.
    @discardableResult
    @inlinable
    public func update<E: Error>(_ transform: (Value) throws(E) -> Value) throws(E) -> Value {
        lockWriter("update")
        defer { unlockWriter() }
        let old = load()
        let new = try transform(old)
        publish(new)
        return new
    }

    /// Publishes `newValue` and returns the value it replaced.
    ///
    /// - Parameter newValue: The value readers see from now on.
    /// - Returns: The previous value (a copy; the shared old object is reclaimed after a grace period).
    @discardableResult
    @inlinable
    public func exchange(_ newValue: Value) -> Value {
        lockWriter("exchange")
        defer { unlockWriter() }
        return publish(newValue)
    }

    /// Publishes `newValue`; the previous value is reclaimed after a grace period.
    ///
    /// - Parameter newValue: The value readers see from now on.
    @inlinable
    public func store(_ newValue: Value) {
        exchange(newValue)
    }

    /// Publishes `desired` if the current value equals `expected`, atomically with respect to other writers.
    ///
    /// The compare-and-exchange of `ManagedAtomic.compareExchange(expected:desired:ordering:)` and liburcu's
    /// `rcu_cmpxchg_pointer`, for a value rather than a pointer: under the writer lock (so no other writer can
    /// change the value between the comparison and the exchange) it compares the current value with `expected`
    /// using `Value`'s `==`, that is value equality, not identity: two equal copies match, and for a class `Value`
    /// its own `==` decides. (To compare a class value by identity, use ``compareExchange(expected:desired:by:)``
    /// with `===`.) Readers are never blocked; the replaced value is reclaimed after a grace period. When the
    /// values differ, nothing is published.
    ///
    /// ```swift
    /// let leader = RCUValue("none")
    /// let (won, previous) = leader.compareExchange(expected: "none", desired: "worker-3")
    /// print(won ? "worker-3 leads" : "\(previous) leads")
    /// ```
    ///
    /// - Parameters:
    ///   - expected: The value the caller believes is current.
    ///   - desired: The value to publish when it is.
    /// - Returns: Whether `desired` was published, and the value that was current before the call (equal to
    ///   `expected` when `exchanged` is true).
    /// - Precondition: `==` must not write to this same `RCUValue` (traps: the writer lock is not recursive).
    ///   Not in a read-only forked child (see ``RCU/writersAvailable``): traps.
    @discardableResult
    public func compareExchange(
        expected: Value,
        desired: Value
    ) -> (exchanged: Bool, original: Value) where Value: Equatable {
        compareExchange(expected: expected, desired: desired, by: ==)
    }

    /// Publishes `desired` if `matches(current, expected)` holds, atomically with respect to other writers.
    ///
    /// The general form of ``compareExchange(expected:desired:)``: `matches` decides what "the expected value"
    /// means. Pass `===` to compare class values by identity (the pointer comparison of `rcu_cmpxchg_pointer`).
    ///
    /// ```swift
    /// final class Session: Sendable {
    ///     let generation: Int
    ///     init(generation: Int = 0) { self.generation = generation }
    /// }
    ///
    /// let session = RCUValue(Session())
    /// let seen = session.load()
    /// session.compareExchange(expected: seen, desired: Session(generation: seen.generation + 1), by: ===)
    /// ```
    ///
    /// - Parameters:
    ///   - expected: The value the caller believes is current.
    ///   - desired: The value to publish when `matches` says the current value is the expected one.
    ///   - matches: Called once, with the current value and `expected`, under the writer lock and outside any read
    ///     section; it must not write to this same `RCUValue` (traps).
    /// - Returns: Whether `desired` was published, and the value that was current before the call.
    /// - Precondition: Not in a read-only forked child (see ``RCU/writersAvailable``): traps.
    @discardableResult
    public func compareExchange(
        expected: Value,
        desired: Value,
        by matches: (Value, Value) -> Bool
    ) -> (exchanged: Bool, original: Value) {
        lockWriter("compareExchange")
        defer { unlockWriter() }
        let current = load()
        guard matches(current, expected) else { return (false, current) }
        publish(desired)
        return (true, current)
    }

    /// Waits until no reader can still see a value this `RCUValue` (or any RCU structure) replaced before the call.
    ///
    /// The same as ``RCU/synchronize()``.
    ///
    /// - Precondition: Not inside a read section: it would wait for itself forever, so it traps with the message
    ///   "RCU.synchronize() called inside an RCU read section".
    public func synchronize() {
        RCU.synchronize()
    }

    /// Swaps in a new box holding `newValue` (caller holds the writer lock) and schedules the old box's release.
    @inlinable
    @discardableResult
    func publish(_ newValue: Value) -> Value {
        let box = Unmanaged.passRetained(RCUBox(newValue)).toOpaque()
        let oldRaw = cthr_rcu_cell_exchange(cell, box).unsafelyUnwrapped
        let old = Unmanaged<RCUBox<Value>>.fromOpaque(oldRaw).takeUnretainedValue().value
        rcuRetire(oldRaw)
        return old
    }

    @usableFromInline
    func lockWriter(_ operation: StaticString) {
        let code = cthr_rcu_cell_lock(cell)
        rcuRefuseInReadOnlyChild(code, "RCUValue.\(operation)")
        require(
            code == 0,
            "RCUValue.\(operation): writer lock failed (cthr_rcu_cell_lock returned \(ThreadingError.cName(of: code))); "
                + "a transform must not write to the RCUValue it is updating"
        )
    }

    @usableFromInline
    func unlockWriter() {
        let code = cthr_rcu_cell_unlock(cell)
        require(code == 0, "RCUValue: cthr_rcu_cell_unlock returned \(ThreadingError.cName(of: code))")
    }
}
