// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import CThreading

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// State guarded by a lock, with waiting until a predicate on the state holds: a lock, a condition and the
/// wake-up logic in one (what `NSConditionLock` does, for any predicate rather than "equals a value").
///
/// Every access goes through `withLock`. A thread that needs the state to satisfy a predicate calls
/// ``withLock(when:_:)``: if the predicate is false it registers itself with its predicate and sleeps. Whenever a
/// `withLock` body returns, the monitor evaluates the registered predicates against the new state (still under the
/// lock) and wakes exactly the waiters whose predicate now holds, after releasing the lock. So there are no lost
/// wake-ups (a change made before a thread waits is seen by its first predicate check), no `signal`/`broadcast`
/// to forget, and no thundering herd.
///
/// ```swift
/// let buffer = Monitor([Int]())
/// // producer: waits while the buffer is full
/// buffer.withLock(when: { $0.count < 10 }) { $0.append(42) }
/// // consumer: waits while it is empty
/// let item = buffer.withLock(when: { !$0.isEmpty }) { $0.removeFirst() }
/// print(item)
/// ```
///
/// The try forms (``withLockIfAvailable(_:)``, ``withLockIfAvailable(when:_:)``, what `NSConditionLock`'s
/// `tryLock()` and `tryLock(whenCondition:)` do) and a zero or negative timeout never wait: not for the predicate,
/// and not for a thread that holds the lock either.
///
/// Predicates run on whichever thread changed the state, while holding the lock: keep them fast and free of side
/// effects. Every `withLock` counts as a change (the monitor does not compare states), which costs nothing when
/// nobody waits.
///
/// A reference type; `Sendable` when `State` is, because the state moves between threads and every access holds
/// the lock.
public final class Monitor<State> {
    /// A registered waiter: its predicate and its own futex condition.
    @usableFromInline
    final class Waiter {
        @usableFromInline let condition = ConditionVariable()
        @usableFromInline var predicate: ((State) -> Bool)?
        @usableFromInline var notified = false

        @usableFromInline init() {}
    }

    @usableFromInline
    let lock: MutexLock

    // Both only touched while holding `lock`, which already gives exclusive access: the run-time exclusivity
    // check would only add cost to every `withLock`.
    @usableFromInline @exclusivity(unchecked)
    var state: State

    @usableFromInline @exclusivity(unchecked)
    var waiters: [Waiter] = []

    // A waiter kept from the last wait that ended, for the next one (no allocation per wait in a hand-off). A late
    // signal for its previous use is a spurious wake-up for the next, which rechecks its predicate.
    @usableFromInline @exclusivity(unchecked)
    var spareWaiter: Waiter?

    /// Creates a monitor around an initial state.
    ///
    /// - Parameters:
    ///   - state: The initial state.
    ///   - name: A name for the lock's diagnostics and statistics.
    public init(_ state: State, name: String? = nil) {
        self.state = state
        self.lock = MutexLock(name: name)
    }

    /// Runs `body` with exclusive access to the state, then wakes the waiters whose predicate now holds.
    ///
    /// - Parameter body: Reads or changes the state.
    /// - Returns: What `body` returns.
    /// - Throws: What `body` throws (changes made before the throw stay, and waiters are still evaluated).
    /// - Complexity: With nobody waiting, the cost of `body` plus one ``MutexLock`` lock and unlock and one
    ///   check of the (empty) waiter list.
    @inlinable
    public func withLock<Result, Failure: Error>(
        _ body: (inout State) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        lock.lock()
        defer { unlockAfterChange() }
        return try body(&state)
    }

    /// Waits until `predicate` holds, then runs `body` with exclusive access to the state.
    ///
    /// - Parameters:
    ///   - predicate: The condition to wait for; evaluated under the lock, possibly on other threads.
    ///   - body: Runs once `predicate` holds, without releasing the lock in between.
    /// - Returns: What `body` returns.
    /// - Throws: What `body` throws.
    @inlinable
    public func withLock<Result, Failure: Error>(
        when predicate: (State) -> Bool,
        _ body: (inout State) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        lock.lock()
        defer { unlockAfterChange() }
        if !predicate(state) { _ = waitLocked(for: predicate, deadline: .max) }
        return try body(&state)
    }

    /// Waits at most `timeout` until `predicate` holds, then runs `body` with exclusive access to the state.
    ///
    /// The timeout covers the whole call: acquiring the lock (another thread may hold it) and waiting for the
    /// predicate. A zero or negative timeout makes one attempt at the lock, without waiting for its holder, and
    /// one check of the predicate, as ``withLockIfAvailable(when:_:)`` does.
    ///
    /// - Parameters:
    ///   - predicate: The condition to wait for; evaluated under the lock, possibly on other threads.
    ///   - timeout: The longest time to wait on the monotonic clock (zero or negative: just try; huge: forever).
    ///   - body: Runs once `predicate` holds, without releasing the lock in between.
    /// - Returns: What `body` returns, or `nil` when the timeout expired first, with the lock still held by
    ///   another thread or the predicate still false (`body` did not run).
    /// - Throws: What `body` throws.
    @inlinable
    public func withLock<Result, Failure: Error>(
        when predicate: (State) -> Bool,
        timeout: Duration,
        _ body: (inout State) throws(Failure) -> Result
    ) throws(Failure) -> Result? {
        let deadline = monotonicDeadline(after: timeout)
        guard lock.lock(deadline: deadline) else { return nil }
        defer { unlockAfterChange() }
        guard predicate(state) || waitLocked(for: predicate, deadline: deadline) else { return nil }
        return try body(&state)
    }

