// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import CThreading
import Glibc
import Synchronization
import Testing

@testable import Threading

/// Helpers of the wait-snapshot tests: capture until a thread shows a state, with a deadline.
enum WaitsTestSupport {
    /// The snapshot of thread `threadID` once `condition` holds for it (polled, 10 s at most), or nil.
    static func thread(
        _ threadID: Int32,
        where condition: (ThreadSnapshot) -> Bool = { _ in true }
    ) -> ThreadSnapshot? {
        var found: ThreadSnapshot?
        _ = waitUntil {
            found = WaitRegistry.capture().threads.first { $0.threadID == threadID }
            return found.map(condition) ?? false
        }
        return found.flatMap { condition($0) ? $0 : nil }
    }

    /// The thread's snapshot once it waits in a wait of `kind`.
    static func waiting(_ threadID: Int32, _ kind: String) -> ThreadSnapshot? {
        thread(threadID) { $0.waitingFor?.kind == kind }
    }

    /// Starts a thread named `name` running `body`, and returns it with its kernel thread id.
    static func start(_ name: String, _ body: @escaping @Sendable () -> Void) throws -> (PosixThread<Void>, Int32) {
        let id = ThreadIDCell()
        let thread = try PosixThread(name: name) {
            id.value.store(cthr_thread_id(), ordering: .releasing)
            body()
        }
        #expect(waitUntil { id.value.load(ordering: .acquiring) != 0 })
        return (thread, id.value.load(ordering: .acquiring))
    }
}

/// A thread id one thread publishes and another reads.
final class ThreadIDCell: Sendable {
    let value = Atomic<Int32>(0)
}

@Suite(.serialized) struct WaitsTests {
    /// A thread the library made appears with its kernel id and name, and nothing it waits for while it runs.
    @Test func aThreadAppearsWithItsIdAndName() throws {
        let flag = AtomicFlag()
        let (thread, id) = try WaitsTestSupport.start("waits-named") {
            while !flag.isSet { _ = cthr_sleep_ns(1_000_000) }
        }
        let snapshot = WaitsTestSupport.thread(id)
        #expect(snapshot?.name == "waits-named")
        #expect(snapshot?.waitingFor == nil)
        #expect(snapshot?.heldLocks == [])
        flag.set()
        thread.join()
        #expect(waitUntil { !WaitRegistry.capture().threads.contains { $0.threadID == id } })
    }

    /// A thread blocked on a semaphore shows a `semaphore` wait with no owner and a growing wait time.
    @Test func aSemaphoreWaitShowsItsKindTargetAndDuration() throws {
        let semaphore = Semaphore(value: 0)
        let (thread, id) = try WaitsTestSupport.start("waits-sem") { semaphore.wait() }
        let first = WaitsTestSupport.waiting(id, "semaphore")
        #expect(first?.waitingFor?.target.hasPrefix("Semaphore at ") == true)
        #expect(first?.waitingFor?.ownerThreadID == nil)
        _ = cthr_sleep_ns(20_000_000)
        let second = WaitsTestSupport.waiting(id, "semaphore")
        let before = first?.waitingFor?.waitedNanoseconds ?? .max
        #expect((second?.waitingFor?.waitedNanoseconds ?? 0) >= before + 10_000_000)
        semaphore.signal()
        thread.join()
    }

    /// A thread waiting for a named lock shows a `lock` wait naming the lock and its holder; the lock is listed as
    /// held by that holder, with one waiter and a hold time at least as long as the wait.
    @Test func aLockWaitNamesTheLockAndItsHolder() throws {
        let lock = MutexLock(name: "waits.held")
        _ = RuntimeThread.current  // registers this thread
        let me = cthr_thread_id()
        lock.lock()
        let (thread, id) = try WaitsTestSupport.start("waits-locker") { lock.withLock {} }
        let snapshot = WaitsTestSupport.waiting(id, "lock")
        #expect(snapshot?.waitingFor?.target == "MutexLock \"waits.held\"")
        #expect(snapshot?.waitingFor?.ownerThreadID == me)
        let capture = WaitRegistry.capture()
        let held = capture.heldLocks.first { $0.name == "MutexLock \"waits.held\"" }
        #expect(held?.holderThreadID == me)
        #expect(held?.waiters == 1)
        #expect((held?.heldNanoseconds ?? 0) > 0)
        #expect(capture.threads.first { $0.threadID == me }?.heldLocks.contains("MutexLock \"waits.held\"") == true)
        lock.unlock()
        thread.join()
        #expect(!WaitRegistry.capture().heldLocks.contains { $0.name == "MutexLock \"waits.held\"" })
    }

