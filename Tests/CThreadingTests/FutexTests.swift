// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import CThreading
import Glibc
import Testing

/// A futex word plus a mutex that orders the test's own reads and writes of it (the kernel reads the word
/// atomically on its side; Swift has no atomic view of a plain `UInt32`).
private final class FutexFixture: @unchecked Sendable {  // `word` is only touched under `guardLock` or by the kernel
    let word = SharedCell<UInt32>(0)
    let guardLock = makeMutex(Int32(CTHR_MUTEX_NORMAL.rawValue))

    func load() -> UInt32 {
        _ = cthr_mutex_lock(guardLock.pointer)
        defer { _ = cthr_mutex_unlock(guardLock.pointer) }
        return word.pointer.pointee
    }

    func store(_ value: UInt32) {
        _ = cthr_mutex_lock(guardLock.pointer)
        word.pointer.pointee = value
        _ = cthr_mutex_unlock(guardLock.pointer)
    }
}

@Suite(.serialized) struct FutexTests {
    @Test func waitOnAMismatchedValueReturnsEAGAIN() {
        let word = SharedCell<UInt32>(7)
        #expect(cthr_futex_wait(word.pointer, 8, cthr_clock_deadline_after(generousTimeoutNs)) == EAGAIN)
        #expect(cthr_futex_wait(word.pointer, 8, UInt64.max) == EAGAIN)
    }

    @Test func waitExpiresAtItsDeadline() {
        let word = SharedCell<UInt32>(0)
        let timeout: UInt64 = 30_000_000
        let start = cthr_clock_now_ns()
        var code: Int32 = 0
        // A wake-up with code 0 may be spurious: wait again for the same absolute deadline.
        while code == 0 || code == EINTR {
            code = cthr_futex_wait(word.pointer, 0, start + timeout)
        }
        let elapsed = elapsedNs(since: start)
        #expect(code == ETIMEDOUT)
        #expect(elapsed >= timeout)
        #expect(elapsed < generousTimeoutNs)
    }

    @Test func wakeWakesASleepingWaiter() throws {
        let fixture = FutexFixture()
        let timedOut = SharedCell<Bool>(false)
        let waiter = try #require(
            spawnVoid {
                let deadline = cthr_clock_deadline_after(generousTimeoutNs)
                while fixture.load() == 0 {
                    if cthr_futex_wait(fixture.word.pointer, 0, deadline) == ETIMEDOUT {
                        timedOut.pointer.pointee = true
                        return
                    }
                }
            }
        )
        // Wake one sleeper without changing the word until a wake reports that it woke somebody: the waiter was
        // then asleep on the word (it goes back to sleep, since the word is still 0).
        var woken: Int32 = 0
        let probeEnd = cthr_clock_deadline_after(generousTimeoutNs)
        while woken == 0 && cthr_clock_now_ns() < probeEnd {
            #expect(cthr_futex_wake(fixture.word.pointer, 1, &woken) == 0)
            if woken == 0 {
                _ = cthr_sleep_ns(1_000_000)
            }
        }
        #expect(woken == 1)
        fixture.store(1)
        #expect(cthr_futex_wake(fixture.word.pointer, Int32.max, nil) == 0)
        #expect(waiter.joined())
        #expect(timedOut.pointer.pointee == false)
    }

    @Test func wakeWithNobodyWaitingWakesNone() {
        let word = SharedCell<UInt32>(0)
        var woken: Int32 = -1
        #expect(cthr_futex_wake(word.pointer, Int32.max, &woken) == 0)
        #expect(woken == 0)
        #expect(cthr_futex_wake(word.pointer, 0, nil) == 0)
    }

    /// The spin before a sleep: `spins` pause rounds (which never look at the clock, whether or not they also
    /// yield), then `yields` yield rounds (each only while the deadline has not passed), then false; the caller
    /// sleeps from there.
    @Test func backoffRunsItsRoundsThenTellsTheCallerToSleep() {
        for spinYieldsFrom: Int32 in [2, 10] {
            for round: Int32 in 0..<13 {
                #expect(cthr_futex_backoff(round, 10, spinYieldsFrom, 3, UInt64.max))
            }
            #expect(!cthr_futex_backoff(13, 10, spinYieldsFrom, 3, UInt64.max))
            #expect(!cthr_futex_backoff(50, 10, spinYieldsFrom, 3, UInt64.max))
            // A deadline in the past ends the yield-only rounds, not the spin rounds.
            #expect(cthr_futex_backoff(9, 10, spinYieldsFrom, 3, 0))
            #expect(!cthr_futex_backoff(10, 10, spinYieldsFrom, 3, 0))
            #expect(cthr_futex_backoff(10, 10, spinYieldsFrom, 3, cthr_clock_deadline_after(generousTimeoutNs)))
        }
        // No rounds at all: sleep at once.
        #expect(!cthr_futex_backoff(0, 0, 0, 0, UInt64.max))
    }

    @Test func badArgumentsReturnEINVAL() {
        let word = SharedCell<UInt32>(0)
        #expect(cthr_futex_wait(nil, 0, 0) == EINVAL)
        #expect(cthr_futex_wake(nil, 1, nil) == EINVAL)
        #expect(cthr_futex_wake(word.pointer, -1, nil) == EINVAL)
    }
}
