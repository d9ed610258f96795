// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import CThreading
import Testing

@Suite struct ClockTests {
    @Test func monotonicClockAdvancesAcrossSleep() {
        let start = cthr_clock_now_ns()
        #expect(cthr_sleep_ns(2_000_000) == 0)
        #expect(cthr_clock_now_ns() - start >= 2_000_000)
    }

    @Test func deadlineAfterSaturates() {
        #expect(cthr_clock_deadline_after(UInt64.max) == UInt64.max)
        let deadline = cthr_clock_deadline_after(1_000)
        #expect(deadline > cthr_clock_now_ns() - 1_000_000)
    }
}
