// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import CThreading
import Glibc
import Testing

/// Every mutex kind of `cthr_mutex_kind_t`.
let allMutexKinds: [Int32] = [
    Int32(CTHR_MUTEX_NORMAL.rawValue), Int32(CTHR_MUTEX_ERRORCHECK.rawValue),
    Int32(CTHR_MUTEX_RECURSIVE.rawValue), Int32(CTHR_MUTEX_PRIO_INHERIT.rawValue),
]

/// A heap-allocated, initialised mutex of `kind`.
func makeMutex(_ kind: Int32) -> SharedCell<cthr_mutex_t> {
    let mutex = SharedCell(cthr_mutex_t())
    let code = cthr_mutex_init(mutex.pointer, kind)
    precondition(code == 0, "cthr_mutex_init(\(kind)) failed: \(code)")
    return mutex
}

/// Locks `mutex` on another thread and holds it until `release` is signalled (or a deadline passes).
/// Returns once the holder has the lock.
func holdOnAnotherThread(_ mutex: SharedCell<cthr_mutex_t>, until release: Event) -> TestThread? {
    let held = Event()
    let thread = spawnVoid {
        guard cthr_mutex_lock(mutex.pointer) == 0 else { return }
        held.signal()
        _ = release.wait()
        _ = cthr_mutex_unlock(mutex.pointer)
    }
    guard thread != nil, held.wait() else { return nil }
    return thread
}

@Suite(.serialized) struct MutexTests {
    @Test(arguments: allMutexKinds)
    func lockUnlockAndDestroy(kind: Int32) {
        let mutex = makeMutex(kind)
        #expect(cthr_mutex_lock(mutex.pointer) == 0)
        #expect(cthr_mutex_unlock(mutex.pointer) == 0)
        #expect(cthr_mutex_trylock(mutex.pointer) == 0)
        #expect(cthr_mutex_unlock(mutex.pointer) == 0)
        #expect(cthr_mutex_destroy(mutex.pointer) == 0)
    }

    @Test(arguments: allMutexKinds)
    func trylockOnAMutexHeldElsewhereIsBusy(kind: Int32) throws {
        let mutex = makeMutex(kind)
        let release = Event()
        let holder = try #require(holdOnAnotherThread(mutex, until: release))
        #expect(cthr_mutex_trylock(mutex.pointer) == EBUSY)
        release.signal()
        #expect(holder.joined())
        #expect(cthr_mutex_destroy(mutex.pointer) == 0)
    }

    @Test(arguments: [Int32(CTHR_MUTEX_ERRORCHECK.rawValue), Int32(CTHR_MUTEX_PRIO_INHERIT.rawValue)])
    func errorCheckingKindsReportMisuse(kind: Int32) throws {
        let mutex = makeMutex(kind)
        #expect(cthr_mutex_lock(mutex.pointer) == 0)
        #expect(cthr_mutex_lock(mutex.pointer) == EDEADLK)
        #expect(cthr_mutex_timedlock(mutex.pointer, cthr_clock_deadline_after(1_000_000)) == EDEADLK)
        #expect(cthr_mutex_trylock(mutex.pointer) == EBUSY)
        let nonOwnerUnlock = SharedCell<Int32>(-1)
        let spawned = spawnVoid { nonOwnerUnlock.pointer.pointee = cthr_mutex_unlock(mutex.pointer) }
        #expect(try #require(spawned).joined())
        #expect(nonOwnerUnlock.pointer.pointee == EPERM)
        #expect(cthr_mutex_unlock(mutex.pointer) == 0)
        #expect(cthr_mutex_unlock(mutex.pointer) == EPERM)
        #expect(cthr_mutex_destroy(mutex.pointer) == 0)
    }

