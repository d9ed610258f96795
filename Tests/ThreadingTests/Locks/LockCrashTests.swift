// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import CThreading
import Glibc
import Testing

@testable import Threading

/// Lock misuse that traps, checked in a child process together with the message it prints.
@Suite("Lock misuse traps")
struct LockCrashTests {
    @Test("locking a MutexLock twice on one thread traps, naming the lock")
    func mutexDoubleLock() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let lock = MutexLock(name: "orders")
            lock.lock()
            lock.lock()
        }
        let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(message.contains("MutexLock \"orders\""))
        #expect(message.contains("already holds it"))
    }

    @Test("a timed lock by the owner traps too (error-checking kind)")
    func mutexTimedRelock() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let lock = try! MutexLock(kind: .errorChecking, name: "checked")
            lock.lock()
            _ = lock.lock(timeout: .seconds(1))
        }
        let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(message.contains("MutexLock \"checked\": lock(timeout:)"))
    }

    @Test("unlocking a MutexLock held by another thread traps")
    func mutexForeignUnlock() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let lock = MutexLock(name: "foreign")
            let thread = try! PosixThread { lock.lock() }
            blockingCall { thread.join() }
            lock.unlock()
        }
        let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(message.contains("MutexLock \"foreign\": unlock()"))
        #expect(message.contains("does not hold it (it is held by thread"))
    }

    @Test("unlocking a free MutexLock traps")
    func mutexUnlockFree() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            MutexLock(name: "free").unlock()
        }
        let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(message.contains("does not hold it (it is not locked)"))
    }

    @Test("destroying a held MutexLock traps")
    func mutexDeinitHeld() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            var lock: MutexLock? = MutexLock(name: "dropped")
            lock!.lock()
            lock = nil
        }
        let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(message.contains("MutexLock \"dropped\": deinitialized while held"))
    }

    @Test("the priority-inheriting kind traps on relock and foreign unlock")
    func priorityInheritingMisuse() async {
        await #expect(processExitsWith: .failure) {
            let lock = try! MutexLock(kind: .priorityInheriting, name: "pi")
            lock.lock()
            lock.lock()
        }
        await #expect(processExitsWith: .failure) {
            let lock = try! MutexLock(kind: .priorityInheriting, name: "pi")
            lock.unlock()
        }
    }

    @Test("RecursiveLock: unlock by a non-owner and deinit while held trap")
    func recursiveMisuse() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            RecursiveLock(name: "tree").unlock()
        }
        let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(message.contains("RecursiveLock \"tree\": unlock()"))
        await #expect(processExitsWith: .failure) {
            var lock: RecursiveLock? = RecursiveLock()
            lock!.lock()
            lock = nil
        }
    }

    @Test("SpinLock: double lock, foreign unlock and deinit while held trap")
    func spinMisuse() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let lock = SpinLock(name: "spinner")
            lock.lock()
            lock.lock()
        }
        let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(message.contains("SpinLock \"spinner\": lock()"))
        await #expect(processExitsWith: .failure) {
            SpinLock().unlock()
        }
        await #expect(processExitsWith: .failure) {
            var lock: SpinLock? = SpinLock()
            lock!.lock()
            lock = nil
        }
    }

    @Test("ReadWriteLock: write after write, read after write, unlock of a free lock, deinit while held trap")
    func readWriteMisuse() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let lock = ReadWriteLock(name: "table")
            lock.writeLock()
            lock.writeLock()
        }
        let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(message.contains("ReadWriteLock \"table\": writeLock()"))
        await #expect(processExitsWith: .failure) {
            let lock = ReadWriteLock()
            lock.writeLock()
            lock.readLock()
        }
        await #expect(processExitsWith: .failure) {
            ReadWriteLock().unlock()
        }
        await #expect(processExitsWith: .failure) {
            var lock: ReadWriteLock? = ReadWriteLock()
            lock!.readLock()
            lock = nil
        }
    }
}