    /// A named lock held with nobody waiting is listed with no hold time (nothing was recorded when it was taken);
    /// an unnamed lock nobody waits for is not listed at all.
    @Test func heldNamedLocksAreListedAndUnnamedOnesOnlyWhenWaitedFor() {
        let named = MutexLock(name: "waits.quiet")
        let unnamed = MutexLock()
        named.lock()
        unnamed.lock()
        let held = WaitRegistry.capture().heldLocks
        let entry = held.first { $0.name == "MutexLock \"waits.quiet\"" }
        #expect(entry?.holderThreadID == cthr_thread_id())
        #expect(entry?.heldNanoseconds == nil)
        #expect(entry?.waiters == 0)
        #expect(!held.contains { $0.name == unnamed.describe() })
        unnamed.unlock()
        named.unlock()
    }

    /// Named locks of every kind register while they live and unregister when destroyed.
    @Test func namedLocksRegisterUntilDestroyed() {
        do {
            let locks: [AnyObject] = [
                MutexLock(name: "waits.reg.m"), RecursiveLock(name: "waits.reg.r"), SpinLock(name: "waits.reg.s"),
                ReadWriteLock(name: "waits.reg.rw"), try! MutexLock(kind: .errorChecking, name: "waits.reg.e"),
                MutexLock(),
            ]
            #expect(NamedLockRegistry.count(containing: "\"waits.reg.") == 5)
            withExtendedLifetime(locks) {}
        }
        #expect(NamedLockRegistry.count(containing: "\"waits.reg.") == 0)
    }

