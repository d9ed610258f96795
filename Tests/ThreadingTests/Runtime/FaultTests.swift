// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import CThreading
import Glibc
import Synchronization
import Testing

@testable import Threading

/// Faults the system or the user's code injects: thread creation refused, `fork()`, throwing tasks and jobs.
///
/// Already covered elsewhere (not repeated here): a throwing `SerialQueue.sync` rethrows and the queue keeps working
/// (`QueueSerialTests.syncReturnsValueAndRethrows`); a throwing job ends failed and its dependents see the error
/// (`JobDependencyTests.failurePropagates`, `JobTests` "a throwing job ends failed with its error"); a stack the
/// system cannot map throws (`ThreadTests` "creation failures throw").
@Suite struct FaultTests {
    struct Failure: Error, Equatable { let tag: Int }

    // MARK: Thread creation refused

    /// In a child process whose `RLIMIT_NPROC` equals its thread count: `PosixThread` throws
    /// `ThreadingError.tryAgain`; the pool, which wants more threads for 24 blocking tasks, is refused, says so once
    /// on stderr, and runs every task with the threads it already has; serial queues stay FIFO and timers still fire.
    ///
    /// Root ignores `RLIMIT_NPROC`, and `setuid` in the multi-threaded test process did not reach every thread, so
    /// the exit test forks a single-threaded grandchild that drops root (to `nobody`) first, then starts the pool and
    /// lowers the limit (see `faultRefuseNewThreads()`).
    @Test(.disabled(if: faultForkBlockedBySanitizer, "TSan does not support multi-threaded fork children"))
    func refusedThreadCreationThrowsAndThePoolKeepsServing() async {
        let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
            exit(faultRunForked { faultRefusalScenario() })
        }
        let errors = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(errors.occurrences(of: "the system refused a new") == 1, "stderr: \(errors)")
    }

    /// A stack size the system rejects (larger than the address space can map): `PosixThread` throws and the
    /// process goes on (no child process needed).
    @Test func absurdStackSizeThrows() {
        #expect(throws: ThreadingError.self) {
            _ = try PosixThread(stackSize: Int.max / 2) { 0 }
        }
        #expect(throws: ThreadingError.invalidArgument) {
            _ = try PosixThread(stackSize: -1) { 0 }
        }
        let thread = try? PosixThread { 7 }
        #expect(thread?.join() == 7)
    }

    // MARK: fork()

    /// `fork()` in a process that has used the pool, timers, locks and RCU (with the RCU hooks around the fork):
    /// the child can use new queues, timers, locks and threads, and so can the parent afterwards. The pool is
    /// rebuilt in the child by the pool's `pthread_atfork` handler. RCU is read-only in such a child (see
    /// <doc:Misuse> and the RCU article): liburcu's memb flavour keeps the dead threads' registrations.
    @Test(.disabled(if: faultForkBlockedBySanitizer, "TSan does not support multi-threaded fork children"))
    func forkedChildCanUseQueuesLocksAndThreads() async {
        let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
            let value = RCUValue(0)
            let lock = MutexLock()
            let warm = WorkGroup()
            let queue = ConcurrentQueue(label: "fork.parent")
            for _ in 0..<8 { queue.async(group: warm) { lock.withLock { _ = value.update { $0 + 1 } } } }
            queue.asyncAfter(delay: .milliseconds(1)) {}
            guard blockingCall({ warm.wait(timeout: .seconds(20)) }) else { exit(2) }

            // No RCU callback may be pending across the fork: the child's call_rcu thread would run a grace period
            // over the dead threads' registrations (see <doc:Misuse>).
            blockingCall { RCU.barrier() }
            RCU.prepareForFork()
            let pid = fork()
            if pid == 0 {
                RCU.resumeAfterForkInChild()
                _exit(forkChildWorkload(value: value, lock: lock))
            }
            RCU.resumeAfterForkInParent()
            guard pid > 0 else { exit(3) }
            // The parent goes on working too.
            let after = WorkGroup()
            queue.async(group: after) { _ = value.update { $0 + 1 } }
            guard blockingCall({ after.wait(timeout: .seconds(20)) }) else { exit(4) }
            // Wait for the child with a deadline; its status becomes ours (10...17: a step of the workload failed,
            // 70 + N: killed by signal N, 99: hung).
            var status: Int32 = 0
            let deadline = cthr_clock_now_ns() + 60_000_000_000
            while waitpid(pid, &status, WNOHANG) == 0 {
                if cthr_clock_now_ns() > deadline {
                    kill(pid, SIGKILL)
                    faultLog("fork: the child hung\n")
                    exit(99)
                }
                _ = cthr_sleep_ns(2_000_000)
            }
            if status & 0x7f != 0 { exit(70 + (status & 0x7f)) }
            exit((status >> 8) & 0xff)
        }
        let errors = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(!errors.contains("fork:"), "stderr: \(errors)")
    }

    /// In a child forked after the pool's threads used RCU, a write stops with a message that says why, instead of
    /// spinning forever in a grace period over the parent's dead registrations.
    @Test(.disabled(if: faultForkBlockedBySanitizer, "TSan does not support multi-threaded fork children"))
    func forkedChildRefusesRCUWritesWithAMessage() async {
        let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
            let value = RCUValue(0)
            let update = faultForkAfterPoolUsedRCU(value) {
                value.update { $0 + 1 }
                return 0  // not reached: the write traps
            }
            let newMap = faultForkAfterPoolUsedRCU(value) {
                _ = RCUMap<Int, String>()
                return 0  // not reached: creating a map (which could start liburcu's resize worker) traps
            }
            let newFlatMap = faultForkAfterPoolUsedRCU(value) {
                _ = RCUMap<Int, Int>()
                return 0  // not reached: a flat map's writes would need grace periods
            }
            let compareExchange = faultForkAfterPoolUsedRCU(value) {
                value.compareExchange(expected: 1, desired: 2)
                return 0  // not reached: a compare-and-exchange is a write
            }
            let callback = faultForkAfterPoolUsedRCU(value) {
                RCU.callAfterGracePeriod {}
                return 0  // not reached: the callback would wait for a grace period that cannot run
            }
            // Each child must die of the trap (70 + signal), neither return nor hang (99).
            let children = [update, newMap, newFlatMap, compareExchange, callback]
            exit(children.allSatisfy { $0 > 70 && $0 < 99 } ? 0 : 1)
        }
        let errors = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(errors.contains("RCUValue.compareExchange: RCU writes are unavailable in this forked child"))
        #expect(errors.contains("RCU.callAfterGracePeriod(_:): RCU writes are unavailable in this forked child"))
        #expect(errors.contains("RCUValue.update: RCU writes are unavailable in this forked child"), "\(errors)")
        #expect(errors.contains("RCUMap(): RCU writes are unavailable in this forked child"), "\(errors)")
    }

    /// A process where only the forking thread has used RCU (no other reader, no deferred release yet) forks a child
    /// that can write: values, maps, grace periods and deferred releases all work there.
    @Test(.disabled(if: faultForkBlockedBySanitizer, "TSan does not support multi-threaded fork children"))
    func childForkedBeforeOtherThreadsUseRCUCanWrite() async {
        await #expect(processExitsWith: .success) {
            let value = RCUValue(1)
            guard value.load() == 1, RCU.writersAvailable else { exit(2) }
            let status = faultRunForked {
                guard RCU.writersAvailable else { return 10 }
                value.update { $0 + 1 }
                RCU.synchronize()
                let map = RCUMap<Int, Int>()
                map.set(5, forKey: 1)
                map.set(6, forKey: 1)
                let chained = RCUMap<Int, String>()
                chained.set("5", forKey: 1)
                chained.set("6", forKey: 1)
                guard map.get(1) == 6, chained.get(1) == "6" else { return 11 }
                RCU.barrier()
                guard let reader = try? PosixThread({ value.load() }), reader.join() == 2 else { return 12 }
                return 0
            }
            exit(status)
        }
    }

    // MARK: Throwing work

    /// `ConcurrentQueue.sync` (plain and barrier) and `SerialQueue.sync` on a queue with a target (the slow path)
    /// rethrow to the caller; the queues keep running work afterwards.
    @Test func throwingSyncRethrowsAndTheQueueSurvives() {
        let concurrent = ConcurrentQueue(label: "fault.sync.concurrent", width: 2)
        #expect(throws: Failure(tag: 1)) { try concurrent.sync { throw Failure(tag: 1) } }
        #expect(throws: Failure(tag: 2)) { try concurrent.sync(flags: .barrier) { throw Failure(tag: 2) } }
        let root = SerialQueue(label: "fault.sync.root")
        let targeted = SerialQueue(label: "fault.sync.targeted", target: root)
        #expect(throws: Failure(tag: 3)) { try targeted.sync { throw Failure(tag: 3) } }
        // Still serving, sync and async.
        #expect(concurrent.sync { 1 } + concurrent.sync(flags: .barrier) { 2 } + targeted.sync { 3 } == 6)
        let group = WorkGroup()
        let count = Atomic<Int>(0)
        for _ in 0..<10 {
            concurrent.async(group: group) { count.add(1, ordering: .relaxed) }
            targeted.async(group: group) { count.add(1, ordering: .relaxed) }
        }
        #expect(group.wait(timeout: .seconds(20)))
        #expect(count.load(ordering: .relaxed) == 20)
    }

    /// A job queue where half the jobs throw keeps running the others; each failed job holds its own error.
    @Test func throwingJobsDoNotTakeTheJobQueueDown() {
        let queue = JobQueue(name: "fault.jobs", maxConcurrentJobs: 2)
        let jobs = (0..<20).map { index in
            Job(name: "j\(index)") { _ in if index % 2 == 0 { throw Failure(tag: index) } }
        }
        for job in jobs { queue.addJob(job) }
        #expect(queue.waitUntilAllFinished(timeout: .seconds(20)))
        for (index, job) in jobs.enumerated() {
            if index % 2 == 0 {
                #expect(job.state == .failed)
                #expect(job.error as? Failure == Failure(tag: index))
            } else {
                #expect(job.state == .finished)
            }
        }
        let later = queue.addJob { _ in }
        #expect(later.waitUntilFinished(timeout: .seconds(20)))
        #expect(later.state == .finished)
    }
}

