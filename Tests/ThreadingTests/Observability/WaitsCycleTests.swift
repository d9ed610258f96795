// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import CThreading
import Glibc
import Synchronization
import Testing

@testable import Threading

@Suite struct WaitsCycleFinderTests {
    private func edge(_ thread: Int32, _ kind: WaitKind, _ target: String, _ owner: Int32) -> WaitEdge {
        WaitEdge(threadID: thread, threadName: "t\(thread)", kind: kind, target: target, owner: owner, since: 7)
    }

    /// A cycle across a lock, a `sync` and a join is found once, starting at its smallest id, each line saying
    /// what the thread holds and waits for; threads that only lead into the cycle are not part of it.
    @Test func aCycleAcrossALockASyncAndAJoinIsFoundOnce() {
        let cycles = WaitCycleFinder.cycles([
            edge(30, .join, "thread \"t10\" (tid 10)", 10),
            edge(20, .sync, "queue 'q'", 30),
            edge(10, .lock, "MutexLock \"x\"", 20),
            edge(40, .lock, "MutexLock \"x\"", 20),
            edge(50, .semaphore, "Semaphore at 0x1", 0),
        ])
        #expect(cycles.count == 1)
        #expect(cycles.first?.threadIDs == [10, 20, 30])
        #expect(
            cycles.first?.lines == [
                "thread \"t10\" (tid 10) waits to lock MutexLock \"x\", held by thread \"t20\" (tid 20)",
                "thread \"t20\" (tid 20) holds MutexLock \"x\" and waits in sync on queue 'q', whose running work is "
                    + "on thread \"t30\" (tid 30)",
                "thread \"t30\" (tid 30) waits to join thread \"t10\" (tid 10)",
            ]
        )
        #expect(
            cycles.first?.description.hasPrefix("Wait cycle among 3 threads (none of these waits can end):\n  ") == true
        )
    }

    /// Two separate cycles are both found; waits with no known owner, or whose owner waits for nothing, are in none.
    @Test func separateCyclesAreEachFoundAndChainsAreNot() {
        let cycles = WaitCycleFinder.cycles([
            edge(1, .lock, "A", 2), edge(2, .lock, "B", 1),
            edge(5, .lock, "C", 6), edge(6, .writeLock, "D", 5),
            edge(8, .lock, "E", 9), edge(9, .condition, "F", 0),
        ])
        #expect(cycles.map(\.threadIDs) == [[1, 2], [5, 6]])
        #expect(
            cycles[1].lines[0] == "thread \"t5\" (tid 5) holds D and waits to lock C, held by thread \"t6\" (tid 6)"
        )
        #expect(WaitCycleFinder.cycles([edge(8, .lock, "E", 9)]).isEmpty)
    }
}

