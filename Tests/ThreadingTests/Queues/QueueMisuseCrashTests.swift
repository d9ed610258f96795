// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import CThreading
import Glibc
import Testing

@testable import Threading

/// Misuse of queues that traps (see the table in <doc:Misuse>): each exit test checks the message on stderr.
@Suite struct QueueMisuseCrashTests {
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
        let text = exitTestText(result)
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
        let text = exitTestText(result)
        #expect(text.contains("Threading: deadlock: a sync onto the main queue from thread"), "\(text)")
        #expect(text.contains("blocked in WorkGroup.wait() for the group of the task that thread is running"))
    }

    /// The main thread waits to lock a lock whose holder is blocked in a `sync` onto the main queue: any wait of the
    /// library whose owner is known, not only a join, is diagnosed (whichever of the two blocks second traps).
    @Test func mainThreadLockWaitForAThreadInAMainQueueSyncTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            RuntimeThread.designateMainForTesting()
            startExitTestWatchdog()
            let books = MutexLock(name: "books")
            let locked = Semaphore()
            let worker = try! PosixThread(name: "handler") {
                books.lock()
                locked.signal()
                MainQueue.shared.sync {}
                books.unlock()
            }
            _ = blockingCall { locked.wait(timeout: .seconds(20)) }
            books.lock()
            withExtendedLifetime(worker) {}
        }
        let text = exitTestText(result)
        #expect(text.contains("Threading: deadlock: the main thread waits to lock MutexLock \"books\""), "\(text)")
        #expect(text.contains("which only thread 'handler'"), "\(text)")
        #expect(text.contains("is blocked in a sync onto the main queue 'threading.main'"), "\(text)")
    }

    /// The main thread waits on a semaphore (anyone may signal it, so no deadlock is certain) while another thread is
    /// blocked in a `sync` onto the main queue: after a second one `stalled wait` line names the main thread's wait,
    /// the main queue and the syncing thread; here a third thread signals after 3 s and everything ends.
    @Test func mainThreadSemaphoreWaitWhileAThreadSyncsOntoTheMainQueueIsReported() async {
        let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
            RuntimeThread.designateMainForTesting()
            startExitTestWatchdog()
            let ready = Semaphore()
            let worker = try! PosixThread(name: "handler") { MainQueue.shared.sync {} }
            let rescuer = try! PosixThread {
                PosixThread.sleep(for: .seconds(3))
                ready.signal()
            }
            blockingCall { ready.wait() }
            while !MainQueue.drain(until: .now + .milliseconds(5)) {}
            blockingCall { worker.join() }
            blockingCall { rescuer.join() }
            exit(0)
        }
        let text = exitTestText(result)
        #expect(text.contains("Threading: stalled wait: the main thread (tid"), "\(text)")
        #expect(text.contains("waits on Semaphore at"), "\(text)")
        #expect(
            text.contains("while the main queue 'threading.main' holds a sync from thread 'handler'"),
            "\(text)"
        )
        #expect(text.split(separator: "stalled wait", omittingEmptySubsequences: false).count == 2, "one: \(text)")
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
        #expect(exitTestText(result).contains("width must be ≥ 1"), "\(exitTestText(result))")
    }

    @Test func negativeWidthConcurrentQueueTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = ConcurrentQueue(label: "negative", width: -3)
        }
        #expect(exitTestText(result).contains("width must be ≥ 1"), "\(exitTestText(result))")
    }

    @Test func emptyQueuePoolTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = QueuePool(label: "none", count: 0)
        }
        #expect(exitTestText(result).contains("count must be ≥ 1"), "\(exitTestText(result))")
    }

    /// A queue-pool size above `QueuePool.maximumCount` traps with the argument and the limit (it corrupted the
    /// heap before).
    @Test func oversizedQueuePoolTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = QueuePool(label: "huge", count: Int.max)
        }
        let text = exitTestText(result)
        #expect(text.contains("QueuePool(label: \"huge\", count: \(Int.max)): count must be ≤ 4096"), "\(text)")
    }

    /// `suspend()` on the process-wide concurrent queue is refused with a message naming the queue: it would stall
    /// every other user of it.
    @Test func suspendingTheGlobalQueueTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            ConcurrentQueue.global(qos: .utility).suspend()
        }
        let text = exitTestText(result)
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
        let text = exitTestText(result)
        #expect(text.contains("(QueuePool.shared(for: .background)) refused: it is a process-wide queue"), "\(text)")
        #expect(text.contains("suspend() of queue 'threading.pool.background."), "\(text)")
    }

    @Test func zeroTimerIntervalTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = QueueTimer(queue: SerialQueue(label: "t"), delay: .zero, repeating: .zero) {}
        }
        #expect(exitTestText(result).contains("the interval must be positive"), "\(exitTestText(result))")
    }

    @Test func negativeTimerIntervalTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = QueueTimer(queue: SerialQueue(label: "t"), delay: .zero, repeating: .milliseconds(-5)) {}
        }
        #expect(exitTestText(result).contains("the interval must be positive"), "\(exitTestText(result))")
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
        let text = exitTestText(result)
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
        #expect(exitTestText(result).contains("must be called on the main thread"), "\(exitTestText(result))")
    }
}
