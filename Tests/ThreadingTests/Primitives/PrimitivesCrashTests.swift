// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import CThreading
import Glibc
import Testing

@testable import Threading

/// Misuse that traps, checked in a child process together with the message it prints.
@Suite("Primitives misuse traps")
struct PrimitivesCrashTests {
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

    @Test("a negative semaphore value traps with a clear message")
    func negativeSemaphore() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = Semaphore(value: -1)
        }
        let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(message.contains("Semaphore(value: -1): the initial value must not be negative"))
    }

    @Test("Once.run from inside its own body traps instead of deadlocking")
    func onceRecursion() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let once = Once()
            blockingCall { once.run { once.run {} } }
        }
        let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(message.contains("Once.run(_:): called again from inside its own body"))
    }

    @Test("waiting on a condition without holding the lock traps")
    func conditionWithoutLock() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let lock = MutexLock(name: "cv-lock")
            _ = ConditionVariable().wait(lock, timeout: .seconds(1))
        }
        let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(message.contains("MutexLock \"cv-lock\" is not held"))
    }

    @Test("joining a thread twice, or detaching a joined one, traps")
    func doubleJoin() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let thread = try! PosixThread(name: "once-only") {}
            blockingCall { thread.join() }
            blockingCall { thread.join() }
        }
        let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(message.contains("PosixThread \"once-only\".join(): the thread was already joined"))
        await #expect(processExitsWith: .failure) {
            let thread = try! PosixThread {}
            thread.detach()
            blockingCall { thread.join() }
        }
    }

    @Test("join(timeout:) after a join or a detach traps as join() does; join() after a timed join that got it too")
    func timedJoinMisuse() async {
        let joined = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let thread = try! PosixThread(name: "timed") {}
            blockingCall { thread.join() }
            _ = blockingCall { thread.join(timeout: .seconds(1)) }
        }
        let afterJoin = String(decoding: joined?.standardErrorContent ?? [], as: UTF8.self)
        #expect(afterJoin.contains("PosixThread \"timed\".join(timeout:): the thread was already joined"))
        let detached = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let thread = try! PosixThread(name: "timed") {}
            thread.detach()
            _ = blockingCall { thread.join(timeout: .zero) }
        }
        let afterDetach = String(decoding: detached?.standardErrorContent ?? [], as: UTF8.self)
        #expect(afterDetach.contains("PosixThread \"timed\".join(timeout:): the thread was already detached"))
        let timedThenPlain = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let thread = try! PosixThread(name: "timed") {}
            // Not a trap: the test fails.
            guard blockingCall({ thread.join(timeout: .seconds(20)) != nil }) else { exit(0) }
            blockingCall { thread.join() }
        }
        let afterTimed = String(decoding: timedThenPlain?.standardErrorContent ?? [], as: UTF8.self)
        #expect(afterTimed.contains("PosixThread \"timed\".join(): the thread was already joined"))
    }

    @Test("join(timeout:) from the thread itself traps instead of timing out")
    func timedJoinFromTheThreadItself() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let box = LockedValue<PosixThread<Void>?>(nil)
            let go = Semaphore()
            let thread = try! PosixThread(name: "self-timed") {
                go.wait()
                _ = box.withLock { $0 }!.join(timeout: .seconds(1))
            }
            box.withLock { $0 = thread }
            go.signal()
            _ = cthr_sleep_ns(20_000_000_000)
        }
        let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(message.contains("PosixThread \"self-timed\".join(timeout:): called on thread"), "\(message)")
        #expect(message.contains("for itself (this would deadlock)"))
    }

    @Test("join() while a join(timeout:) waits on another thread traps, naming the timed join")
    func joinDuringTimedJoin() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let release = Semaphore()
            let thread = try! PosixThread(name: "contested") { _ = release.wait(timeout: .seconds(20)) }
            let waiting = Semaphore()
            let timed = try! PosixThread {
                waiting.signal()
                _ = thread.join(timeout: .seconds(20))
            }
            _ = blockingCall { waiting.wait(timeout: .seconds(20)) }
            // Wait until the timed join has claimed the handle.
            let deadline = cthr_clock_now_ns() + 20_000_000_000
            while thread.state.load(ordering: .acquiring) != 3 && cthr_clock_now_ns() < deadline {
                PosixThread.yield()
            }
            blockingCall { thread.join() }
            timed.detach()
        }
        let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(message.contains("PosixThread \"contested\".join(): the thread is being joined by a join(timeout:)"))
    }
}
