// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import CTestSupport
import CThreading
import Glibc
import Synchronization
import Testing

@testable import Threading

/// Bad input and misuse of locks whose outcome is a value or a thrown error (the object stays usable);
/// the table in <doc:Misuse> lists each case.
@Suite struct LockMisuseTests {
    /// A negative or zero timeout on a lock another thread holds returns `false` at once (a `try`), for every lock
    /// with a timed variant; the locks stay usable.
    @Test func nonPositiveTimeoutsOnAHeldLockFail() throws {
        let mutex = MutexLock(name: "held")
        let recursive = RecursiveLock(name: "held")
        let rw = ReadWriteLock(name: "held")
        let holding = Semaphore()
        let release = Semaphore()
        let holder = try PosixThread {
            mutex.lock()
            recursive.lock()
            rw.writeLock()
            holding.signal()
            _ = release.wait(timeout: .seconds(20))
            rw.unlock()
            recursive.unlock()
            mutex.unlock()
        }
        #expect(holding.wait(timeout: .seconds(20)))
        for timeout: Duration in [.seconds(-1), .nanoseconds(-1), .zero] {
            #expect(!mutex.lock(timeout: timeout))
            #expect(!recursive.lock(timeout: timeout))
            #expect(!rw.writeLock(timeout: timeout))
            #expect(!rw.readLock(timeout: timeout))
        }
        release.signal()
        holder.join()
        #expect(mutex.lock(timeout: hugeDuration))
        mutex.unlock()
        #expect(recursive.lock(timeout: hugeDuration))
        recursive.unlock()
        #expect(rw.writeLock(timeout: hugeDuration))
        rw.unlock()
    }
}
