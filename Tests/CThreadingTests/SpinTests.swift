// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import CThreading
import Glibc
import Testing

/// Threads and increments per thread of the counter tests (4 x 100,000: enough increments for a lost update to show).
let counterThreads = 4
let incrementsPerThread = 100_000

/// Runs `counterThreads` threads, started together, that each do `incrementsPerThread` increments of a plain
/// (non-atomic) counter between `lock()` and `unlock()`. Returns the final count, or nil if a thread did not finish.
func countUnderLock(lock: @escaping @Sendable () -> Void, unlock: @escaping @Sendable () -> Void) -> Int? {
    let counter = SharedCell<Int>(0)
    let gate = StartGate()
    let threads = (0..<counterThreads).map { _ in
        spawnVoid {
            guard gate.arriveAndWait() else { return }
            for _ in 0..<incrementsPerThread {
                lock()
                counter.pointer.pointee += 1
                unlock()
            }
        }
    }
    guard threads.allSatisfy({ $0 != nil }), gate.release(counterThreads) else { return nil }
    // Generous: under the thread sanitizer on two shared cores this takes seconds, not milliseconds.
    for thread in threads where thread?.joined(timeoutNs: 120_000_000_000) != true {
        return nil
    }
    return counter.pointer.pointee
}

@Suite(.serialized) struct SpinTests {
    @Test func counterStaysExactUnderContention() {
        let spin = SharedCell(cthr_spin_t())
        #expect(cthr_spin_init(spin.pointer) == 0)
        let count = countUnderLock(
            lock: { _ = cthr_spin_lock(spin.pointer) },
            unlock: { _ = cthr_spin_unlock(spin.pointer) }
        )
        #expect(count == counterThreads * incrementsPerThread)
    }

    @Test func trylockAndUnlockStates() throws {
        let spin = SharedCell(cthr_spin_t())
        #expect(cthr_spin_init(spin.pointer) == 0)
        #expect(cthr_spin_trylock(spin.pointer) == 0)
        #expect(cthr_spin_trylock(spin.pointer) == EBUSY)
        let fromOtherThread = SharedCell<Int32>(-1)
        let spawned = spawnVoid { fromOtherThread.pointer.pointee = cthr_spin_trylock(spin.pointer) }
        #expect(try #require(spawned).joined())
        #expect(fromOtherThread.pointer.pointee == EBUSY)
        #expect(cthr_spin_unlock(spin.pointer) == 0)
        #expect(cthr_spin_unlock(spin.pointer) == EPERM)
        #expect(cthr_spin_lock(spin.pointer) == 0)
        #expect(cthr_spin_unlock(spin.pointer) == 0)
    }

    @Test func zeroInitialisedLockIsFree() {
        let spin = SharedCell(cthr_spin_t())
        #expect(cthr_spin_trylock(spin.pointer) == 0)
        #expect(cthr_spin_unlock(spin.pointer) == 0)
    }

    @Test func waiterGetsTheLockOnceReleased() throws {
        let spin = SharedCell(cthr_spin_t())
        #expect(cthr_spin_lock(spin.pointer) == 0)
        let acquired = Event()
        let spawned = spawnVoid {
            // Spins, backs off, then yields until the holder (this test) releases the lock.
            guard cthr_spin_lock(spin.pointer) == 0 else { return }
            acquired.signal()
            _ = cthr_spin_unlock(spin.pointer)
        }
        let waiter = try #require(spawned)
        _ = cthr_sleep_ns(20_000_000)
        #expect(cthr_spin_unlock(spin.pointer) == 0)
        #expect(acquired.wait())
        #expect(waiter.joined())
    }

    @Test func theWordNamesTheOwnerAndOnlyTheOwnerUnlocks() throws {
        let spin = SharedCell(cthr_spin_t())
        #expect(cthr_spin_owner(spin.pointer) == 0)
        #expect(cthr_spin_fast_lock(spin.pointer))
        #expect(cthr_spin_owner(spin.pointer) == cthr_lock_self())
        #expect(cthr_spin_lock(spin.pointer) == EDEADLK)
        let fromOtherThread = SharedCell<Int32>(-1)
        let spawned = spawnVoid {
            fromOtherThread.pointer.pointee = cthr_spin_fast_unlock(spin.pointer) ? 0 : cthr_spin_unlock(spin.pointer)
        }
        #expect(try #require(spawned).joined())
        #expect(fromOtherThread.pointer.pointee == EPERM)
        #expect(cthr_spin_owner(spin.pointer) == cthr_lock_self())
        #expect(cthr_spin_fast_unlock(spin.pointer))
        #expect(cthr_spin_owner(spin.pointer) == 0)
        #expect(!cthr_spin_fast_unlock(spin.pointer))
    }

    @Test func theSlowBitSendsBothFastPathsToTheSlowOnes() {
        let spin = SharedCell(cthr_spin_t())
        #expect(cthr_spin_set_slow(spin.pointer, true) == EPERM)
        #expect(cthr_spin_lock(spin.pointer) == 0)
        #expect(cthr_spin_set_slow(spin.pointer, true) == 0)
        #expect(!cthr_spin_fast_unlock(spin.pointer))
        #expect(cthr_spin_unlock(spin.pointer) == 0)
        #expect(!cthr_spin_fast_lock(spin.pointer))
        #expect(cthr_spin_trylock(spin.pointer) == 0)
        #expect(cthr_spin_set_slow(spin.pointer, false) == 0)
        #expect(cthr_spin_fast_unlock(spin.pointer))
        #expect(spin.pointer.pointee.state.value == 0)
    }

    @Test func badArgumentsReturnEINVAL() {
        #expect(cthr_spin_owner(nil) == 0)
        #expect(cthr_spin_set_slow(nil, true) == EINVAL)
        #expect(cthr_spin_init(nil) == EINVAL)
        #expect(cthr_spin_lock(nil) == EINVAL)
        #expect(cthr_spin_trylock(nil) == EINVAL)
        #expect(cthr_spin_unlock(nil) == EINVAL)
    }
}
