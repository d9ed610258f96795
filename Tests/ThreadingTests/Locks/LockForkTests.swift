// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import CThreading
import Testing

@testable import Threading

/// A forked child inherits each lock's state but not the parent's other threads.
@Suite struct LockForkTests {
    /// What a parent's threads can leave in a lock at the fork: a waiter still counted with WAKING set for it, and
    /// `spinner` set. In the child, a thread that waits for the lock must still be woken by the unlock: its
    /// registration clears the stale WAKING and the unlock does not trust the stale spinner. (With the parent's rules
    /// the child's waiter sleeps until its deadline.)
    @Test(.disabled(if: faultForkBlockedBySanitizer, "TSan does not support multi-threaded fork children"))
    func aForkedChildsWaiterIsWokenDespiteTheParentsLeftovers() {
        let lock = MutexLock()
        let status = faultRunForked(seconds: 60) {
            lock.word.pointee.sleepers.value = UInt64(1 | CTHR_LOCK_WAKING)  // `waiters`, the low half
            lock.word.pointee.spinner.value = 1
            lock.lock()
            // The C lock itself, one wait until a far deadline (`MutexLock` waits in slices, which would hide a
            // lost wake-up behind the next slice, and a wait that ends at its deadline still takes a free lock).
            let done = LockedValue(false)
            let entered = LockedValue(false)
            let body: @Sendable () -> sending Bool = {
                entered.withLock { $0 = true }
                let got = cthr_lock_lock_slow(lock.word, cthr_clock_deadline_after(120_000_000_000)) == 0
                if got { lock.unlock() }
                done.withLock { $0 = true }
                return got
            }
            guard let waiter = try? PosixThread(body) else { return 1 }
            // The child's waiter is registered (the parent's stale one is counted too).
            let deadline = cthr_clock_deadline_after(20_000_000_000)
            while cthr_lock_waiter_count(lock.word) < 2 && cthr_clock_now_ns() < deadline { _ = cthr_thread_yield() }
            guard cthr_lock_waiter_count(lock.word) >= 2 else {
                // Which part never came: the thread's start (5: the runtime's, not the lock's) or the registration.
                let tid = waiter.box.threadID.load(ordering: .acquiring)
                faultLog("lock fork: the waiter (tid \(tid)) did not register; \(faultDescribeThread(tid))\n")
                return entered.withLock { $0 } ? 2 : 5
            }
            lock.unlock()
            // Woken by the unlock, it is done at once; 20 s is a deadline for a hang, not a speed goal.
            let woken = cthr_clock_deadline_after(20_000_000_000)
            while !done.withLock({ $0 }) && cthr_clock_now_ns() < woken { _ = cthr_sleep_ns(1_000_000) }
            guard done.withLock({ $0 }) else { return 3 }
            return waiter.join() ? 0 : 4
        }
        #expect(status == 0, "the child's waiter was not woken (3), never waited (2), or never started its body (5)")
    }
}
