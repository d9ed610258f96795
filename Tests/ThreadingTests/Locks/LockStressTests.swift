// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import CTestSupport
import CThreading
import Testing

@testable import Threading

#if canImport(Glibc)
import Glibc
#endif

/// Mixed lock operations under contention: short by default, long with `-Xswiftc -DTHREADING_LONG_TESTS`.
@Suite("Lock stress", .serialized)
struct LockStressTests {
    #if THREADING_LONG_TESTS
    static let rounds = 200_000
    #else
    static let rounds = 2_000
    #endif

    @Test("lock, tryLock and short timed locks mixed on 8 threads keep the count exact and wake every sleeper")
    func mixedOperations() {
        let lock = MutexLock(name: "mixed")
        let counter = Shared(0)
        let timeouts = LockedValue(0)
        let ok = runTogether(8) { index in
            for round in 0..<Self.rounds {
                switch (index + round) % 4 {
                case 0:
                    lock.withLock { counter.value += 1 }
                case 1:
                    while !lock.tryLock() { PosixThread.yield() }
                    counter.value += 1
                    lock.unlock()
                case 2:
                    // Timed waiters that give up exercise the "leave and pass the wake-up on" path.
                    if lock.lock(timeout: .microseconds(5)) {
                        counter.value += 1
                        lock.unlock()
                    } else {
                        timeouts.withLock { $0 += 1 }
                        lock.withLock { counter.value += 1 }
                    }
                default:
                    lock.withLock {
                        counter.value += 1
                        if round % 64 == 0 { PosixThread.yield() }  // let others queue up and sleep
                    }
                }
            }
        }
        #expect(ok)
        #expect(counter.value == 8 * Self.rounds)
        #expect(cthr_lock_waiter_count(lock.word) == 0)
    }

    @Test("statistics toggled while other threads lock: counts stay consistent and the lock keeps working")
    func statisticsToggledUnderLoad() {
        let lock = MutexLock(name: "toggled")
        let counter = Shared(0)
        let ok = runTogether(4) { index in
            for round in 0..<Self.rounds {
                if index == 0 && round % 100 == 0 { lock.statisticsEnabled.toggle() }
                lock.withLock { counter.value += 1 }
            }
        }
        #expect(ok)
        #expect(counter.value == 4 * Self.rounds)
        let stats = lock.statistics
        #expect(stats.acquisitions <= UInt64(4 * Self.rounds))
        #expect(stats.contendedAcquisitions <= stats.acquisitions)
    }

    @Test("a Monitor with many waiters on different predicates wakes each exactly when its turn comes")
    func monitorManyPredicates() {
        let turn = Monitor(0)
        let order = LockedValue([Int]())
        let ok = runTogether(6) { me in
            for lap in 0..<(Self.rounds / 100) {
                let ticket = lap * 6 + me
                let served: Void? = turn.withLock(
                    when: { $0 == ticket },
                    timeout: testDeadline,
                    { value in
                        order.withLock { $0.append(ticket) }
                        value += 1
                    }
                )
                if served == nil { return }
            }
        }
        #expect(ok)
        #expect(order.withLock { $0 } == Array(0..<(6 * (Self.rounds / 100))))
    }

    /// The opt-in membarrier mode (a plain-store unlock, sleepers call `membarrier`) keeps the lock exact under
    /// contention too, and its sleepers do make the calls. The default mode is what every other test runs.
    @Test("in membarrier mode the lock stays exact under contention")
    func membarrierMode() async {
        await #expect(processExitsWith: .success) {
            // A fresh child process: nothing has used a lock yet, so switching the unlock mode is safe here.
            guard cthr_lock_use_membarrier() == 0, MutexLock.usesMembarrier else {
                exit(cthr_test_membarrier_query() & Int32(CTHR_TEST_MEMBARRIER_CMD_PRIVATE_EXPEDITED) == 0 ? 0 : 3)
            }
            let watchdog = try! PosixThread {
                PosixThread.sleep(for: .seconds(30))
                exit(2)  // a deadlock fails the test instead of hanging it
            }
            watchdog.detach()
            let lock = MutexLock(name: "membarrier")
            let counter = Shared(0)
            let threads = (0..<6).map { index in
                try! PosixThread {
                    for round in 0..<20_000 {
                        if (index + round) % 3 == 0 {
                            _ = lock.lock(timeout: .microseconds(2)) ? lock.unlock() : lock.withLock {}
                        }
                        lock.withLock { counter.value += 1 }
                    }
                }
            }
            blockingCall { for thread in threads { thread.join() } }
            if counter.value != 6 * 20_000 { exit(1) }
            // A thread that registers to sleep on a held lock passes the sleeper's barrier: one membarrier call.
            lock.lock()
            let sleeper = try! PosixThread { lock.withLock {} }
            let deadline = ContinuousClock.now + .seconds(20)
            while cthr_lock_waiter_count(lock.word) == 0 && ContinuousClock.now < deadline { PosixThread.yield() }
            PosixThread.sleep(for: .milliseconds(5))
            lock.unlock()
            blockingCall { sleeper.join() }
            if MutexLock.membarrierCalls == 0 { exit(4) }
        }
    }
}
