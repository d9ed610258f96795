// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import Testing

@testable import Threading

/// `LockProtocolCounters`: per-thread counts of the futex lock's contended paths, kept only while the process counts.
@Suite("Lock protocol counters", .serialized)
struct LockProtocolCountersTests {
    /// A contended acquisition (here a timed lock that gives up at once) counts nothing while counting is off and
    /// counts itself, its read-modify-writes and no futex wait while on (a deadline already passed never sleeps);
    /// an uncontended one never counts; `resetCurrentThread` clears the calling thread's counters only.
    @Test func aContendedAcquisitionCountsOnlyWhileCounting() throws {
        let lock = MutexLock()
        let wasCounting = LockProtocolCounters.isCounting
        defer { LockProtocolCounters.isCounting = wasCounting }
        lock.lock()
        let thread = try PosixThread(name: "counters") { () -> [LockProtocolCounters] in
            LockProtocolCounters.resetCurrentThread()
            LockProtocolCounters.isCounting = false
            let gotWhileOff = lock.lock(timeout: .zero)
            let off = LockProtocolCounters.currentThread
            LockProtocolCounters.isCounting = true
            let gotWhileOn = lock.lock(timeout: .zero)
            let on = LockProtocolCounters.currentThread
            let uncontended = MutexLock()
            uncontended.withLock {}
            let afterUncontended = LockProtocolCounters.currentThread
            LockProtocolCounters.resetCurrentThread()
            let reset = LockProtocolCounters.currentThread
            return gotWhileOff || gotWhileOn ? [] : [off, on, afterUncontended, reset]
        }
        let results = thread.join()
        lock.unlock()
        try #require(results.count == 4, "the held lock was taken by a timed lock that should have given up")
        let (off, on, afterUncontended, reset) = (results[0], results[1], results[2], results[3])
        #expect(off == LockProtocolCounters())
        #expect(on.contendedAcquisitions == 1)
        // The release (counted on entry), the claim of the spinner's flag, its drop (the fast path only read the word).
        #expect(on.readModifyWrites >= 3)
        #expect(on.futexWaits == 0)
        #expect(on.futexWaitsReturnedAtOnce == 0)
        #expect(on.handoffs == 0)
        #expect(afterUncontended == on)
        #expect(reset == LockProtocolCounters())
    }

    /// Counters add up field by field (a bench sums its threads' counters).
    @Test func countersAddFieldByField() {
        let a = LockProtocolCounters(
            contendedAcquisitions: 1,
            readModifyWrites: 2,
            futexWaits: 3,
            futexWaitsReturnedAtOnce: 4,
            futexWakes: 5,
            spinNanoseconds: 6,
            handoffs: 7
        )
        let sum = a + a
        #expect(
            sum
                == LockProtocolCounters(
                    contendedAcquisitions: 2,
                    readModifyWrites: 4,
                    futexWaits: 6,
                    futexWaitsReturnedAtOnce: 8,
                    futexWakes: 10,
                    spinNanoseconds: 12,
                    handoffs: 14
                )
        )
    }
}
