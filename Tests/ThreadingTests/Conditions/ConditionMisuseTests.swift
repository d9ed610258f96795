// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import CTestSupport
import CThreading
import Glibc
import Synchronization
import Testing

@testable import Threading

/// Bad input and misuse of conditions whose outcome is a value or a thrown error (the object stays usable);
/// the table in <doc:Misuse> lists each case.
@Suite struct ConditionMisuseTests {
    @Test func negativeAndHugeTimeoutsOnConditions() {
        let semaphore = Semaphore(value: 0)
        #expect(!semaphore.wait(timeout: .seconds(-1)))
        #expect(!semaphore.wait(timeout: .zero))
        semaphore.signal()
        #expect(semaphore.wait(timeout: .seconds(-1)))  // available: a past deadline still takes it
        semaphore.signal()
        #expect(semaphore.wait(timeout: hugeDuration))

        let lock = MutexLock()
        let condition = ConditionVariable()
        lock.lock()
        #expect(!condition.wait(lock, timeout: .seconds(-1)))
        #expect(!condition.wait(lock, timeout: .zero))
        lock.unlock()
        #expect(lock.tryLock())  // the lock is still usable and was released by each wait
        lock.unlock()

        let monitor = Monitor(0)
        #expect(!monitor.wait(until: { $0 > 0 }, timeout: .seconds(-1)))
        let read: Int? = monitor.withLock(when: { $0 > 0 }, timeout: .nanoseconds(-1), { $0 })
        #expect(read == nil)
        #expect(monitor.wait(until: { $0 == 0 }, timeout: .seconds(-1)))  // already true: no wait needed
        #expect(monitor.wait(until: { $0 == 0 }, timeout: hugeDuration))
    }

    @Test func semaphoreBoundaryValuesWork() {
        let empty = Semaphore(value: 0)
        #expect(!empty.tryWait())
        let full = Semaphore(value: Semaphore.maximumValue)
        #expect(full.value == Semaphore.maximumValue)
        #expect(full.tryWait())
        full.signal()  // back to the maximum: allowed
        #expect(full.value == Semaphore.maximumValue)
    }
}
