// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import CThreading
import Glibc
import Testing

/// A condition variable, its mutex and a predicate counter guarded by the mutex.
final class CondFixture: @unchecked Sendable {  // every field is a C primitive or guarded by `mutex`
    let mutex = makeMutex(Int32(CTHR_MUTEX_ERRORCHECK.rawValue))
    let cond = SharedCell(cthr_cond_t())
    let value = SharedCell<Int>(0)

    init() {
        let code = cthr_cond_init(cond.pointer)
        precondition(code == 0, "cthr_cond_init failed: \(code)")
    }

    deinit {
        _ = cthr_cond_destroy(cond.pointer)
        _ = cthr_mutex_destroy(mutex.pointer)
    }

    /// Sets the predicate under the mutex and signals (or broadcasts).
    func publish(_ newValue: Int, broadcast: Bool = false) {
        _ = cthr_mutex_lock(mutex.pointer)
        value.pointer.pointee = newValue
        _ = broadcast ? cthr_cond_broadcast(cond.pointer) : cthr_cond_signal(cond.pointer)
        _ = cthr_mutex_unlock(mutex.pointer)
    }

    /// Waits until the predicate is at least `target`, giving up at `deadline`; returns the last wait's result.
    func waitFor(_ target: Int, deadline: UInt64) -> Int32 {
        _ = cthr_mutex_lock(mutex.pointer)
        var code: Int32 = 0
        while value.pointer.pointee < target && code == 0 {
            code = cthr_cond_timedwait(cond.pointer, mutex.pointer, deadline)
        }
        if value.pointer.pointee >= target {
            code = 0
        }
        _ = cthr_mutex_unlock(mutex.pointer)
        return code
    }
}

@Suite(.serialized) struct CondTests {
    @Test func timedWaitExpiresAfterItsTimeout() {
        let fixture = CondFixture()
        let timeout: UInt64 = 50_000_000
        #expect(cthr_mutex_lock(fixture.mutex.pointer) == 0)
        let start = cthr_clock_now_ns()
        var code: Int32 = 0
        // Spurious wake-ups return 0 early: keep waiting for the same absolute deadline.
        while code == 0 {
            code = cthr_cond_timedwait(fixture.cond.pointer, fixture.mutex.pointer, start + timeout)
        }
        let elapsed = elapsedNs(since: start)
        #expect(code == ETIMEDOUT)
        #expect(elapsed >= timeout)
        #expect(elapsed < generousTimeoutNs)
        // The mutex is held again after the timeout: the owner can unlock it (error-checking kind).
        #expect(cthr_mutex_unlock(fixture.mutex.pointer) == 0)
    }

    @Test func relativeTimedWaitExpiresAfterItsTimeout() {
        let fixture = CondFixture()
        let timeout: UInt64 = 50_000_000
        #expect(cthr_mutex_lock(fixture.mutex.pointer) == 0)
        let start = cthr_clock_now_ns()
        var code: Int32 = 0
        while code == 0 {
            let left = timeout - min(timeout, elapsedNs(since: start))
            code = cthr_cond_timedwait_relative(fixture.cond.pointer, fixture.mutex.pointer, left)
        }
        let elapsed = elapsedNs(since: start)
        #expect(code == ETIMEDOUT)
        #expect(elapsed >= timeout)
        #expect(elapsed < generousTimeoutNs)
        #expect(cthr_mutex_unlock(fixture.mutex.pointer) == 0)
    }

    @Test func timedWaitSucceedsWhenSignalledInTime() throws {
        let fixture = CondFixture()
        let signaller = try #require(
            spawnVoid {
                _ = cthr_sleep_ns(20_000_000)
                fixture.publish(1)
            }
        )
        #expect(fixture.waitFor(1, deadline: cthr_clock_deadline_after(generousTimeoutNs)) == 0)
        #expect(signaller.joined())
    }

    @Test func relativeWaitSucceedsWhenSignalledInTime() throws {
        let fixture = CondFixture()
        let signaller = try #require(
            spawnVoid {
                _ = cthr_sleep_ns(20_000_000)
                fixture.publish(1)
            }
        )
        #expect(cthr_mutex_lock(fixture.mutex.pointer) == 0)
        let deadline = cthr_clock_deadline_after(generousTimeoutNs)
        var code: Int32 = 0
        while fixture.value.pointer.pointee == 0 && code == 0 {
            let now = cthr_clock_now_ns()
            code = cthr_cond_timedwait_relative(
                fixture.cond.pointer,
                fixture.mutex.pointer,
                deadline > now ? deadline - now : 0
            )
        }
        #expect(fixture.value.pointer.pointee == 1)
        #expect(cthr_mutex_unlock(fixture.mutex.pointer) == 0)
        #expect(signaller.joined())
    }

    @Test func broadcastWakesEveryWaiter() throws {
        let fixture = CondFixture()
        let waiters = 3
        let results = SharedSlots<Int32>(repeating: -1, count: waiters)
        let ready = Event()
        let threads = (0..<waiters).map { index in
            spawnVoid {
                ready.signal()
                results[index] = fixture.waitFor(1, deadline: cthr_clock_deadline_after(generousTimeoutNs))
            }
        }
        for _ in 0..<waiters {
            #expect(ready.wait())
        }
        fixture.publish(1, broadcast: true)
        for thread in threads {
            #expect(try #require(thread).joined())
        }
        #expect(results.values == Array(repeating: 0, count: waiters))
    }

    @Test func untimedWaitReturnsAfterSignal() throws {
        let fixture = CondFixture()
        let waiter = try #require(
            spawnVoid {
                _ = cthr_mutex_lock(fixture.mutex.pointer)
                while fixture.value.pointer.pointee == 0 {
                    _ = cthr_cond_wait(fixture.cond.pointer, fixture.mutex.pointer)
                }
                _ = cthr_mutex_unlock(fixture.mutex.pointer)
            }
        )
        fixture.publish(1)
        // A signal sent before the waiter slept is not lost: it re-checks the predicate under the mutex.
        #expect(waiter.joined())
        #expect(cthr_cond_timedwait(fixture.cond.pointer, fixture.mutex.pointer, UInt64.max) == EPERM)
    }

    @Test func waitingWithoutHoldingAnErrorCheckingMutexIsEPERM() {
        let fixture = CondFixture()
        #expect(cthr_cond_wait(fixture.cond.pointer, fixture.mutex.pointer) == EPERM)
        let deadline = cthr_clock_deadline_after(1_000)
        #expect(cthr_cond_timedwait(fixture.cond.pointer, fixture.mutex.pointer, deadline) == EPERM)
    }

    @Test func badArgumentsReturnEINVAL() {
        let fixture = CondFixture()
        #expect(cthr_cond_init(nil) == EINVAL)
        #expect(cthr_cond_destroy(nil) == EINVAL)
        #expect(cthr_cond_wait(nil, fixture.mutex.pointer) == EINVAL)
        #expect(cthr_cond_wait(fixture.cond.pointer, nil) == EINVAL)
        #expect(cthr_cond_timedwait(nil, fixture.mutex.pointer, 0) == EINVAL)
        #expect(cthr_cond_timedwait(fixture.cond.pointer, nil, 0) == EINVAL)
        #expect(cthr_cond_timedwait_relative(nil, nil, 0) == EINVAL)
        #expect(cthr_cond_signal(nil) == EINVAL)
        #expect(cthr_cond_broadcast(nil) == EINVAL)
    }
}