/// Wait cycles made for real, each in a child process (its threads never return): the cycle is reported once
/// through the observer, as a `.waitCycle` error, and a snapshot finds and prints it.
@Suite struct WaitsCycleTests {
    /// Two threads that take two named locks in opposite orders.
    @Test func aLockCycleIsReportedOnceAndPrinted() async {
        let result = await #expect(processExitsWith: .success, observing: [\.standardOutputContent]) {
            let observer = CollectingObserver()
            RuntimeObservation.observer = observer
            let first = MutexLock(name: "cycle.first")
            let second = MutexLock(name: "cycle.second")
            let holding = Semaphore(value: 0)
            let go = Semaphore(value: 0)
            let one = try! PosixThread(name: "cycle-one") {
                first.lock()
                holding.signal()
                go.wait()
                second.lock()
            }
            let two = try! PosixThread(name: "cycle-two") {
                second.lock()
                holding.signal()
                go.wait()
                first.lock()
            }
            blockingCall {
                holding.wait()
                holding.wait()
                go.signal()
                go.signal()
            }
            withExtendedLifetime((one, two)) { WaitsExit.expectOneCycleEvent(observer) }
        }
        let text = String(decoding: result?.standardOutputContent ?? [], as: UTF8.self)
        #expect(text.contains("Wait cycle among 2 threads (none of these waits can end):"), "\(text)")
        #expect(text.contains("(tid"), "\(text)")
        #expect(
            text.contains("holds MutexLock \"cycle.first\" and waits to lock MutexLock \"cycle.second\""),
            "\(text)"
        )
        #expect(text.contains("waits to lock MutexLock \"cycle.first\", held by thread \"cycle-one\""), "\(text)")
        #expect(text.contains("waits to lock MutexLock \"cycle.second\", held by thread \"cycle-two\""), "\(text)")
    }

    /// A thread that holds a lock and joins a thread that waits for that lock.
    @Test func aJoinCycleIsReportedOnceAndPrinted() async {
        let result = await #expect(processExitsWith: .success, observing: [\.standardOutputContent]) {
            let observer = CollectingObserver()
            RuntimeObservation.observer = observer
            let lock = MutexLock(name: "cycle.join")
            let held = Semaphore(value: 0)
            let joined = try! PosixThread(name: "cycle-joined") {
                held.wait()
                lock.lock()
            }
            let handle = UncheckedSendableBox(joined)
            let joiner = try! PosixThread(name: "cycle-joiner") {
                lock.lock()
                held.signal()
                handle.value.join()
            }
            withExtendedLifetime(joiner) { WaitsExit.expectOneCycleEvent(observer) }
        }
        let text = String(decoding: result?.standardOutputContent ?? [], as: UTF8.self)
        #expect(text.contains("Wait cycle among 2 threads"), "\(text)")
        #expect(text.contains("waits to lock MutexLock \"cycle.join\", held by thread \"cycle-joiner\""), "\(text)")
        #expect(text.contains("holds MutexLock \"cycle.join\" and waits to join thread \"cycle-joined\""), "\(text)")
    }

    /// A thread that holds a lock and waits in `sync` on a queue whose running item waits for that lock.
    @Test
    func aLockAndSyncCycleIsReportedOnceAndPrinted() async {
        let result = await #expect(processExitsWith: .success, observing: [\.standardOutputContent]) {
            let observer = CollectingObserver()
            RuntimeObservation.observer = observer
            let lock = MutexLock(name: "cycle.sync")
            let queue = SerialQueue(label: "cycle.queue")
            let entered = Semaphore(value: 0)
            let held = Semaphore(value: 0)
            queue.async {
                entered.signal()
                held.wait()
                lock.lock()
            }
            // The item runs on a worker before the holder exists: a `sync` onto a queue whose items have not
            // started runs them on the syncing thread, in order, and the item would then take the lock its own
            // thread holds.
            blockingCall { entered.wait() }
            let holder = try! PosixThread(name: "cycle-holder") {
                lock.lock()
                held.signal()
                queue.sync {}
            }
            withExtendedLifetime(holder) { WaitsExit.expectOneCycleEvent(observer) }
        }
        let text = String(decoding: result?.standardOutputContent ?? [], as: UTF8.self)
        #expect(text.contains("holds MutexLock \"cycle.sync\" and waits in sync on queue 'cycle.queue'"), "\(text)")
        #expect(text.contains("waits to lock MutexLock \"cycle.sync\", held by thread \"cycle-holder\""), "\(text)")
    }

    /// Thread A is inside `ledger.sync { accounts.lock() }`, thread B holds `accounts` and calls `ledger.sync {}`: a
    /// thread running a `sync` closure holds the queue for the cycle finder as a worker does, so the cycle is
    /// reported, and B's wait names A as the thread that must act.
    @Test func aCycleThroughASyncClosureOfAPlainThreadIsReportedOnceAndPrinted() async {
        let result = await #expect(processExitsWith: .success, observing: [\.standardOutputContent]) {
            let observer = CollectingObserver()
            RuntimeObservation.observer = observer
            let ledger = SerialQueue(label: "ledger")
            let accounts = MutexLock(name: "accounts")
            let inSync = Semaphore(value: 0)
            let held = Semaphore(value: 0)
            let a = try! PosixThread(name: "cycle-a") {
                ledger.sync {
                    inSync.signal()
                    held.wait()
                    accounts.lock()
                }
            }
            let b = try! PosixThread(name: "cycle-b") {
                inSync.wait()
                accounts.lock()
                held.signal()
                ledger.sync {}
            }
            // B's sync wait names A (the thread running ledger's sync closure) as its owner.
            let named = waitUntil(seconds: 10) {
                let threadA = a.box.threadID.load(ordering: .acquiring)
                return RuntimeSnapshot.capture().threads.contains {
                    $0.waitingFor?.target == "queue 'ledger'" && $0.waitingFor?.ownerThreadID == threadA
                }
            }
            guard named else {
                print("B's sync wait names no owner")
                exit(1)
            }
            withExtendedLifetime((a, b)) { WaitsExit.expectOneCycleEvent(observer) }
        }
        let text = String(decoding: result?.standardOutputContent ?? [], as: UTF8.self)
        #expect(text.contains("Wait cycle among 2 threads (none of these waits can end):"), "\(text)")
        #expect(text.contains("waits to lock MutexLock \"accounts\", held by thread \"cycle-b\""), "\(text)")
        #expect(
            text.contains(
                "holds MutexLock \"accounts\" and waits in sync on queue 'ledger', whose running work is on thread "
                    + "\"cycle-a\""
            ),
            "\(text)"
        )
    }
}

/// The end of the cycle tests' child processes.
enum WaitsExit {
    /// Waits (10 s at most) for one `.waitCycle` event, lets the other threads of the cycle check too, then prints
    /// the cycle a snapshot finds and exits 0 when exactly one error event came and the snapshot agrees; 1
    /// otherwise.
    static func expectOneCycleEvent(_ observer: CollectingObserver) -> Never {
        let cycles = { observer.events.withLock { $0.filter { $0.kind == .waitCycle } } }
        guard waitUntil(seconds: 10, { !cycles().isEmpty }) else {
            print("no wait-cycle event")
            exit(1)
        }
        _ = cthr_sleep_ns(1_500_000_000)  // every waiter of the cycle has passed its grace period and checked
        let events = cycles()
        let found = WaitRegistry.capture().cycles
        for cycle in found { print(cycle.description) }
        guard events.count == 1, let event = events.first, event.severity == .error, found.count == 1,
            event.metadata["cycle"] == found[0].description,
            event.metadata["threads"] == found[0].threadIDs.map(String.init).joined(separator: ",")
        else {
            print("events: \(events.map(\.message))")
            exit(1)
        }
        exit(0)
    }
}
