// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import CThreading
import Synchronization

@testable import Threading

// The three helpers every suite shares: one polling wait with a deadline (blocking, or suspending for async code),
// one counter, one log. The suites used to carry a near-copy each (queueTestWait, jobTestWait, Torture.waitUntil,
// RCUTestSupport.waitUntil, withDeadlineWait and two private `eventually`; QueueLifeCounter, TortureCounter,
// RCUTestSupport.Counter, RunCounter, SchedulerTestCounter, a static Tracked.live; QueueLog and JobLog).

// MARK: Polling

/// Polls `condition` until it holds or `seconds` passed, sleeping `pollNanoseconds` (a millisecond) between looks;
/// returns whether it held. Blocks the calling thread; ``suspendUntil(seconds:_:)`` is the same wait for a task
/// that must leave its thread free.
///
/// Every polling wait of the tests goes through here, so a deadlock fails the test (`#expect(waitUntil { … })`)
/// instead of hanging it. A condition that holds at the deadline counts.
func waitUntil(seconds: Double = 20, every pollNanoseconds: UInt64 = 1_000_000, _ condition: () -> Bool) -> Bool {
    let deadline = cthr_clock_now_ns() + UInt64(seconds * 1_000_000_000)
    while !condition() {
        if cthr_clock_now_ns() >= deadline { return condition() }
        _ = cthr_sleep_ns(pollNanoseconds)
    }
    return true
}

/// Polls `condition` every millisecond, suspending the task between looks (its thread stays free), until it holds or
/// `seconds` passed; returns whether it held. ``waitUntil(seconds:every:_:)`` for async code. (A name of its own:
/// with one name, async tests that mean to block would get this form.)
func suspendUntil(seconds: Double = 20, _ condition: @Sendable () -> Bool) async -> Bool {
    let deadline = ContinuousClock.now + .seconds(seconds)
    while !condition() {
        if ContinuousClock.now >= deadline { return condition() }
        try? await Task.sleep(for: .milliseconds(1))
    }
    return true
}

// MARK: Counting

/// An integer shared by threads, tasks and escaping closures (sequentially consistent).
final class TestCounter: Sendable {
    private let storage: Atomic<Int>

    init(_ initial: Int = 0) { storage = Atomic(initial) }

    /// Adds `delta` and returns the new value.
    @discardableResult
    func add(_ delta: Int = 1) -> Int { storage.add(delta, ordering: .sequentiallyConsistent).newValue }

    var value: Int { storage.load(ordering: .sequentiallyConsistent) }
}

/// Counts the live ``Tracked`` instances made with it, and their deinitializations: a test makes one of its own
/// (no count shared with tests that run at the same time) and checks after a grace period that every value it
/// handed to the code under test was released, once.
final class LiveCounter: Sendable {
    /// Instances alive now.
    let live = TestCounter()
    /// Instances deinitialized so far.
    let deinits = TestCounter()
}

/// A value that counts itself live in a ``LiveCounter`` from its initialization to its deinitialization.
final class Tracked: Sendable {
    let counter: LiveCounter
    let id: Int

    init(_ counter: LiveCounter, id: Int = 0) {
        self.counter = counter
        self.id = id
        counter.live.add()
    }

    deinit {
        counter.live.add(-1)
        counter.deinits.add()
    }
}

// MARK: Logging

/// An append-only log of integers that threads share (the `print` of the ordering scenarios).
final class TestLog: Sendable {
    private let entries = QueueTestLocked<[Int]>([])

    func append(_ value: Int) { entries.withLock { $0.append(value) } }

    /// The entries, in the order they were appended.
    var values: [Int] { entries.withLock { $0 } }

    var count: Int { entries.withLock { $0.count } }

    /// Waits until `count` entries are logged or `seconds` passed; returns whether they were.
    func wait(for count: Int, seconds: Double = 20) -> Bool {
        waitUntil(seconds: seconds) { self.count >= count }
    }
}