    /// Runs `body` with exclusive access to the state if the lock is free, without waiting.
    ///
    /// The try form of ``withLock(_:)`` (`NSConditionLock.tryLock()`): when another thread holds the lock it
    /// returns `nil` at once. When `body` ran, the waiters whose predicate now holds are woken, as after
    /// ``withLock(_:)``. Called from inside a `withLock` body of the same monitor it returns `nil` (the lock is
    /// held, by the caller), where ``withLock(_:)`` would trap.
    ///
    /// - Parameter body: Reads or changes the state.
    /// - Returns: What `body` returns, or `nil` when the lock was held (`body` did not run).
    /// - Throws: What `body` throws.
    ///
    /// The corresponding C function is `pthread_mutex_trylock`.
    @inlinable
    public func withLockIfAvailable<Result, Failure: Error>(
        _ body: (inout State) throws(Failure) -> Result
    ) throws(Failure) -> Result? {
        guard lock.tryLock() else { return nil }
        defer { unlockAfterChange() }
        return try body(&state)
    }

    /// Runs `body` with exclusive access to the state if the lock is free and `predicate` holds, without waiting
    /// for either.
    ///
    /// The try form of ``withLock(when:_:)`` (`NSConditionLock.tryLock(whenCondition:)`); the same as
    /// ``withLock(when:timeout:_:)`` with a zero timeout.
    ///
    /// - Parameters:
    ///   - predicate: The condition to check, once, under the lock.
    ///   - body: Runs when `predicate` holds, without releasing the lock in between.
    /// - Returns: What `body` returns, or `nil` when the lock was held or the predicate was false (`body` did not
    ///   run).
    /// - Throws: What `body` throws.
    ///
    /// The corresponding C function is `pthread_mutex_trylock`.
    @inlinable
    public func withLockIfAvailable<Result, Failure: Error>(
        when predicate: (State) -> Bool,
        _ body: (inout State) throws(Failure) -> Result
    ) throws(Failure) -> Result? {
        guard lock.tryLock() else { return nil }
        defer { unlockAfterChange() }
        guard predicate(state) else { return nil }
        return try body(&state)
    }

    /// Waits at most `timeout` until `predicate` holds.
    ///
    /// As with ``withLock(when:timeout:_:)``, the timeout covers acquiring the lock too: zero or negative never
    /// waits for a thread that holds it.
    ///
    /// - Parameters:
    ///   - predicate: The condition to wait for.
    ///   - timeout: The longest time to wait (zero or negative: just try; huge: forever).
    /// - Returns: Whether the predicate held before the timeout expired.
    public func wait(until predicate: (State) -> Bool, timeout: Duration) -> Bool {
        withLock(when: predicate, timeout: timeout) { _ in () } != nil
    }

    /// Whether the lock counts contention statistics (see ``MutexLock/statisticsEnabled``).
    public var statisticsEnabled: Bool {
        get { lock.statisticsEnabled }
        set { lock.statisticsEnabled = newValue }
    }

    /// The lock's contention statistics.
    public var statistics: LockStatistics { lock.statistics }

    /// Waits with the lock held until `predicate(state)` holds or `deadline` passes; returns whether it holds.
    /// Callers check the predicate first (inlined), so this registers a waiter right away. Inlinable, like the rest
    /// of the waiting path, so it is specialized for `State` (no generic metadata lookups while the lock is held).
    @inlinable
    func waitLocked(for predicate: (State) -> Bool, deadline: UInt64) -> Bool {
        return withoutActuallyEscaping(predicate) { predicate in
            let waiter = spareWaiter.take() ?? Waiter()
            waiter.predicate = predicate
            waiters.append(waiter)
            defer {
                waiter.predicate = nil
                waiters.removeAll { $0 === waiter }
                spareWaiter = waiter
            }
            while true {
                waiter.notified = false
                let woken = waiter.condition.wait(lock, deadline: deadline, operation: "Monitor.withLock(when:)")
                if predicate(state) { return true }
                if !woken && deadline != .max && cthr_clock_now_ns() >= deadline { return false }
            }
        }
    }

    /// Releases the lock after a change: with nobody waiting (the common case, inlined) just unlocks.
    @inlinable
    func unlockAfterChange() {
        if _fastPath(waiters.isEmpty) {
            lock.unlock()
        } else {
            unlockWakingSatisfiedWaiters()
        }
    }

    /// Releases the lock after a change, then signals the waiters whose predicate holds for the new state.
    @inlinable
    func unlockWakingSatisfiedWaiters() {
        // The first satisfied waiter in a local, the others (rare: several predicates true at once) in an array.
        var first: Waiter?
        var others: [Waiter] = []
        for waiter in waiters where !waiter.notified {
            if let predicate = waiter.predicate, predicate(state) {
                waiter.notified = true
                if first == nil { first = waiter } else { others.append(waiter) }
            }
        }
        lock.unlock()
        first?.condition.signal()
        for waiter in others { waiter.condition.signal() }
    }
}

extension Monitor: @unchecked Sendable where State: Sendable {}