    @Test func recursiveKindRelocksAndCountsUnlocks() {
        let mutex = makeMutex(Int32(CTHR_MUTEX_RECURSIVE.rawValue))
        #expect(cthr_mutex_lock(mutex.pointer) == 0)
        #expect(cthr_mutex_lock(mutex.pointer) == 0)
        #expect(cthr_mutex_trylock(mutex.pointer) == 0)
        #expect(cthr_mutex_unlock(mutex.pointer) == 0)
        #expect(cthr_mutex_unlock(mutex.pointer) == 0)
        #expect(cthr_mutex_unlock(mutex.pointer) == 0)
        #expect(cthr_mutex_unlock(mutex.pointer) == EPERM)
        #expect(cthr_mutex_destroy(mutex.pointer) == 0)
    }

    @Test(arguments: allMutexKinds)
    func timedLockExpiresAfterItsTimeout(kind: Int32) throws {
        let mutex = makeMutex(kind)
        let release = Event()
        let holder = try #require(holdOnAnotherThread(mutex, until: release))
        let timeout: UInt64 = 50_000_000
        let start = cthr_clock_now_ns()
        let code = cthr_mutex_timedlock(mutex.pointer, start + timeout)
        let elapsed = elapsedNs(since: start)
        #expect(code == ETIMEDOUT)
        #expect(elapsed >= timeout)
        #expect(elapsed < generousTimeoutNs)
        release.signal()
        #expect(holder.joined())
        #expect(cthr_mutex_destroy(mutex.pointer) == 0)
    }

    @Test(arguments: allMutexKinds)
    func timedLockSucceedsWhenReleasedInTime(kind: Int32) throws {
        let mutex = makeMutex(kind)
        let release = Event()
        let holder = try #require(holdOnAnotherThread(mutex, until: release))
        let releaser = try #require(
            spawnVoid {
                _ = cthr_sleep_ns(20_000_000)
                release.signal()
            }
        )
        #expect(cthr_mutex_timedlock(mutex.pointer, cthr_clock_deadline_after(generousTimeoutNs)) == 0)
        #expect(cthr_mutex_unlock(mutex.pointer) == 0)
        #expect(releaser.joined())
        #expect(holder.joined())
        #expect(cthr_mutex_destroy(mutex.pointer) == 0)
    }

    @Test(arguments: allMutexKinds)
    func pastDeadlineStillTakesAFreeMutex(kind: Int32) {
        let mutex = makeMutex(kind)
        #expect(cthr_mutex_timedlock(mutex.pointer, 0) == 0)
        #expect(cthr_mutex_unlock(mutex.pointer) == 0)
        #expect(cthr_mutex_timedlock(mutex.pointer, UInt64.max) == 0)
        #expect(cthr_mutex_unlock(mutex.pointer) == 0)
        #expect(cthr_mutex_destroy(mutex.pointer) == 0)
    }

    @Test func destroyingAHeldMutexIsBusy() {
        let mutex = makeMutex(Int32(CTHR_MUTEX_ERRORCHECK.rawValue))
        #expect(cthr_mutex_lock(mutex.pointer) == 0)
        #expect(cthr_mutex_destroy(mutex.pointer) == EBUSY)
        #expect(cthr_mutex_unlock(mutex.pointer) == 0)
        #expect(cthr_mutex_destroy(mutex.pointer) == 0)
    }

    @Test func badArgumentsReturnEINVAL() {
        let mutex = SharedCell(cthr_mutex_t())
        #expect(cthr_mutex_init(nil, Int32(CTHR_MUTEX_NORMAL.rawValue)) == EINVAL)
        #expect(cthr_mutex_init(mutex.pointer, -1) == EINVAL)
        #expect(cthr_mutex_init(mutex.pointer, 4) == EINVAL)
        #expect(cthr_mutex_destroy(nil) == EINVAL)
        #expect(cthr_mutex_lock(nil) == EINVAL)
        #expect(cthr_mutex_trylock(nil) == EINVAL)
        #expect(cthr_mutex_timedlock(nil, 0) == EINVAL)
        #expect(cthr_mutex_unlock(nil) == EINVAL)
    }
}
