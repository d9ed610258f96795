// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import CTestSupport
import CThreading
import Glibc
import Testing

@testable import Threading

/// A forked child inherits each lock's state but not the parent's other threads.
@Suite struct LockForkTests {
    /// What a parent's threads can leave in a lock at the fork: a waiter still counted with WAKING set for it, and
    /// `spinner` set. In the child, a thread that waits for the lock must still be woken by the unlock: its
    /// registration clears the stale WAKING and the unlock does not trust the stale spinner. (With the parent's rules
    /// the child's waiter sleeps until its deadline.) The waiter is asleep in the kernel when the lock is released.
    @Test(.disabled(if: faultForkBlockedBySanitizer, "TSan does not support multi-threaded fork children"))
    func aForkedChildsWaiterIsWokenDespiteTheParentsLeftovers() async {
        // In a process of its own, which forks once its other threads sleep (``faultRunForked``): this test
        // process's hundreds of threads never do, and a child that inherits a Swift runtime lock held waits for ever.
        let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
            exit(lockForkScenario())
        }
        let errors = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(!errors.contains("lock fork:"), "stderr: \(errors)")
    }
}

/// The child's waiter registers and sleeps; the child's unlock must wake it. Returns 0, or what went wrong: the
/// child's waiter was not woken (3), never waited (2), never started (5) or never slept (6); 99: the child hung.
private func lockForkScenario() -> Int32 {
    let lock = MutexLock()
    let status = faultRunForked(seconds: 60) {
        lock.word.pointee.sleepers.value = UInt64(1 | CTHR_LOCK_WAKING)  // `waiters`, the low half
        lock.word.pointee.spinner.value = 1
        lock.lock()
        // The C lock itself, one wait until a far deadline (`MutexLock` waits in slices, which would hide a
        // lost wake-up behind the next slice, and a wait that ends at its deadline still takes a free lock), on
        // a thread of C alone: a new thread running Swift in the child of a multi-threaded process may wait for
        // ever on a lock of the Swift runtime that a thread of the parent held at the fork, which is not what
        // this test is about.
        guard let waiter = cthr_test_lock_waiter_start(lock.word, cthr_clock_deadline_after(120_000_000_000))
        else { return 1 }
        // The child's waiter is registered (the parent's stale one is counted too).
        let deadline = cthr_clock_deadline_after(20_000_000_000)
        while cthr_lock_waiter_count(lock.word) < 2 && cthr_clock_now_ns() < deadline { _ = cthr_thread_yield() }
        guard cthr_lock_waiter_count(lock.word) >= 2 else {
            let tid = cthr_test_lock_waiter_tid(waiter)
            faultLog("lock fork: the waiter (tid \(tid)) did not register; \(faultDescribeThread(tid))\n")
            return cthr_test_lock_waiter_state(waiter) == CTHR_TEST_WAITER_NOT_STARTED ? 5 : 2
        }
        // Asleep in the kernel, so that only a wake-up can end its wait (a waiter still on its way to the futex
        // would find the lock free without one).
        let tid = cthr_test_lock_waiter_tid(waiter)
        while faultThreadState(tid) != "S" && cthr_clock_now_ns() < deadline { _ = cthr_thread_yield() }
        guard faultThreadState(tid) == "S" else {
            faultLog("lock fork: the waiter (tid \(tid)) did not sleep; \(faultDescribeThread(tid))\n")
            return 6
        }
        // A wake-up "just now", as a live spinner's lock would show: an unlock that trusted the stale `spinner`
        // would owe no wake-up for the next millisecond.
        lock.word.pointee.woken_at.value = UInt32(truncatingIfNeeded: cthr_clock_now_ns() / 1000)
        lock.unlock()
        // Woken by the unlock, it is done at once; 20 s is a deadline for a hang, not a speed goal.
        let woken = cthr_clock_deadline_after(20_000_000_000)
        while cthr_test_lock_waiter_state(waiter) == CTHR_TEST_WAITER_WAITING && cthr_clock_now_ns() < woken {
            _ = cthr_sleep_ns(1_000_000)
        }
        guard cthr_test_lock_waiter_state(waiter) == CTHR_TEST_WAITER_TOOK else { return 3 }
        return cthr_test_lock_waiter_join(waiter) == CTHR_TEST_WAITER_TOOK ? 0 : 4
    }
    if status != 0 { faultLog("lock fork: the child exited with \(status)\n") }
    return status
}