    /// Every lock kind reports its holder: recursive, spin, and the writer of a read-write lock.
    @Test func recursiveSpinAndWriterHoldersAreListed() {
        let recursive = RecursiveLock(name: "waits.rec")
        let spin = SpinLock(name: "waits.spin")
        let readWrite = ReadWriteLock(name: "waits.rw.held")
        recursive.lock()
        recursive.lock()
        spin.lock()
        readWrite.writeLock()
        let names = Set(WaitRegistry.capture().heldLocks.filter { $0.holderThreadID == cthr_thread_id() }.map(\.name))
        #expect(
            names.isSuperset(of: [
                "RecursiveLock \"waits.rec\"", "SpinLock \"waits.spin\"", "ReadWriteLock \"waits.rw.held\"",
            ])
        )
        readWrite.unlock()
        spin.unlock()
        recursive.unlock()
        recursive.unlock()
    }

    /// A reader blocked behind a writer shows a `read lock` wait owned by the writer; a writer behind it a
    /// `write lock` wait.
    @Test func readWriteWaitsNameTheWriter() throws {
        let lock = ReadWriteLock(name: "waits.rw")
        _ = RuntimeThread.current
        lock.writeLock()
        let (reader, readerID) = try WaitsTestSupport.start("waits-reader") { lock.withReadLock {} }
        let (writer, writerID) = try WaitsTestSupport.start("waits-writer") { lock.withWriteLock {} }
        #expect(WaitsTestSupport.waiting(readerID, "read lock")?.waitingFor?.ownerThreadID == cthr_thread_id())
        #expect(WaitsTestSupport.waiting(writerID, "write lock")?.waitingFor?.target == "ReadWriteLock \"waits.rw\"")
        lock.unlock()
        reader.join()
        writer.join()
    }

    /// A writer that has claimed the lock and waits for a reader to leave has its own id in the lock: its wait
    /// names nobody, and no cycle of one thread is found (one was, while readers held the lock: snapshots and dumps
    /// listed the writer as waiting for itself).
    @Test func aWriterWaitingForReadersIsNoCycle() throws {
        let lock = ReadWriteLock(name: "waits.drain")
        _ = RuntimeThread.current
        lock.readLock()
        let (writer, writerID) = try WaitsTestSupport.start("waits-drainer") { lock.withWriteLock {} }
        let waiting = WaitsTestSupport.waiting(writerID, "write lock")
        #expect(waiting != nil)
        #expect(waiting?.waitingFor?.ownerThreadID == nil)
        let capture = WaitRegistry.capture()
        #expect(!capture.cycles.contains { $0.threadIDs.contains(writerID) }, "\(capture.cycles)")
        lock.unlock()
        writer.join()
    }

    /// A join shows a `join` wait whose owner is the joined thread.
    @Test func aJoinNamesTheJoinedThread() throws {
        let semaphore = Semaphore(value: 0)
        let (inner, innerID) = try WaitsTestSupport.start("waits-inner") { semaphore.wait() }
        let handle = UncheckedSendableBox(inner)
        let (joiner, joinerID) = try WaitsTestSupport.start("waits-joiner") { handle.value.join() }
        let snapshot = WaitsTestSupport.waiting(joinerID, "join")
        #expect(snapshot?.waitingFor?.ownerThreadID == innerID)
        #expect(snapshot?.waitingFor?.target == "thread \"waits-inner\" (tid \(innerID))")
        semaphore.signal()
        joiner.join()
    }

    /// A `sync` behind a running item of a serial queue, and one behind a barrier of a concurrent queue, show a
    /// `sync` wait naming the queue. (Its owner, the thread running the queue's work, comes from the pools-and-queues
    /// registry; the cycle tests check it.)
    @Test func syncWaitsNameTheQueue() throws {
        let gate = Semaphore(value: 0)
        let started = Semaphore(value: 0)
        let serial = SerialQueue(label: "waits.serial")
        serial.async {
            started.signal()
            gate.wait()
        }
        blockingCall { started.wait() }
        let (serialWaiter, serialID) = try WaitsTestSupport.start("waits-sync") { serial.sync {} }
        #expect(WaitsTestSupport.waiting(serialID, "sync")?.waitingFor?.target == "queue 'waits.serial'")
        let concurrent = ConcurrentQueue(label: "waits.concurrent")
        concurrent.async(flags: .barrier) {
            started.signal()
            gate.wait()
        }
        blockingCall { started.wait() }
        let (concurrentWaiter, concurrentID) = try WaitsTestSupport.start("waits-csync") { concurrent.sync {} }
        #expect(WaitsTestSupport.waiting(concurrentID, "sync")?.waitingFor?.target == "queue 'waits.concurrent'")
        gate.signal()
        gate.signal()
        serialWaiter.join()
        concurrentWaiter.join()
    }

    /// Condition, group, work-item and job waits show their kinds.
    @Test func conditionGroupItemAndJobWaitsShowTheirKinds() throws {
        let lock = MutexLock()
        let condition = ConditionVariable()
        let done = AtomicFlag()
        let (waiter, waiterID) = try WaitsTestSupport.start("waits-cond") {
            lock.withLock { while !done.isSet { condition.wait(lock) } }
        }
        #expect(
            WaitsTestSupport.waiting(waiterID, "condition")?.waitingFor?.target.hasPrefix("ConditionVariable") == true
        )
        lock.withLock { done.set() }
        condition.broadcast()
        waiter.join()

        let gate = Semaphore(value: 0)
        let queue = SerialQueue(label: "waits.kinds")
        let group = WorkGroup()
        queue.async(group: group) { gate.wait() }
        let (groupWaiter, groupID) = try WaitsTestSupport.start("waits-group") { _ = group.wait() }
        #expect(WaitsTestSupport.waiting(groupID, "group")?.waitingFor?.target == group.diagnosticName)
        let item = WorkItem { gate.wait() }
        queue.async(execute: item)
        let (itemWaiter, itemID) = try WaitsTestSupport.start("waits-item") { _ = item.wait() }
        #expect(WaitsTestSupport.waiting(itemID, "work item")?.waitingFor?.target == item.diagnosticName)
        let job = Job(name: "waits.job") { _ in gate.wait() }
        let jobs = JobQueue(name: "waits.jobs")
        jobs.addJob(job)
        let (jobWaiter, jobID) = try WaitsTestSupport.start("waits-job") { _ = job.waitUntilFinished() }
        #expect(WaitsTestSupport.waiting(jobID, "job")?.waitingFor?.target == "Job \"waits.job\"")
        gate.signal()
        gate.signal()
        gate.signal()
        groupWaiter.join()
        itemWaiter.join()
        jobWaiter.join()
    }
}

/// A flag set once, read by polling threads.
final class AtomicFlag: Sendable {
    private let flag = Atomic<Bool>(false)
    var isSet: Bool { flag.load(ordering: .acquiring) }
    func set() { flag.store(true, ordering: .releasing) }
}

/// Carries a non-`Sendable` value into a `@Sendable` closure where the test orders the accesses itself.
final class UncheckedSendableBox<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}
