// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import CTestSupport
import CThreading
import Glibc
import Synchronization
import Testing

@testable import Threading

/// Bad input and misuse whose outcome is a value or a thrown error (the object stays usable), not covered by the
/// concept suites (see the table in <doc:Misuse>).
///
/// No public entry point takes a `Double`: every time is a `Duration` (whole attoseconds), so NaN and infinity
/// cannot be passed; negative, zero and huge durations are tried here and in `Locks.deadlines`.
@Suite struct MisuseTests {
    /// The largest `Duration` (about 292 billion years): must saturate, never overflow or trap.
    static let huge = Duration.seconds(Int64.max)

    // MARK: Threads

    @Test func sleepForNegativeOrZeroReturnsAtOnce() {
        let start = ContinuousClock.now
        PosixThread.sleep(for: .seconds(-5))
        PosixThread.sleep(for: .zero)
        PosixThread.sleep(for: .nanoseconds(-1))
        #expect(ContinuousClock.now - start < .seconds(5))
    }

    @Test func overlongThreadNameIsTruncatedNotRefused() throws {
        let name = String(repeating: "n", count: 100)
        let thread = try PosixThread(name: name) { PosixThread.currentName }
        #expect(thread.name == name)
        #expect(thread.join() == String(repeating: "n", count: 15))
    }

    @Test func tinyStackSizeIsRaisedToTheMinimum() throws {
        let thread = try PosixThread(stackSize: 1) { (try? PosixThread.currentStackSize()) ?? 0 }
        #expect(thread.join() >= PosixThread.minimumStackSize)
    }

