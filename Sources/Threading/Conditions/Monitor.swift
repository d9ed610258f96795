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
/// // producer
/// buffer.withLock(when: { $0.count < 10 }) { $0.append(item) }
/// // consumer
/// let item = buffer.withLock(when: { !$0.isEmpty }) { $0.removeFirst() }
/// ```
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
        let condition = ConditionVariable()
        var predicate: ((State) -> Bool)?
        var notified = false
    }

    @usableFromInline
    let lock: MutexLock

    // Both only touched while holding `lock`, which already gives exclusive access: the run-time exclusivity
    // check would only add cost to every `withLock`.
    @usableFromInline @exclusivity(unchecked)
    var state: State

    @usableFromInline @exclusivity(unchecked)
    var waiters: [Waiter] = []

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
    /// - Parameters:
    ///   - predicate: The condition to wait for; evaluated under the lock, possibly on other threads.
    ///   - timeout: The longest time to wait on the monotonic clock (zero or negative: just check; huge: forever).
    ///   - body: Runs once `predicate` holds, without releasing the lock in between.
    /// - Returns: What `body` returns, or `nil` when the timeout expired with the predicate still false (`body`
    ///   did not run).
    /// - Throws: What `body` throws.
    @inlinable
    public func withLock<Result, Failure: Error>(
        when predicate: (State) -> Bool,
        timeout: Duration,
        _ body: (inout State) throws(Failure) -> Result
    ) throws(Failure) -> Result? {
        let deadline = monotonicDeadline(after: timeout)
        lock.lock()
        defer { unlockAfterChange() }
        guard predicate(state) || waitLocked(for: predicate, deadline: deadline) else { return nil }
        return try body(&state)
    }

    /// Waits at most `timeout` until `predicate` holds.
    ///
    /// - Parameters:
    ///   - predicate: The condition to wait for.
    ///   - timeout: The longest time to wait (zero or negative: just check; huge: forever).
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
    /// Callers check the predicate first (inlined), so this registers a waiter right away.
    @usableFromInline
    func waitLocked(for predicate: (State) -> Bool, deadline: UInt64) -> Bool {
        return withoutActuallyEscaping(predicate) { predicate in
            let waiter = Waiter()
            waiter.predicate = predicate
            waiters.append(waiter)
            defer {
                waiter.predicate = nil
                waiters.removeAll { $0 === waiter }
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
    @usableFromInline
    func unlockWakingSatisfiedWaiters() {
        var ready: [Waiter] = []
        for waiter in waiters where !waiter.notified {
            if let predicate = waiter.predicate, predicate(state) {
                waiter.notified = true
                ready.append(waiter)
            }
        }
        lock.unlock()
        for waiter in ready { waiter.condition.signal() }
    }
}

extension Monitor: @unchecked Sendable where State: Sendable {}
