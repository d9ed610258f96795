// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import CThreading
import Glibc
import Testing

@testable import Threading

/// Misuse that traps, not covered by the concept suites' own crash tests (see the table in <doc:Misuse>): each
/// exit test checks the message on stderr.
@Suite struct MisuseCrashTests {
    static func text(_ result: ExitTest.Result?) -> String {
        String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
    }

    // MARK: Threads

    @Test func joinFromTheThreadItselfTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let box = LockedValue<PosixThread<Void>?>(nil)
            let go = Semaphore()
            let thread = try! PosixThread(name: "self-join") {
                go.wait()
                box.withLock { $0 }!.join()
            }
            box.withLock { $0 = thread }
            go.signal()
            _ = cthr_sleep_ns(20_000_000_000)
        }
        #expect(Self.text(result).contains("called on thread"), "\(Self.text(result))")
        #expect(Self.text(result).contains("for itself (this would deadlock)"))
    }

    @Test func detachTwiceTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let thread = try! PosixThread(name: "twice") {}
            thread.detach()
            thread.detach()
        }
        #expect(Self.text(result).contains("PosixThread \"twice\".detach(): the thread was already detached"))
    }

    // MARK: Locks

    @Test func recursiveLockUnlockWithoutLockTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let lock = RecursiveLock(name: "over")
            lock.lock()
            lock.unlock()
            lock.unlock()
        }
        #expect(Self.text(result).contains("which does not hold it"), "\(Self.text(result))")
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
        #expect(Self.text(result).contains("RecursiveLock \"theirs\": unlock() on thread"), "\(Self.text(result))")
        #expect(Self.text(result).contains("which does not hold it (it is held by thread"))
    }

    /// Another thread's write hold cannot be released: the message names the writer.
    @Test func readWriteLockForeignWriteUnlockTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let lock = ReadWriteLock(name: "written")
            lock.writeLock()
            let thread = try! PosixThread { lock.unlock() }
            blockingCall { thread.join() }
        }
        #expect(Self.text(result).contains("ReadWriteLock \"written\": unlock() on thread"), "\(Self.text(result))")
        #expect(Self.text(result).contains("holds the write lock)"))
    }

    /// A read hold upgraded to a write hold on the same thread would wait for itself: it traps, in release builds too.
    @Test func readWriteLockUpgradeTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let lock = ReadWriteLock(name: "routes")
            lock.readLock()
            lock.writeLock()
        }
        #expect(Self.text(result).contains("ReadWriteLock \"routes\": writeLock()"), "\(Self.text(result))")
        #expect(Self.text(result).contains("holds a read lock on it: a read-to-write upgrade would wait for itself"))
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
        #expect(Self.text(result).contains("ReadWriteLock \"stray\": unlock() on thread"), "\(Self.text(result))")
        #expect(Self.text(result).contains("which does not hold it (no read or write hold)"))
    }

    @Test func lockedValueReentryTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let value = LockedValue(0, name: "reentered")
            value.withLock { _ in value.withLock { $0 += 1 } }
        }
        #expect(Self.text(result).contains("reentered"), "\(Self.text(result))")
    }

    @Test func monitorReentryTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let monitor = Monitor(0, name: "nested-monitor")
            monitor.withLock { _ in monitor.withLock { $0 += 1 } }
        }
        #expect(Self.text(result).contains("nested-monitor"), "\(Self.text(result))")
    }

    @Test func semaphoreAboveMaximumTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = Semaphore(value: Int(Int32.max) + 1)
        }
        #expect(Self.text(result).contains("exceeds SEM_VALUE_MAX"), "\(Self.text(result))")
    }

    @Test func semaphoreSignalPastMaximumTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let semaphore = Semaphore(value: Semaphore.maximumValue)
            semaphore.signal()
        }
        #expect(
            Self.text(result).contains("Semaphore.signal(): sem_post failed with EOVERFLOW"),
            "\(Self.text(result))"
        )
    }

    // MARK: RCU

    @Test func unregisterInsideReadSectionTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let value = RCUValue(1)
            value.read { _ in _ = RCU.unregisterCurrentThread() }
        }
        #expect(Self.text(result).contains("RCU.unregisterCurrentThread() inside a read section"))
    }

    // MARK: Queues

    /// A server's main thread joins a worker that then syncs onto the main queue: neither can go on. Whichever blocks
    /// second stops the program with a message naming both (the worker signals first, then syncs, while the main
    /// thread joins; either may block first).
    @Test func mainQueueSyncWhileTheMainThreadJoinsTheSyncingThreadTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            RuntimeThread.designateMainForTesting()
            let watchdog = try! PosixThread {
                PosixThread.sleep(for: .seconds(20))
                exit(3)  // no diagnosis: fails the test on its missing message instead of hanging it
            }
            watchdog.detach()
            let started = Semaphore()
            let worker = try! PosixThread(name: "handler") {
                started.signal()
                MainQueue.shared.sync {}
            }
            _ = blockingCall { started.wait(timeout: .seconds(20)) }
            blockingCall { worker.join() }
        }
        let text = Self.text(result)
        #expect(text.contains("Threading: deadlock: a sync onto the main queue from thread 'handler'"), "\(text)")
        #expect(text.contains("blocked in PosixThread \"handler\".join() of that thread"), "\(text)")
    }

    /// The main thread waits (no deadline) for a group whose task syncs onto the main queue: the same diagnosis.
    @Test func mainQueueSyncFromATaskOfTheGroupTheMainThreadWaitsForTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            RuntimeThread.designateMainForTesting()
            let watchdog = try! PosixThread {
                PosixThread.sleep(for: .seconds(20))
                exit(3)
            }
            watchdog.detach()
            let group = WorkGroup()
            ConcurrentQueue(label: "requests").async(group: group) { MainQueue.shared.sync {} }
            _ = blockingCall { group.wait() }
        }
        let text = Self.text(result)
        #expect(text.contains("Threading: deadlock: a sync onto the main queue from thread"), "\(text)")
        #expect(text.contains("blocked in WorkGroup.wait() for the group of the task that thread is running"))
    }

    /// The same shapes that do complete are left alone: the main thread joins a worker whose main-queue sync it
    /// serves first, and waits with a deadline for a group whose task syncs (the wait times out, then the main queue
    /// runs the sync).
    @Test func mainQueueSyncThatCanCompleteIsNotDiagnosed() async {
        await #expect(processExitsWith: .success) {
            RuntimeThread.designateMainForTesting()
            let worker = try! PosixThread { MainQueue.shared.sync { 7 } }
            while !MainQueue.drain(until: .now + .milliseconds(5)) {}
            guard blockingCall({ worker.join() == 7 }) else { exit(1) }
            let group = WorkGroup()
            ConcurrentQueue(label: "timed").async(group: group) { MainQueue.shared.sync {} }
            _ = blockingCall { group.wait(timeout: .milliseconds(20)) }
            while !blockingCall({ group.wait(timeout: .zero) }) { _ = MainQueue.drain(until: .now + .milliseconds(5)) }
            exit(0)
        }
    }

    @Test func zeroWidthConcurrentQueueTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = ConcurrentQueue(label: "narrow", width: 0)
        }
        #expect(Self.text(result).contains("width must be ≥ 1"), "\(Self.text(result))")
    }

    @Test func negativeWidthConcurrentQueueTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = ConcurrentQueue(label: "negative", width: -3)
        }
        #expect(Self.text(result).contains("width must be ≥ 1"), "\(Self.text(result))")
    }

    @Test func emptyQueuePoolTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = QueuePool(label: "none", count: 0)
        }
        #expect(Self.text(result).contains("count must be ≥ 1"), "\(Self.text(result))")
    }

    /// A queue-pool size above `QueuePool.maximumCount` traps with the argument and the limit (it corrupted the
    /// heap before).
    @Test func oversizedQueuePoolTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = QueuePool(label: "huge", count: Int.max)
        }
        let text = Self.text(result)
        #expect(text.contains("QueuePool(label: \"huge\", count: \(Int.max)): count must be ≤ 4096"), "\(text)")
    }

    /// `suspend()` on the process-wide concurrent queue is refused with a message naming the queue: it would stall
    /// every other user of it.
    @Test func suspendingTheGlobalQueueTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            ConcurrentQueue.global(qos: .utility).suspend()
        }
        let text = Self.text(result)
        #expect(
            text.contains(
                "suspend() of queue 'threading.global.utility' (ConcurrentQueue.global(qos: .utility)) refused: it "
                    + "is a process-wide queue"
            ),
            "\(text)"
        )
    }

    /// The same for a queue of a shared `QueuePool`.
    @Test func suspendingASharedPoolQueueTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            QueuePool.shared(for: .background).next().suspend()
        }
        let text = Self.text(result)
        #expect(text.contains("(QueuePool.shared(for: .background)) refused: it is a process-wide queue"), "\(text)")
        #expect(text.contains("suspend() of queue 'threading.pool.background."), "\(text)")
    }

    @Test func zeroTimerIntervalTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = QueueTimer(queue: SerialQueue(label: "t"), delay: .zero, repeating: .zero) {}
        }
        #expect(Self.text(result).contains("the interval must be positive"), "\(Self.text(result))")
    }

    @Test func negativeTimerIntervalTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = QueueTimer(queue: SerialQueue(label: "t"), delay: .zero, repeating: .milliseconds(-5)) {}
        }
        #expect(Self.text(result).contains("the interval must be positive"), "\(Self.text(result))")
    }

    /// `MainQueue.run()` from a main-queue task could never run a task: the task holds the main queue.
    @Test func mainQueueRunFromAMainQueueTaskTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            RuntimeThread.designateMainForTesting()
            let watchdog = try! PosixThread {
                PosixThread.sleep(for: .seconds(20))
                exit(0)  // no diagnosis: a successful exit fails the test instead of hanging it
            }
            watchdog.detach()
            MainQueue.shared.async { MainQueue.run() }
            MainQueue.drain(until: .now + .seconds(20))
        }
        let text = Self.text(result)
        #expect(text.contains("Threading: deadlock: MainQueue.run() on thread"), "\(text)")
        #expect(text.contains("main thread)"), "\(text)")
        #expect(text.contains("already executing the main queue 'threading.main'"), "\(text)")
        #expect(text.contains("queue stack: 'threading.main'"), "\(text)")
    }

    @Test func mainQueueDrainOffTheMainThreadTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let thread = try! PosixThread { _ = MainQueue.runUntilIdle() }
            blockingCall { thread.join() }
        }
        #expect(Self.text(result).contains("must be called on the main thread"), "\(Self.text(result))")
    }

    // MARK: Jobs

    @Test func lowerWidthBelowOneTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let queue = JobQueue(name: "shrink", maxConcurrentJobs: 2)
            queue.maxConcurrentJobs = 0
        }
        #expect(Self.text(result).contains("maxConcurrentJobs = 0: must be ≥ 1"), "\(Self.text(result))")
    }

    @Test func finishOnASynchronousResultJobTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let job = ResultJob<Int>(name: "sync-result") { _ in 1 }
            job.finish(returning: 2)
        }
        #expect(Self.text(result).contains("is not asynchronous"), "\(Self.text(result))")
    }
}
