// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import Testing

@testable import Threading

/// The eight nested serial/concurrent × sync/async cases, with the orders each allows.
/// ("serial, sync in async" deadlocks: it is an exit test in QueueCrashTests.)
@Suite(.serialized) struct QueueOrderingTests {
    @Test func serialSync() {
        let queue = SerialQueue(label: "order.serial.sync")
        let log = TestLog()
        queue.sync { log.append(1) }
        log.append(2)
        queue.sync { log.append(3) }
        log.append(4)
        #expect(log.values == [1, 2, 3, 4])
    }

    @Test func serialAsync() {
        let queue = SerialQueue(label: "order.serial.async")
        let log = TestLog()
        queue.async { log.append(1) }
        log.append(2)
        queue.async { log.append(3) }
        log.append(4)
        #expect(log.wait(for: 4))
        // Allowed orders: "1234, 2134, 1243, 2413, 2143".
        let allowed: Set<[Int]> = [[1, 2, 3, 4], [2, 1, 3, 4], [1, 2, 4, 3], [2, 4, 1, 3], [2, 1, 4, 3]]
        #expect(allowed.contains(log.values), "order \(log.values)")
    }

    @Test func serialAsyncInSync() {
        let queue = SerialQueue(label: "order.serial.asyncInSync")
        let log = TestLog()
        log.append(1)
        queue.sync {
            log.append(2)
            queue.async { log.append(3) }
            log.append(4)
        }
        log.append(5)
        #expect(log.wait(for: 5))
        // Allowed orders: "12345, 12435, 12453".
        let allowed: Set<[Int]> = [[1, 2, 3, 4, 5], [1, 2, 4, 3, 5], [1, 2, 4, 5, 3]]
        #expect(allowed.contains(log.values), "order \(log.values)")
        // On a serial queue 3 cannot start before the sync that submitted it returned.
        #expect(Array(log.values.prefix(3)) == [1, 2, 4])
    }

    @Test func concurrentSync() {
        let queue = ConcurrentQueue(label: "order.concurrent.sync")
        let log = TestLog()
        queue.sync { log.append(1) }
        log.append(2)
        queue.sync { log.append(3) }
        log.append(4)
        #expect(log.values == [1, 2, 3, 4])
    }

    @Test func concurrentAsync() {
        let queue = ConcurrentQueue(label: "order.concurrent.async")
        let log = TestLog()
        queue.async { log.append(1) }
        log.append(2)
        queue.async { log.append(3) }
        log.append(4)
        #expect(log.wait(for: 4))
        // Allowed orders: "only 2 before 4 is guaranteed; 1 and 3 may fall anywhere" (it lists 2413, 2431, 2143, 2341,
        // 2134, 2314 as examples). 3 is submitted after 2 was logged, so 2 also precedes 3.
        let values = log.values
        #expect(values.sorted() == [1, 2, 3, 4])
        #expect(values.firstIndex(of: 2)! < values.firstIndex(of: 4)!)
        #expect(values.firstIndex(of: 2)! < values.firstIndex(of: 3)!)
    }

    @Test func concurrentSyncInAsync() {
        let queue = ConcurrentQueue(label: "order.concurrent.syncInAsync")
        let log = TestLog()
        log.append(1)
        queue.async {
            log.append(2)
            queue.sync { log.append(3) }
            log.append(4)
        }
        log.append(5)
        #expect(log.wait(for: 5))
        // Allowed orders: "12345, 12534, 12354, 15234" — no deadlock on a concurrent queue.
        let allowed: Set<[Int]> = [[1, 2, 3, 4, 5], [1, 2, 5, 3, 4], [1, 2, 3, 5, 4], [1, 5, 2, 3, 4]]
        #expect(allowed.contains(log.values), "order \(log.values)")
    }

    @Test func concurrentAsyncInSync() {
        let queue = ConcurrentQueue(label: "order.concurrent.asyncInSync")
        let log = TestLog()
        log.append(1)
        queue.sync {
            log.append(2)
            queue.async { log.append(3) }
            log.append(4)
        }
        log.append(5)
        #expect(log.wait(for: 5))
        // Allowed orders: "12345, 12435, 12453".
        let allowed: Set<[Int]> = [[1, 2, 3, 4, 5], [1, 2, 4, 3, 5], [1, 2, 4, 5, 3]]
        #expect(allowed.contains(log.values), "order \(log.values)")
    }

    /// On the main thread, inside `serial.sync { }`, the thread is main but the queue is not.
    /// Swift Testing parks the process's real main thread in `dispatch_main`, so the test runs on a thread the
    /// pool is told to treat as the main thread (the only test hook of the pool).
    @Test func mainThreadIsNotMainQueue() {
        let results = TestLog()
        queueTestOnDesignatedMainThread {
            let key = QueueKey<String>()
            MainQueue.shared.setSpecific(key, "main")
            let serial = SerialQueue(label: "order.003.serial")
            results.append(RuntimeThread.isMainThread ? 1 : -1)
            results.append(MainQueue.shared.isCurrent ? -2 : 2)  // top-level code is on no queue
            serial.sync {
                results.append(RuntimeThread.isMainThread ? 3 : -3)  // the closure runs on the calling (main) thread
                results.append(MainQueue.shared.isCurrent ? -4 : 4)  // ... on behalf of `serial`, not the main queue
                results.append(serial.isCurrent ? 5 : -5)
                results.append(key.current == nil ? 6 : -6)  // the RxSwift/isMainQueue idiom says "not main"
            }
            MainQueue.shared.setSpecific(key, nil)
        }
        #expect(results.values == [1, 2, 3, 4, 5, 6])
    }

