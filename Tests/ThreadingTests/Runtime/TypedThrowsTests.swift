// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import Testing
import Threading

/// A concrete error: the closures below throw it with a typed `throws(Refusal)`.
private enum Refusal: Error, Equatable {
    case refused(Int)
}

/// Every public API that takes a closure propagates the closure's error type (typed throws): the caller catches a
/// `Refusal`, not an `any Error`, and a non-throwing closure makes a non-throwing call.
@Suite struct TypedThrowsTests {
    @Test func queueSyncKeepsTheErrorTypeAndTheQueueServes() {
        let serial = SerialQueue(label: "typed.serial")
        let concurrent = ConcurrentQueue(label: "typed.concurrent")
        do {
            try serial.sync { () throws(Refusal) in throw .refused(1) }
            Issue.record("no error")
        } catch {
            #expect(error == .refused(1))  // `error` is a Refusal: no cast
        }
        do {
            try concurrent.sync(flags: .barrier) { () throws(Refusal) in throw .refused(2) }
            Issue.record("no error")
        } catch {
            #expect(error == .refused(2))
        }
        // Non-throwing closures: no `try`, and the queues keep serving after the errors.
        #expect(serial.sync { 3 } == 3)
        #expect(concurrent.sync { 4 } == 4)
        #expect(serial.sync(flags: []) { 5 } == 5)
    }

    @Test func rcuReadsAndUpdatesKeepTheErrorTypeAndChangeNothingOnError() {
        let value = RCUValue(10)
        let map = RCUMap<Int, Int>()
        map[1] = 100
        do {
            _ = try value.update { (old: Int) throws(Refusal) -> Int in throw .refused(old) }
            Issue.record("no error")
        } catch {
            #expect(error == .refused(10))
        }
        do {
            _ = try map.update(1) { (old: Int?) throws(Refusal) -> Int? in throw .refused(old ?? -1) }
            Issue.record("no error")
        } catch {
            #expect(error == .refused(100))
        }
        do {
            _ = try value.read { (current: Int) throws(Refusal) -> Int in throw .refused(current + 1) }
            Issue.record("no error")
        } catch {
            #expect(error == .refused(11))
        }
        #expect(value.load() == 10)
        #expect(map[1] == 100)
        #expect(map.withValue(forKey: 1) { $0 + 1 } == 101)
    }

    @Test func conditionWaitKeepsThePredicatesErrorTypeWithTheLockHeld() {
        let lock = MutexLock()
        let condition = ConditionVariable()
        lock.lock()
        do {
            try condition.wait(lock) { () throws(Refusal) -> Bool in throw .refused(7) }
            Issue.record("no error")
        } catch {
            #expect(error == .refused(7))
        }
        #expect(lock.tryLock() == false)  // still held by this thread after the error
        lock.unlock()
    }
}
