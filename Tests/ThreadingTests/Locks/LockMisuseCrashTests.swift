// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import CThreading
import Glibc
import Testing

@testable import Threading

/// Misuse of locks that traps (see the table in <doc:Misuse>): each exit test checks the message on stderr.
@Suite struct LockMisuseCrashTests {
    @Test func recursiveLockUnlockWithoutLockTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let lock = RecursiveLock(name: "over")
            lock.lock()
            lock.unlock()
            lock.unlock()
        }
        #expect(exitTestText(result).contains("which does not hold it"), "\(exitTestText(result))")
    }

    /// Another thread's recursive lock, even nested, cannot be released: the message names the owner.
    @Test func recursiveLockForeignUnlockTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let lock = RecursiveLock(name: "theirs")
            lock.lock()
            lock.lock()
            let thread = try! PosixThread { lock.unlock() }
            blockingCall { thread.join() }
        }
        #expect(
            exitTestText(result).contains("RecursiveLock \"theirs\": unlock() on thread"),
            "\(exitTestText(result))"
        )
        #expect(exitTestText(result).contains("which does not hold it (it is held by thread"))
    }

    /// Another thread's write hold cannot be released: the message names the writer.
    @Test func readWriteLockForeignWriteUnlockTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let lock = ReadWriteLock(name: "written")
            lock.writeLock()
            let thread = try! PosixThread { lock.unlock() }
            blockingCall { thread.join() }
        }
        #expect(
            exitTestText(result).contains("ReadWriteLock \"written\": unlock() on thread"),
            "\(exitTestText(result))"
        )
        #expect(exitTestText(result).contains("holds the write lock)"))
    }

    /// A read hold upgraded to a write hold on the same thread would wait for itself: it traps, in release builds too.
    @Test func readWriteLockUpgradeTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let lock = ReadWriteLock(name: "routes")
            lock.readLock()
            lock.writeLock()
        }
        #expect(exitTestText(result).contains("ReadWriteLock \"routes\": writeLock()"), "\(exitTestText(result))")
        #expect(exitTestText(result).contains("holds a read lock on it: a read-to-write upgrade would wait for itself"))
    }

    /// `tryWriteLock()` by a reader of the same lock is an upgrade too: it returns false, and the read hold stays.
    @Test func readWriteLockTryUpgradeFails() {
        let lock = ReadWriteLock(name: "try-upgrade")
        lock.readLock()
        #expect(!lock.tryWriteLock())
        lock.unlock()
        #expect(lock.tryWriteLock())
        lock.unlock()
    }

    /// A thread that holds no read hold unlocks while another thread reads: refused with a trap, instead of
    /// releasing the other thread's hold (which corrupted the lock in release builds).
    @Test func readWriteLockStrayUnlockWhileAnotherThreadReadsTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let lock = ReadWriteLock(name: "stray")
            let reading = Semaphore()
            let reader = try! PosixThread {
                lock.readLock()
                reading.signal()
                PosixThread.sleep(for: .seconds(20))
            }
            reader.detach()
            _ = blockingCall { reading.wait(timeout: .seconds(20)) }
            lock.unlock()
        }
        #expect(exitTestText(result).contains("ReadWriteLock \"stray\": unlock() on thread"), "\(exitTestText(result))")
        #expect(exitTestText(result).contains("which does not hold it (no read or write hold)"))
    }

    @Test func lockedValueReentryTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let value = LockedValue(0, name: "reentered")
            value.withLock { _ in value.withLock { $0 += 1 } }
        }
        #expect(exitTestText(result).contains("reentered"), "\(exitTestText(result))")
    }

    @Test func monitorReentryTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let monitor = Monitor(0, name: "nested-monitor")
            monitor.withLock { _ in monitor.withLock { $0 += 1 } }
        }
        #expect(exitTestText(result).contains("nested-monitor"), "\(exitTestText(result))")
    }

    @Test func semaphoreAboveMaximumTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = Semaphore(value: Int(Int32.max) + 1)
        }
        #expect(exitTestText(result).contains("exceeds SEM_VALUE_MAX"), "\(exitTestText(result))")
    }

    @Test func semaphoreSignalPastMaximumTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let semaphore = Semaphore(value: Semaphore.maximumValue)
            semaphore.signal()
        }
        #expect(
            exitTestText(result).contains("Semaphore.signal(): sem_post failed with EOVERFLOW"),
            "\(exitTestText(result))"
        )
    }
}