    /// RxSwift's `MainScheduler` ported to this library (the code the Queues article shows): it runs an action
    /// inline only on behalf of the main queue. On the main thread outside a main-queue task it queues the action
    /// behind the main queue's earlier work instead of jumping ahead of it; from another thread it hands the action
    /// to the main queue.
    @Test func mainQueueSchedulerRunsInlineOnlyOnBehalfOfTheMainQueue() {
        let log = TestLog()
        let ranInlineOutsideTheMainQueue = TestLog()
        queueTestOnDesignatedMainThread {
            let scheduler = MainQueueScheduler.instance
            MainQueue.shared.async { log.append(1) }
            // Main thread, no main-queue task: not inline (a check of the *thread* would run it now, before 1).
            scheduler.schedule { log.append(RuntimeThread.isMainThread && MainQueue.shared.isCurrent ? 2 : -2) }
            if log.count != 0 { ranInlineOutsideTheMainQueue.append(1) }
            // Inside a main-queue task: inline, before the rest of the task.
            MainQueue.shared.async {
                scheduler.schedule { log.append(3) }
                log.append(4)
            }
            // Another thread: handed to the main queue.
            SerialQueue(label: "scheduler.background").async {
                scheduler.schedule { log.append(RuntimeThread.isMainThread && MainQueue.shared.isCurrent ? 5 : -5) }
            }
            let deadline = ContinuousClock.now + .seconds(10)
            while log.count < 5 && ContinuousClock.now < deadline {
                MainQueue.drain(until: .now + .milliseconds(20))
            }
        }
        #expect(ranInlineOutsideTheMainQueue.count == 0)
        #expect(log.values == [1, 2, 3, 4, 5])
    }

    /// Main-queue tasks run on the main thread, where the current queue is the main queue (and the specific set on
    /// it is visible, also from a queue that targets it); `sync` from another thread runs on the main thread.
    @Test func mainQueueTasksRunOnMainThread() {
        let log = TestLog()
        queueTestOnDesignatedMainThread {
            let key = QueueKey<String>()
            MainQueue.shared.setSpecific(key, "main")
            let child = SerialQueue(label: "order.000.child", target: MainQueue.shared)
            MainQueue.shared.async {
                log.append(RuntimeThread.isMainThread ? 1 : -1)
                log.append(MainQueue.shared.isCurrent ? 2 : -2)
                log.append(key.current == "main" ? 3 : -3)
            }
            child.async {
                log.append(RuntimeThread.isMainThread ? 4 : -4)
                log.append(key.current == "main" ? 5 : -5)
                log.append(MainQueue.shared.isCurrent ? 6 : -6)
            }
            let background = SerialQueue(label: "order.000.background")
            background.async {
                let onMain = MainQueue.shared.sync { RuntimeThread.isMainThread && MainQueue.shared.isCurrent }
                log.append(onMain ? 7 : -7)
            }
            let deadline = ContinuousClock.now + .seconds(10)
            while log.count < 7 && ContinuousClock.now < deadline {
                MainQueue.drain(until: .now + .milliseconds(20))
            }
            #expect(!MainQueue.runUntilIdle() || log.count == 7)
            MainQueue.shared.setSpecific(key, nil)
        }
        #expect(log.values.sorted() == [1, 2, 3, 4, 5, 6, 7])
    }

    /// `sync` on the main thread onto a queue that targets the main queue, with async work pending on it: the main
    /// thread runs the earlier work, then the closure (nobody else may run it).
    @Test func mainThreadSyncOntoChildOfMainQueueRunsEarlierWork() {
        let log = TestLog()
        let done = QueueGate()
        queueTestDetached {
            RuntimeThread.designateMainForTesting()
            let child = SerialQueue(label: "order.main.child", target: MainQueue.shared)
            child.async { log.append(RuntimeThread.isMainThread ? 1 : -1) }
            child.sync { log.append(RuntimeThread.isMainThread && child.isCurrent ? 2 : -2) }
            RuntimeThread.undesignateMainForTesting()
            done.open()
        }
        #expect(done.wait())
        #expect(log.values == [1, 2])
    }
}

// The example of the Queues article ("A main-queue scheduler"), kept here verbatim so that it is compiled and tested.

/// Runs actions on the main queue, the way RxSwift's `MainScheduler` does with libdispatch: at once when the caller
/// already runs on behalf of the main queue, otherwise queued there, behind the main queue's earlier work.
final class MainQueueScheduler: Sendable {
    static let instance = MainQueueScheduler()

    func schedule(_ action: @escaping @Sendable () -> Void) {
        // Ask about the *queue*, not the thread: on the main thread outside a main-queue task, running the action
        // now would jump ahead of the work already queued on the main queue.
        if MainQueue.shared.isCurrent {
            action()
        } else {
            MainQueue.shared.async(execute: action)
        }
    }
}