    /// Thread-specific keys run out at `PTHREAD_KEYS_MAX`: `ThreadLocal.init` throws `tryAgain` (in a child
    /// process, since exhausting the keys would disturb the other tests).
    @Test func threadLocalKeyExhaustionThrows() async {
        await #expect(processExitsWith: .success) {
            var locals: [ThreadLocal<Int>] = []
            for _ in 0..<4_096 {
                do {
                    locals.append(try ThreadLocal { 0 })
                } catch {
                    guard ThreadingError.tryAgain ~= error, locals.count > 100 else { exit(2) }
                    // Freeing one makes room again.
                    locals.removeLast()
                    guard (try? ThreadLocal { 1 }) != nil else { exit(3) }
                    exit(0)
                }
            }
            exit(4)
        }
    }

    // MARK: Locks

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
        #expect(mutex.lock(timeout: Self.huge))
        mutex.unlock()
        #expect(recursive.lock(timeout: Self.huge))
        recursive.unlock()
        #expect(rw.writeLock(timeout: Self.huge))
        rw.unlock()
    }

    // MARK: Conditions

    @Test func negativeAndHugeTimeoutsOnConditions() {
        let semaphore = Semaphore(value: 0)
        #expect(!semaphore.wait(timeout: .seconds(-1)))
        #expect(!semaphore.wait(timeout: .zero))
        semaphore.signal()
        #expect(semaphore.wait(timeout: .seconds(-1)))  // available: a past deadline still takes it
        semaphore.signal()
        #expect(semaphore.wait(timeout: Self.huge))

        let lock = MutexLock()
        let condition = ConditionVariable()
        lock.lock()
        #expect(!condition.wait(lock, timeout: .seconds(-1)))
        #expect(!condition.wait(lock, timeout: .zero))
        lock.unlock()
        #expect(lock.tryLock())  // the lock is still usable and was released by each wait
        lock.unlock()

        let monitor = Monitor(0)
        #expect(!monitor.wait(until: { $0 > 0 }, timeout: .seconds(-1)))
        let read: Int? = monitor.withLock(when: { $0 > 0 }, timeout: .nanoseconds(-1), { $0 })
        #expect(read == nil)
        #expect(monitor.wait(until: { $0 == 0 }, timeout: .seconds(-1)))  // already true: no wait needed
        #expect(monitor.wait(until: { $0 == 0 }, timeout: Self.huge))
    }

    @Test func semaphoreBoundaryValuesWork() {
        let empty = Semaphore(value: 0)
        #expect(!empty.tryWait())
        let full = Semaphore(value: Semaphore.maximumValue)
        #expect(full.value == Semaphore.maximumValue)
        #expect(full.tryWait())
        full.signal()  // back to the maximum: allowed
        #expect(full.value == Semaphore.maximumValue)
    }

    // MARK: RCU

    @Test func registrationTwiceAndUnregistrationTwiceAreValues() throws {
        let thread = try PosixThread { () -> [Bool] in
            let first = RCU.registerCurrentThread()
            let second = RCU.registerCurrentThread()
            let third = RCU.unregisterCurrentThread()
            let fourth = RCU.unregisterCurrentThread()
            return [first, second, third, fourth]
        }
        #expect(thread.join() == [true, false, true, false])
    }

    @Test func absurdMapCapacitiesAreClamped() {
        let negative = RCUMap<Int, Int>(minimumCapacity: -5)
        negative.set(1, forKey: 1)
        #expect(negative[1] == 1)
        // Any capacity above `minimumCapacityLimit` (65,536) pre-sizes for the limit only: the flat table of an
        // `Int` map has two slots per entry, 131,072 slots, where `Int.max` committed 1 GB of control bytes before.
        #expect(RCUMap<Int, Int>.minimumCapacityLimit == 65_536)
        for capacity in [1 << 20, Int.max] {
            let large = RCUMap<Int, Int>(minimumCapacity: capacity)
            #expect(cthr_rcu_flat_capacity(cthr_rcu_flat_current(large.flat)) == 2 * 65_536)
            large.set(2, forKey: 2)
            #expect(large.count == 1)
        }
        // The chained table (String values) took 48 s and 16 GB to pre-size for `Int.max` before.
        let chained = RCUMap<Int, String>(minimumCapacity: -5)
        chained.set("1", forKey: 1)
        #expect(chained[1] == "1")
        let huge = RCUMap<String, String>(minimumCapacity: Int.max)
        huge.set("1", forKey: "1")
        #expect(huge["1"] == "1")
    }

    /// A stack size of `Int.max` (rounded up past any mappable size) throws; the process goes on.
    @Test func hugestStackSizeThrows() {
        #expect(throws: ThreadingError.self) {
            _ = try PosixThread(stackSize: Int.max) { 0 }
        }
        let thread = try? PosixThread(stackSize: 1 << 20) { 7 }
        #expect(thread?.join() == 7)
    }

    /// Pools are capped at 4,096 threads: `maxThreads` of a CPU pool no longer grows past it (4 × 2,000 + 32
    /// would be 8,032), and the largest pools work.
    @Test func poolThreadCountsAreCappedAtTheLimit() {
        let wide = WorkerPool(label: "misuse.wide", threads: 2000)
        #expect(wide.maxThreads == 4096)
        let largest = WorkerPool(label: "misuse.largest", threads: 4096, kind: .blocking)
        #expect(largest.maxThreads == 4096)
        for pool in [wide, largest] {
            let ran = QueueGate()
            SerialQueue(label: "misuse.largest.q", pool: pool).async { ran.open() }
            #expect(ran.wait(seconds: 20))
            #expect(poolTestShutDown(pool))
        }
    }

    /// A pool commits a pointer per thread it may have, not the threads' structures: ten pools of 4,096 threads
    /// (maxThreads 4,096 each) grow the live heap by well under 2 MB (about 28 MB when each slot's run queue was made
    /// up front). In a process of its own, so that no other test's allocations count.
    @Test func poolsCommitNoPerThreadStructuresUpFront() async {
        await #expect(processExitsWith: .success) {
            // (Under a sanitizer, which replaces malloc, the count reads 0 and this checks nothing.)
            let before = cthr_test_heap_in_use()
            let pools = (0..<10).map { WorkerPool(label: "misuse.commit.\($0)", threads: 4096) }
            let grown = cthr_test_heap_in_use() &- before
            _ = pools
            exit(grown < 2_000_000 ? 0 : 1)
        }
    }

    // MARK: Queues

    @Test func concurrentPerformWithZeroOrNegativeIterationsRunsNothing() {
        let ran = Atomic<Int>(0)
        ConcurrentQueue.concurrentPerform(iterations: 0) { _ in ran.add(1, ordering: .relaxed) }
        ConcurrentQueue.concurrentPerform(iterations: -10) { _ in ran.add(1, ordering: .relaxed) }
        ConcurrentQueue.concurrentPerform(iterations: Int.min) { _ in ran.add(1, ordering: .relaxed) }
        #expect(ran.load(ordering: .relaxed) == 0)
    }

    @Test func negativeDelayRunsSoonAndHugeDelayNeverFires() {
        let queue = SerialQueue(label: "misuse.delays")
        let group = WorkGroup()
        group.enter()
        queue.asyncAfter(delay: .seconds(-3600)) { group.leave() }
        #expect(group.wait(timeout: .seconds(20)))
        group.enter()
        queue.asyncAfter(deadline: .now - .seconds(10)) { group.leave() }
        #expect(group.wait(timeout: .seconds(20)))

        let never = WorkItem {}
        queue.asyncAfter(deadline: .now + Self.huge, execute: never)
        let timer = QueueTimer(queue: queue, delay: Self.huge, repeating: Self.huge) {}
        #expect(!never.wait(timeout: .milliseconds(20)))
        never.cancel()
        timer.cancel()
        timer.cancel()  // twice: no effect
        #expect(timer.isCancelled)
        #expect(never.wait(timeout: .seconds(20)))  // a cancelled item counts as finished
    }

    @Test func negativeAndZeroWaitsOnGroupsAndItems() {
        let queue = SerialQueue(label: "misuse.waits")
        let gate = WorkGroup()
        gate.enter()
        let group = WorkGroup()
        let item = WorkItem { _ = gate.wait(timeout: .seconds(20)) }
        queue.async(group: group) { _ = gate.wait(timeout: .seconds(20)) }
        queue.async(execute: item)
        #expect(!group.wait(timeout: .seconds(-1)))
        #expect(!group.wait(timeout: .zero))
        #expect(!item.wait(timeout: .nanoseconds(-1)))
        gate.leave()
        #expect(group.wait(timeout: Self.huge))
        #expect(item.wait(timeout: .seconds(20)))
        #expect(WorkGroup().wait(timeout: .seconds(-1)))  // an empty group is done
    }

    @Test func workItemPerformTwiceAndCancelTwiceRunOnce() {
        let ran = Atomic<Int>(0)
        let item = WorkItem { ran.add(1, ordering: .relaxed) }
        item.perform()
        item.perform()
        item.cancel()
        item.cancel()
        #expect(ran.load(ordering: .relaxed) == 1)
        let cancelled = WorkItem { ran.add(1, ordering: .relaxed) }
        cancelled.cancel()
        cancelled.perform()
        SerialQueue(label: "misuse.item").async(execute: cancelled)
        #expect(cancelled.wait(timeout: .seconds(5)))
        #expect(ran.load(ordering: .relaxed) == 1)
    }

    @Test func deepSuspensionBalancedByResumesRunsEverything() {
        let queue = ConcurrentQueue(label: "misuse.suspend", width: 2)
        for _ in 0..<1_000 { queue.suspend() }
        let group = WorkGroup()
        let ran = Atomic<Int>(0)
        for _ in 0..<10 { queue.async(group: group) { ran.add(1, ordering: .relaxed) } }
        for _ in 0..<999 { queue.resume() }
        #expect(!group.wait(timeout: .milliseconds(20)))
        #expect(ran.load(ordering: .relaxed) == 0)
        queue.resume()
        #expect(group.wait(timeout: .seconds(20)))
        #expect(ran.load(ordering: .relaxed) == 10)
    }

    // MARK: Jobs

    @Test func negativeWaitsOnJobsAndQueues() {
        let queue = JobQueue(name: "misuse.jobs")
        let gate = Semaphore()
        let job = queue.addJob { _ in _ = gate.wait(timeout: .seconds(20)) }
        #expect(!job.waitUntilFinished(timeout: .seconds(-1)))
        #expect(!queue.waitUntilAllFinished(timeout: .nanoseconds(-1)))
        gate.signal()
        #expect(job.waitUntilFinished(timeout: Self.huge))
        #expect(queue.waitUntilAllFinished(timeout: .seconds(20)))
    }

    @Test func cancelTwiceAndCancelAfterFinishAreNoOps() {
        let queue = JobQueue(name: "misuse.cancel")
        let job = queue.addJob { _ in }
        #expect(job.waitUntilFinished(timeout: .seconds(20)))
        job.cancel()
        job.cancel()
        #expect(job.state == .finished)
        let early = Job { _ in }
        early.cancel()
        early.cancel()
        queue.addJob(early)  // an already-cancelled job is not run
        #expect(early.state == .cancelled)
        #expect(queue.waitUntilAllFinished(timeout: .seconds(20)))
    }

    @Test func asyncJobFinishTwiceIsIgnored() {
        let queue = JobQueue(name: "misuse.asyncjob")
        let job = AsyncJob { job in
            job.finish()
            job.finish(throwing: CancellationError())
            job.finish()
        }
        queue.addJob(job)
        #expect(job.waitUntilFinished(timeout: .seconds(20)))
        #expect(job.state == .finished)
        #expect(job.error == nil)
    }

    @Test func inputOfAMissingTypeThrowsInvalidArgument() throws {
        let queue = JobQueue(name: "misuse.input")
        let producer = ResultJob<Int> { _ in 1 }
        let outcome = LockedValue<(any Error)?>(nil)
        let consumer = Job { job in
            do {
                _ = try job.input(String.self)
            } catch {
                outcome.withLock { $0 = error }
            }
        }
        try consumer.addDependency(producer)
        queue.addJobs([consumer, producer], waitUntilFinished: false)
        #expect(queue.waitUntilAllFinished(timeout: .seconds(20)))
        #expect(outcome.withLock { $0 as? ThreadingError } == ThreadingError.invalidArgument)
    }

    @Test func duplicateDependencyIsIgnored() throws {
        let a = Job { _ in }
        let b = Job { _ in }
        try b.addDependency(a)
        try b.addDependency(a)
        #expect(b.dependencies.count == 1)
        b.removeDependency(a)
        b.removeDependency(a)  // removing a missing dependency: no effect
        #expect(b.dependencies.isEmpty)
    }

    @Test func disposingAScheduledActionTwiceIsANoOp() {
        let scheduler = CurrentThreadScheduler()
        var ran = 0
        _ = scheduler.schedule {
            let later = scheduler.schedule { ran += 10 }
            later.dispose()
            later.dispose()
            #expect(later.isDisposed)
            ran += 1
        }
        #expect(ran == 1)
    }

    // MARK: Waits that look like deadlocks but can end (not diagnosed)

    /// A job waits for a job it added to its own queue: with a free slot the added job runs, and the wait returns.
    @Test func jobWaitingForAJobOfItsQueueWithAFreeSlotFinishes() {
        let queue = JobQueue(name: "wide", maxConcurrentJobs: 2)
        let ran = LockedValue(false)
        let outer = queue.addJob(name: "outer") { _ in
            let inner = queue.addJob(name: "inner") { _ in ran.withLock { $0 = true } }
            _ = inner.waitUntilFinished()
        }
        #expect(outer.waitUntilFinished(timeout: .seconds(20)))
        #expect(ran.withLock { $0 })
    }

    /// A job of a serial queue waits for a job of another queue, and an asynchronous job waits for itself while
    /// another thread finishes it: both end.
    @Test func jobWaitsThatOtherThreadsEndFinish() {
        let serial = JobQueue(name: "serial", maxConcurrentJobs: 1)
        let other = JobQueue(name: "other", maxConcurrentJobs: 1)
        let outer = serial.addJob(name: "outer") { _ in
            _ = other.addJob(name: "elsewhere") { _ in }.waitUntilFinished()
        }
        #expect(outer.waitUntilFinished(timeout: .seconds(20)))
        let finished = AsyncJob(name: "async.self") { job in
            let finisher = try! PosixThread {
                PosixThread.sleep(for: .milliseconds(10))
                job.finish()
            }
            finisher.detach()
            _ = job.waitUntilFinished()
        }
        serial.addJob(finished)
        #expect(finished.waitUntilFinished(timeout: .seconds(20)))
        #expect(finished.state == .finished)
    }

    /// A wait with a timeout for the job itself, its group or its item is a value: it times out.
    @Test func timedSelfWaitsTimeOut() {
        let queue = ConcurrentQueue(label: "misuse.timedSelf")
        let outcomes = LockedValue<[Bool]>([])
        let job = Job(name: "timed") { job in
            let ended = job.waitUntilFinished(timeout: .milliseconds(10))
            outcomes.withLock { $0.append(ended) }
        }
        JobQueue(name: "timed").addJob(job)
        #expect(job.waitUntilFinished(timeout: .seconds(20)))
        let group = WorkGroup()
        queue.async(group: group) {
            let ended = group.wait(timeout: .milliseconds(10))
            outcomes.withLock { $0.append(ended) }
        }
        #expect(group.wait(timeout: .seconds(20)))
        let slot = LockedValue<WorkItem?>(nil)
        let item = WorkItem {
            let ended = slot.withLock { $0 }!.wait(timeout: .milliseconds(10))
            outcomes.withLock { $0.append(ended) }
        }
        slot.withLock { $0 = item }
        queue.async(execute: item)
        #expect(item.wait(timeout: .seconds(20)))
        #expect(outcomes.withLock { $0 } == [false, false, false])
    }

    /// A task of one group waits (no deadline) for another group, and an item's closure for another item: both end.
    @Test func groupAndItemWaitsOnOtherWorkFinish() {
        let queue = ConcurrentQueue(label: "misuse.otherGroup")
        let first = WorkGroup()
        let second = WorkGroup()
        queue.async(group: second) { PosixThread.sleep(for: .milliseconds(5)) }
        queue.async(group: first) { _ = second.wait() }
        #expect(first.wait(timeout: .seconds(20)))
        let other = WorkItem { PosixThread.sleep(for: .milliseconds(5)) }
        let waiting = WorkItem { _ = other.wait() }
        queue.async(execute: waiting)
        queue.async(execute: other)
        #expect(waiting.wait(timeout: .seconds(20)))
    }

    /// A thread suspends a queue, then syncs onto it: not stopped, because another thread may resume the queue (or
    /// release its last handle), which ends the wait; here one does, well before the one-second report.
    @Test func syncOntoAQueueThisThreadSuspendedEndsWhenAnotherThreadResumes() throws {
        let queue = SerialQueue(label: "misuse.suspendedSync")
        let suspended = Semaphore()
        let done = Semaphore()
        let syncer = try PosixThread {
            queue.suspend()
            suspended.signal()
            queue.sync {}
            done.signal()
        }
        #expect(suspended.wait(timeout: .seconds(20)))
        PosixThread.sleep(for: .milliseconds(20))
        queue.resume()
        let finished = done.wait(timeout: .seconds(20))
        #expect(finished)
        if finished { syncer.join() } else { syncer.detach() }
    }

    /// The same sync, left waiting longer than a second (through a target chain): one `stalled wait` line names the
    /// queues and the thread, and the sync still runs once another thread resumes the queue.
    @Test func syncOntoASuspendedQueueIsReportedAfterASecondAndRunsOnResume() async {
        let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
            MisuseTests.startWatchdog()
            let root = SerialQueue(label: "misuse.stalled.root")
            let child = SerialQueue(label: "misuse.stalled.child", target: root)
            root.suspend()
            let rescuer = try! PosixThread {
                PosixThread.sleep(for: .seconds(3))
                root.resume()
            }
            let ran = blockingCall { child.sync { true } }
            blockingCall { rescuer.join() }
            exit(ran ? 0 : 1)
        }
        let text = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(
            text.contains(
                "Threading: stalled wait: sync onto queue 'misuse.stalled.child' (which targets queue "
                    + "'misuse.stalled.root') on thread"
            ),
            "\(text)"
        )
        #expect(
            text.contains(
                "has not started after a second: queue 'misuse.stalled.root' is suspended (suspend() not yet "
                    + "balanced by resume()); the sync starts only once a thread resumes it or releases its last handle"
            ),
            "\(text)"
        )
        #expect(text.split(separator: "stalled wait", omittingEmptySubsequences: false).count == 2, "one line: \(text)")
    }

    /// `MainQueue.drain(until:)` and `runUntilIdle()` from a main-queue task return false without running a task
    /// (the task holds the main queue); unlike `run()` they end, so they are not stopped.
    @Test func mainQueueDrainFromAMainQueueTaskReturnsWithoutRunningATask() async {
        await #expect(processExitsWith: .success) {
            RuntimeThread.designateMainForTesting()
            let outcome = LockedValue<[Bool]?>(nil)
            let later = LockedValue(false)
            MainQueue.shared.async {
                MainQueue.shared.async { later.withLock { $0 = true } }
                let idle = MainQueue.runUntilIdle()
                let drained = MainQueue.drain(until: .now + .milliseconds(20))
                outcome.withLock { $0 = [idle, drained, later.withLock { $0 }] }
            }
            let deadline = ContinuousClock.now + .seconds(20)
            while !later.withLock({ $0 }) && ContinuousClock.now < deadline { MainQueue.runUntilIdle() }
            guard outcome.withLock({ $0 }) == [false, false, false], later.withLock({ $0 }) else { exit(1) }
            exit(0)
        }
    }

    /// A queue's job needs a dependency that was never added to a queue: not provably a deadlock (another thread may
    /// add, start or cancel it), so the wait is not stopped, but after a second it prints one `stalled wait` line
    /// naming the jobs and the thread; here a thread cancels the dependency after 3 s and the wait ends.
    @Test func waitOnANeverAddedDependencyIsReportedAndEndsWhenItIsCancelled() async {
        let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
            MisuseTests.startWatchdog()
            let queue = JobQueue(name: "pipeline")
            let load = Job(name: "load") { _ in }
            let decode = Job(name: "decode") { _ in }
            try! decode.addDependency(load)
            queue.addJob(decode)
            let rescuer = try! PosixThread {
                PosixThread.sleep(for: .seconds(3))
                load.cancel()
            }
            guard blockingCall({ queue.waitUntilAllFinished() }), decode.state == .finished else { exit(1) }
            blockingCall { rescuer.join() }
            exit(0)
        }
        let text = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(
            text.contains("Threading: stalled wait: JobQueue \"pipeline\".waitUntilAllFinished() on thread"),
            "\(text)"
        )
        #expect(
            text.contains(
                "is waiting for Job \"load\", which belongs to no queue and has not started (Job \"decode\" depends "
                    + "on Job \"load\"); it runs only once a thread adds it to a JobQueue, starts or cancels it"
            ),
            "\(text)"
        )
        #expect(text.split(separator: "stalled wait", omittingEmptySubsequences: false).count == 2, "one line: \(text)")
    }

    /// A job waited on while its queue is suspended: the same `stalled wait` line after a second, naming the queue;
    /// the wait ends when another thread resumes the queue.
    @Test func waitOnAJobOfASuspendedQueueIsReportedAndEndsOnResume() async {
        let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
            MisuseTests.startWatchdog()
            let queue = JobQueue(name: "paused")
            queue.suspend()
            let job = queue.addJob(name: "held") { _ in }
            let rescuer = try! PosixThread {
                PosixThread.sleep(for: .seconds(3))
                queue.resume()
            }
            guard blockingCall({ job.waitUntilFinished() }), job.state == .finished else { exit(1) }
            blockingCall { rescuer.join() }
            exit(0)
        }
        let text = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(text.contains("Threading: stalled wait: Job \"held\".waitUntilFinished() on thread"), "\(text)")
        #expect(
            text.contains(
                "is waiting for Job \"held\", which has not started and belongs to JobQueue \"paused\", which is "
                    + "suspended; it starts only once a thread resumes that queue (or releases its last handle) or "
                    + "cancels it, so this wait cannot end before then"
            ),
            "\(text)"
        )
    }

    /// In a child process: exits with status 3 after 20 s, so a wait that never ends fails the test instead of
    /// hanging it.
    static func startWatchdog() {
        let watchdog = try! PosixThread {
            PosixThread.sleep(for: .seconds(20))
            exit(3)
        }
        watchdog.detach()
    }
}