/// What the forked child does; returns its exit status (0 when everything worked).
func forkChildWorkload(value: RCUValue<Int>, lock: MutexLock) -> Int32 {
    // Locks (the parent's lock was free at the fork).
    guard lock.tryLock() else { return 10 }
    lock.unlock()
    // New queues: serial FIFO, concurrent, group.
    let serial = SerialQueue(label: "fork.child.serial")
    let concurrent = ConcurrentQueue(label: "fork.child.concurrent")
    let group = WorkGroup()
    let order = LockedValue<[Int]>([])
    let ran = Atomic<Int>(0)
    for index in 0..<50 {
        serial.async(group: group) { order.withLock { $0.append(index) } }
        concurrent.async(group: group) { ran.add(1, ordering: .relaxed) }
    }
    guard group.wait(timeout: .seconds(20)) else { return 11 }
    guard order.withLock({ $0 }) == Array(0..<50), ran.load(ordering: .relaxed) == 50 else { return 12 }
    guard serial.sync(execute: { 5 }) == 5 else { return 13 }
    // Timers.
    let fired = WorkGroup()
    fired.enter()
    serial.asyncAfter(delay: .milliseconds(2)) { fired.leave() }
    guard fired.wait(timeout: .seconds(20)) else { return 14 }
    // The parent's RCU value can still be read by the forking thread (no grace period is needed for that).
    guard value.load() >= 8 else { return 16 }
    // Threads.
    guard let thread = try? PosixThread({ 9 }), thread.join() == 9 else { return 17 }
    // RCU: the parent's pool threads used RCU, so this child is read-only (writes trap: see
    // `forkedChildRefusesRCUWritesWithAMessage`), and reads work on every thread, new ones included.
    guard !RCU.writersAvailable else { return 18 }
    guard let reader = try? PosixThread({ value.load() }), reader.join() >= 8 else { return 19 }
    let seen = Atomic<Int>(0)
    let read = WorkGroup()
    concurrent.async(group: read) { seen.store(value.read { $0 }, ordering: .relaxed) }
    guard read.wait(timeout: .seconds(20)), seen.load(ordering: .relaxed) >= 8 else { return 20 }
    return 0
}

