// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import CThreading
import Testing

@testable import Threading

/// Deadlocks the pool can see, and misuse, stop the program with a message (exit tests).
@Suite struct QueueCrashTests {
    private static func stderrText(_ result: ExitTest.Result?) -> String {
        String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
    }

    /// "Serial, sync in async": prints 1 and 5 (and 2), then the nested sync is diagnosed.
    @Test func serialSyncInAsyncIsDiagnosed() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let queue = SerialQueue(label: "serial.syncInAsync")
            let done = WorkGroup()
            done.enter()
            print(1)
            queue.async {
                print(2)
                queue.sync { print(3) }
                print(4)
                done.leave()
            }
            print(5)
            _ = blockingCall { done.wait(timeout: .seconds(20)) }
        }
        let text = Self.stderrText(result)
        #expect(text.contains("Threading: deadlock: sync onto queue 'serial.syncInAsync'"))
        #expect(text.contains("already executing queue 'serial.syncInAsync'"))
        #expect(text.contains("threading.pool"))
    }

    @Test func directSyncOntoCurrentQueueIsDiagnosed() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let queue = SerialQueue(label: "crash.direct")
            blockingCall { queue.sync { queue.sync {} } }
        }
        let text = Self.stderrText(result)
        #expect(text.contains("deadlock: sync onto queue 'crash.direct'"))
        #expect(text.contains("from thread"))
        #expect(text.contains("tid "))
    }

    @Test func chainOfSyncsIsDiagnosed() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let a = SerialQueue(label: "crash.chain.A")
            let b = SerialQueue(label: "crash.chain.B")
            blockingCall { a.sync { b.sync { a.sync {} } } }
        }
        let text = Self.stderrText(result)
        #expect(text.contains("deadlock: sync onto queue 'crash.chain.A'"))
        #expect(text.contains("'crash.chain.A' -> 'crash.chain.B'"))
    }

    @Test func syncThroughTargetQueueIsDiagnosed() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let root = SerialQueue(label: "crash.target.root")
            let child = SerialQueue(label: "crash.target.child", target: root)
            root.async { child.sync {} }
            _ = cthr_sleep_ns(10_000_000_000)
        }
        let text = Self.stderrText(result)
        #expect(
            text.contains("deadlock: sync onto queue 'crash.target.child' (which targets queue 'crash.target.root')")
        )
        #expect(text.contains("already executing queue 'crash.target.root'"))
    }

    @Test func syncOntoTargetFromChildIsDiagnosed() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let root = SerialQueue(label: "crash.target2.root")
            let child = SerialQueue(label: "crash.target2.child", target: root)
            blockingCall { child.sync { root.sync {} } }
        }
        let text = Self.stderrText(result)
        #expect(text.contains("deadlock: sync onto queue 'crash.target2.root'"))
    }

    @Test func barrierSyncFromInsideTheSameConcurrentQueueIsDiagnosed() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let queue = ConcurrentQueue(label: "crash.barrier")
            blockingCall { queue.sync { queue.sync(flags: .barrier) {} } }
        }
        let text = Self.stderrText(result)
        #expect(text.contains("deadlock: sync(flags: .barrier) onto queue 'crash.barrier'"))
        #expect(text.contains("barrier sync from inside the same concurrent queue"))
    }

    @Test func syncFromInsideABarrierIsDiagnosed() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let queue = ConcurrentQueue(label: "crash.insideBarrier")
            queue.async(flags: .barrier) { queue.sync {} }
            _ = cthr_sleep_ns(10_000_000_000)
        }
        let text = Self.stderrText(result)
        #expect(text.contains("deadlock: sync onto queue 'crash.insideBarrier'"))
        #expect(text.contains("inside a barrier"))
    }

    @Test func overResumeTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let queue = SerialQueue(label: "crash.resume")
            queue.suspend()
            queue.resume()
            queue.resume()
        }
        #expect(Self.stderrText(result).contains("resume() of queue 'crash.resume' that is not suspended"))
    }

    @Test func groupLeaveWithoutEnterTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            WorkGroup().leave()
        }
        #expect(Self.stderrText(result).contains("WorkGroup.leave() without a matching enter()"))
    }

    @Test func mainQueueSyncFromInsideAMainQueueTaskIsDiagnosed() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            queueTestOnNewThread {
                RuntimeThread.designateMainForTesting()
                MainQueue.shared.async { MainQueue.shared.sync {} }
                MainQueue.drain(until: .now + .seconds(10))
            }
        }
        #expect(Self.stderrText(result).contains("deadlock: sync onto queue 'threading.main'"))
    }

    // MARK: Waits that could never end (each child waits with a deadline or has a watchdog: without the diagnosis it
    // exits successfully, which fails the test)

    @Test func groupWaitFromATaskOfTheGroupIsDiagnosed() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let queue = ConcurrentQueue(label: "crash.group.task")
            let inner = SerialQueue(label: "crash.group.inner")
            let group = WorkGroup()
            // Inside a sync the task is still the group's: the wait is diagnosed there too.
            queue.async(group: group) { inner.sync { _ = group.wait() } }
            _ = blockingCall { group.wait(timeout: .seconds(20)) }
        }
        let text = Self.stderrText(result)
        #expect(text.contains("Threading: deadlock: WorkGroup 0x"), "\(text)")
        #expect(text.contains(".wait() on thread 'threading."), "\(text)")
        #expect(text.contains("which is running a task of WorkGroup 0x"), "\(text)")
        #expect(text.contains("the group counts that task until it returns"), "\(text)")
        #expect(text.contains("queue stack: 'crash.group.task' -> 'crash.group.inner'"), "\(text)")
    }

    @Test func workItemWaitFromItsOwnClosureIsDiagnosed() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let queue = SerialQueue(label: "crash.item")
            let slot = LockedValue<WorkItem?>(nil)
            let item = WorkItem { _ = slot.withLock { $0 }!.wait() }
            slot.withLock { $0 = item }
            queue.async(execute: item)
            _ = blockingCall { item.wait(timeout: .seconds(20)) }
        }
        let text = Self.stderrText(result)
        #expect(text.contains("Threading: deadlock: WorkItem 0x"), "\(text)")
        #expect(text.contains("which is running the closure of WorkItem 0x"), "\(text)")
        #expect(text.contains("the item finishes only when its closure returns"), "\(text)")
        #expect(text.contains("queue stack: 'crash.item'"), "\(text)")
    }

    /// A task of a serial queue submits an item to the same queue (or to a queue that targets it) and waits for it:
    /// the item cannot start before the task returns.
    @Test(arguments: [false, true]) func waitForAnItemQueuedBehindTheCallerIsDiagnosed(throughTarget: Bool) async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            [throughTarget] in
            let queue = SerialQueue(label: "crash.behind")
            let child = SerialQueue(label: "crash.behind.child", target: queue)
            let done = WorkItem {}
            queue.async {
                let item = WorkItem {}
                (throughTarget ? child : queue).async(execute: item)
                _ = item.wait()
                done.perform()
            }
            _ = blockingCall { done.wait(timeout: .seconds(20)) }
        }
        let text = Self.stderrText(result)
        #expect(text.contains("Threading: deadlock: WorkItem 0x"), "\(text)")
        let waitsIn = throughTarget ? "crash.behind.child" : "crash.behind"
        #expect(text.contains("the item waits in queue '\(waitsIn)'"), "\(text)")
        #expect(text.contains("task on queue 'crash.behind' returns"), "\(text)")
    }

    /// A task of a serial queue submits a task of a group to the same queue and waits for the group: that task cannot
    /// start before the waiting one returns.
    @Test func groupWaitForATaskQueuedBehindTheCallerIsDiagnosed() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let queue = SerialQueue(label: "crash.group.behind")
            let done = WorkItem {}
            queue.async {
                let group = WorkGroup()
                queue.async(group: group) {}
                _ = group.wait()
                done.perform()
            }
            _ = blockingCall { done.wait(timeout: .seconds(20)) }
        }
        let text = Self.stderrText(result)
        #expect(text.contains("Threading: deadlock: WorkGroup 0x"), "\(text)")
        #expect(text.contains("a task of the group waits in queue 'crash.group.behind'"), "\(text)")
    }

    /// The same with the group's first task queued on another, suspended queue: the group records its first queue
    /// apart from the others, and the task behind the caller (queued second) is still found.
    @Test func groupWaitForASecondQueuesTaskBehindTheCallerIsDiagnosed() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let queue = SerialQueue(label: "crash.group.second")
            let other = SerialQueue(label: "crash.group.other")
            other.suspend()
            let done = WorkItem {}
            queue.async {
                let group = WorkGroup()
                other.async(group: group) {}
                queue.async(group: group) {}
                _ = group.wait()
                done.perform()
            }
            _ = blockingCall { done.wait(timeout: .seconds(20)) }
        }
        let text = Self.stderrText(result)
        #expect(text.contains("Threading: deadlock: WorkGroup 0x"), "\(text)")
        #expect(text.contains("a task of the group waits in queue 'crash.group.second'"), "\(text)")
    }

    /// A task of the group that ran on a serial queue leaves the group's record of queued tasks when it leaves the
    /// group: a later untimed wait from a task of that queue, for work entered by hand and left by another thread once
    /// the wait has begun, is an ordinary wait (a record left behind would stop the program as in the tests above).
    @Test func groupWaitAfterTheQueuesOwnTaskLeftIsAnOrdinaryWait() async {
        await #expect(processExitsWith: .success) {
            let pool = WorkerPool(label: "crash.group.left.pool", threads: 2)
            let queue = SerialQueue(label: "crash.group.left", pool: pool)
            let group = WorkGroup()
            queue.async(group: group) {}
            precondition(group.wait(timeout: .seconds(20)), "the group's task did not run")
            group.enter()
            let done = WorkItem {}
            queue.async {
                _ = group.wait()  // traps if the task above were still recorded as waiting in this queue
                done.perform()
            }
            // The waiting worker declares its wait after the diagnosis: leave only then.
            precondition(waitUntil { pool.statistics.blocked == 1 }, "the wait did not begin")
            group.leave()
            precondition(blockingCall { done.wait(timeout: .seconds(20)) }, "the wait did not end")
        }
    }
}
