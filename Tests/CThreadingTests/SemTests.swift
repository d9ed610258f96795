// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import CThreading
import Glibc
import Testing

/// A heap-allocated, initialised semaphore with count `value`.
private func makeSemaphore(_ value: UInt32) -> SharedCell<cthr_sem_t> {
    let semaphore = SharedCell(cthr_sem_t())
    let code = cthr_sem_init(semaphore.pointer, value)
    precondition(code == 0, "cthr_sem_init(\(value)) failed: \(code)")
    return semaphore
}

@Suite(.serialized) struct SemTests {
    @Test func binarySemaphoreKeepsACounterExact() {
        let semaphore = makeSemaphore(1)
        let count = countUnderLock(
            lock: { _ = cthr_sem_wait(semaphore.pointer) },
            unlock: { _ = cthr_sem_post(semaphore.pointer) }
        )
        #expect(count == counterThreads * incrementsPerThread)
        var value: Int32 = -1
        #expect(cthr_sem_getvalue(semaphore.pointer, &value) == 0)
        #expect(value == 1)
        #expect(cthr_sem_destroy(semaphore.pointer) == 0)
    }

    @Test func countsPostsAndTrywaits() {
        let semaphore = makeSemaphore(2)
        var value: Int32 = -1
        #expect(cthr_sem_trywait(semaphore.pointer) == 0)
        #expect(cthr_sem_trywait(semaphore.pointer) == 0)
        #expect(cthr_sem_trywait(semaphore.pointer) == EAGAIN)
        #expect(cthr_sem_post(semaphore.pointer) == 0)
        #expect(cthr_sem_getvalue(semaphore.pointer, &value) == 0)
        #expect(value == 1)
        #expect(cthr_sem_wait(semaphore.pointer) == 0)
        #expect(cthr_sem_timedwait(semaphore.pointer, 0) == ETIMEDOUT)
        #expect(cthr_sem_destroy(semaphore.pointer) == 0)
    }

    @Test func timedWaitExpiresAfterItsTimeout() {
        let semaphore = makeSemaphore(0)
        let timeout: UInt64 = 50_000_000
        let start = cthr_clock_now_ns()
        let code = cthr_sem_timedwait(semaphore.pointer, start + timeout)
        let elapsed = elapsedNs(since: start)
        #expect(code == ETIMEDOUT)
        #expect(elapsed >= timeout)
        #expect(elapsed < generousTimeoutNs)
        #expect(cthr_sem_destroy(semaphore.pointer) == 0)
    }

    @Test func timedWaitSucceedsWhenPostedInTime() throws {
        let semaphore = makeSemaphore(0)
        let poster = try #require(
            spawnVoid {
                _ = cthr_sleep_ns(20_000_000)
                _ = cthr_sem_post(semaphore.pointer)
            }
        )
        #expect(cthr_sem_timedwait(semaphore.pointer, cthr_clock_deadline_after(generousTimeoutNs)) == 0)
        #expect(poster.joined())
        #expect(cthr_sem_destroy(semaphore.pointer) == 0)
    }

    @Test func fastPathsTakeAndReturnUnitsWithoutWaiters() {
        let semaphore = makeSemaphore(1)
        #expect(cthr_sem_fast_trywait(semaphore.pointer))
        #expect(!cthr_sem_fast_trywait(semaphore.pointer))
        #expect(cthr_sem_fast_post(semaphore.pointer))
        #expect(cthr_sem_waiter_count(semaphore.pointer) == 0)
        // A deadline already passed still takes an available unit.
        #expect(cthr_sem_timedwait(semaphore.pointer, 0) == 0)
        #expect(cthr_sem_destroy(semaphore.pointer) == 0)
    }

    @Test func aRegisteredWaiterSendsPostsToTheSlowPathWhichWakesIt() throws {
        let semaphore = makeSemaphore(0)
        let result = SharedCell<Int32>(-1)
        let waiter = try #require(
            spawnVoid {
                result.pointer.pointee = cthr_sem_timedwait(
                    semaphore.pointer,
                    cthr_clock_deadline_after(generousTimeoutNs)
                )
            }
        )
        let deadline = cthr_clock_deadline_after(generousTimeoutNs)
        while cthr_sem_waiter_count(semaphore.pointer) == 0 && cthr_clock_now_ns() < deadline {
            _ = cthr_sleep_ns(1_000_000)
        }
        #expect(cthr_sem_waiter_count(semaphore.pointer) == 1)
        #expect(!cthr_sem_fast_post(semaphore.pointer))
        #expect(cthr_sem_post(semaphore.pointer) == 0)
        #expect(waiter.joined())
        #expect(result.pointer.pointee == 0)
        #expect(cthr_sem_waiter_count(semaphore.pointer) == 0)
        var value: Int32 = -1
        #expect(cthr_sem_getvalue(semaphore.pointer, &value) == 0)
        #expect(value == 0)
    }

    @Test func aTimedOutWaiterLeavesTheWaiters() {
        let semaphore = makeSemaphore(0)
        #expect(cthr_sem_timedwait(semaphore.pointer, cthr_clock_deadline_after(5_000_000)) == ETIMEDOUT)
        #expect(cthr_sem_waiter_count(semaphore.pointer) == 0)
        #expect(cthr_sem_fast_post(semaphore.pointer))
    }

    @Test func postAtTheMaximumOverflows() {
        let semaphore = makeSemaphore(cthr_sem_value_max())
        #expect(cthr_sem_post(semaphore.pointer) == EOVERFLOW)
        var value: Int32 = 0
        #expect(cthr_sem_getvalue(semaphore.pointer, &value) == 0)
        #expect(UInt32(value) == cthr_sem_value_max())
        #expect(cthr_sem_destroy(semaphore.pointer) == 0)
    }

    @Test func badArgumentsReturnEINVAL() {
        let semaphore = SharedCell(cthr_sem_t())
        var value: Int32 = 0
        #expect(cthr_sem_value_max() > 0)
        #expect(cthr_sem_init(nil, 0) == EINVAL)
        #expect(cthr_sem_init(semaphore.pointer, cthr_sem_value_max() + 1) == EINVAL)
        #expect(cthr_sem_destroy(nil) == EINVAL)
        #expect(cthr_sem_wait(nil) == EINVAL)
        #expect(cthr_sem_trywait(nil) == EINVAL)
        #expect(cthr_sem_timedwait(nil, 0) == EINVAL)
        #expect(cthr_sem_post(nil) == EINVAL)
        #expect(cthr_sem_getvalue(nil, &value) == EINVAL)
        #expect(cthr_sem_waiter_count(nil) == 0)
        #expect(cthr_sem_init(semaphore.pointer, 0) == 0)
        #expect(cthr_sem_getvalue(semaphore.pointer, nil) == EINVAL)
        #expect(cthr_sem_destroy(semaphore.pointer) == 0)
    }
}