/// Runs `body` in a forked child with the RCU hooks around the fork, after RCU was used from a pool thread; returns
/// the child's exit status as `faultRunForked` does.
func faultForkAfterPoolUsedRCU(_ value: RCUValue<Int>, _ body: () -> Int32) -> Int32 {
    let used = WorkGroup()
    ConcurrentQueue(label: "fork.rcu.parent").async(group: used) { value.update { $0 + 1 } }
    guard used.wait(timeout: .seconds(20)) else { return 2 }
    RCU.barrier()
    RCU.prepareForFork()
    let status = faultRunForked {
        RCU.resumeAfterForkInChild()
        return body()
    }
    RCU.resumeAfterForkInParent()
    return status
}

/// The refusal scenario, run in a single-threaded forked child: returns its exit status (0 when it held).
func faultRefusalScenario() -> Int32 {
    // Drop root first (one thread: setuid applies to the whole process), then start the pool, the monitor and the
    // timer thread, then lower the limit to the threads that exist.
    guard faultDropRoot() else { return 3 }
    let warm = WorkGroup()
    let warmQueue = ConcurrentQueue(label: "fault.warm")
    for _ in 0..<4 { warmQueue.async(group: warm) { _ = cthr_sleep_ns(1_000_000) } }
    warmQueue.asyncAfter(delay: .milliseconds(1)) {}
    guard warm.wait(timeout: .seconds(20)) else { return 2 }
    _ = cthr_sleep_ns(10_000_000)
    guard faultRefuseNewThreads() else { return 3 }

    // 1. PosixThread throws.
    do {
        let thread = try PosixThread { 1 }
        _ = thread.join()
        faultLog("fault: a thread was created despite RLIMIT_NPROC (\(faultThreadCount()) threads)\n")
        return 4
    } catch {
        guard ThreadingError.tryAgain ~= error else {
            faultLog("fault: PosixThread threw \(error), expected EAGAIN\n")
            return 5
        }
    }

    // 2. The pool keeps serving: blocking tasks make it want more threads (it is refused). Half of them block in a
    // wait the pool sees (a group that never empties, with a timeout): each such wait frees its worker's slot
    // while tasks are pending and no worker is idle, so the pool asks for a thread at once, whatever the timing.
    // (The monitor's stall detection, which the other half exercises, depends on timing: under a loaded
    // ThreadSanitizer run it could miss every tick, and the refusal this test needs would never come.)
    let ran = Atomic<Int>(0)
    let order = LockedValue<[Int]>([])
    let group = WorkGroup()
    let never = WorkGroup()
    never.enter()
    let concurrent = ConcurrentQueue(label: "fault.concurrent")
    let serial = SerialQueue(label: "fault.serial")
    for index in 0..<24 {
        concurrent.async(group: group) {
            if index.isMultiple(of: 2) {
                _ = never.wait(timeout: .milliseconds(30))  // blocking the poolCore sees: it asks for a thread
            } else {
                _ = cthr_sleep_ns(30_000_000)  // blocking the poolCore cannot see: the monitor asks for threads
            }
            ran.add(1, ordering: .relaxed)
        }
        serial.async(group: group) { order.withLock { $0.append(index) } }
    }
    let timerFired = Atomic<Bool>(false)
    serial.asyncAfter(delay: .milliseconds(5)) { timerFired.store(true, ordering: .relaxed) }
    guard group.wait(timeout: .seconds(60)) else {
        faultLog("fault: tasks lost or stuck: \(ran.load(ordering: .relaxed)) of 24 ran\n")
        return 6
    }
    guard ran.load(ordering: .relaxed) == 24, order.withLock({ $0 }) == Array(0..<24) else { return 7 }
    let deadline = cthr_clock_now_ns() + 20_000_000_000
    while !timerFired.load(ordering: .relaxed) && cthr_clock_now_ns() < deadline { _ = cthr_sleep_ns(1_000_000) }
    guard timerFired.load(ordering: .relaxed) else { return 8 }
    guard PoolCore.shared.spawnRefusals.load(ordering: .relaxed) > 0 else {
        faultLog("fault: the pool never asked for a thread (nothing was injected)\n")
        return 9
    }
    return 0
}
