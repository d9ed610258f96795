// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import CThreading
import Glibc
import Synchronization
import Testing

@testable import Threading

/// The clean-child rule: after `fork()`, the child runs none of the work its parent accepted (pending tasks, timers,
/// main-queue backlog, jobs), its queues are usable, and its own work runs; the parent runs all of its work once.
///
/// Each test runs in an exit-test process of its own, so what other tests left in the pool cannot reach it. The
/// parent's tasks wait at a gate (a flag they poll, invisible to the pool) that opens only after the fork, so work
/// is pending at the fork by construction, not by timing.
@Suite struct ForkTests {
    /// The scenario of the report: 200 tasks on a concurrent queue and 640 on 64 serial queues, each appending
    /// "pid task" to one file; a fork while they are pending; the child submits a task of its own. No task may run in
    /// both processes, and the parent must run every one of its tasks.
    @Test(.disabled(if: faultForkBlockedBySanitizer, "TSan does not support multi-threaded fork children"))
    func forkedChildRunsNoneOfTheParentsTasks() async {
        let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
            exit(forkDuplicateScenario())
        }
        let errors = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(!errors.contains("fork scenario:"), "stderr: \(errors)")
    }

    /// Timers, the main queue's backlog, jobs and groups in the child: the parent's timers are cancelled there, its
    /// main-queue tasks and jobs never run, a group waits in vain (with a timeout) for the parent's tasks, and queues
    /// that were busy at the fork serve the child's own work, `sync` and barriers included.
    @Test(.disabled(if: faultForkBlockedBySanitizer, "TSan does not support multi-threaded fork children"))
    func forkedChildDropsTimersMainQueueAndJobsAndKeepsQueuesUsable() async {
        let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
            exit(forkRulesScenario())
        }
        let errors = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(!errors.contains("fork rules:"), "stderr: \(errors)")
    }

    /// A repeating timer whose firing is queued at the fork (out of the timer heap, which the child handler
    /// empties) is still the parent's timer in the child: cancelled there, and its queued firing never runs.
    @Test(.disabled(if: faultForkBlockedBySanitizer, "TSan does not support multi-threaded fork children"))
    func timerWhoseFiringIsQueuedAtTheForkIsCancelledInTheChild() async {
        await #expect(processExitsWith: .success) {
            let gate = ForkGate()
            let serial = SerialQueue(label: "fork.timer.queued")
            serial.async { gate.pass() }
            let timer = QueueTimer(queue: serial, delay: .zero, repeating: .milliseconds(1)) {}
            // The firing is due at once and queues behind the held task: then the entry is out of the heap.
            guard waitUntil({ serial.queueCore.pendingTaskCount >= 1 }) else { exit(2) }
            let status = faultRunForked { timer.isCancelled ? 0 : 1 }
            gate.open()
            timer.cancel()
            exit(status)
        }
    }

    /// A release of a replaced RCU value that is still waiting for its grace period at the fork (a reader holds it
    /// up) runs in the parent only: the child, where the parent's pool threads had used RCU, runs no callback of the
    /// parent's (it starts no call_rcu worker), so the value's deinitializer runs once, in the parent.
    @Test(.disabled(if: faultForkBlockedBySanitizer, "TSan does not support multi-threaded fork children"))
    func pendingRCUReleasesRunInTheParentOnly() async {
        let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
            exit(forkRCUReleaseScenario())
        }
        let errors = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(!errors.contains("fork rcu:"), "stderr: \(errors)")
    }

    /// An untimed `WorkGroup.wait()` in the child for work the parent entered would never return: it stops with a
    /// message instead.
    @Test(.disabled(if: faultForkBlockedBySanitizer, "TSan does not support multi-threaded fork children"))
    func untimedGroupWaitForTheParentsWorkTrapsInTheChild() async {
        let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
            let gate = ForkGate()
            let group = WorkGroup()
            ConcurrentQueue(label: "fork.group").async(group: group) { gate.pass() }
            let status = faultRunForked {
                _ = group.wait()
                return 0  // not reached
            }
            gate.open()
            guard blockingCall({ group.wait(timeout: .seconds(20)) }) else { exit(2) }
            exit(status >= 70 && status < 99 ? 0 : 3)
        }
        let errors = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(errors.contains("WorkGroup.wait(): this process is a fork()ed child"), "stderr: \(errors)")
    }

    /// An untimed `WorkItem.wait()` in the child for an item the parent submitted stops with a message; a timed one
    /// returns false.
    @Test(.disabled(if: faultForkBlockedBySanitizer, "TSan does not support multi-threaded fork children"))
    func untimedWaitForTheParentsWorkItemTrapsInTheChild() async {
        let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
            let gate = ForkGate()
            let queue = SerialQueue(label: "fork.item")
            queue.async { gate.pass() }
            let item = WorkItem {}
            queue.async(execute: item)
            let status = faultRunForked {
                guard !item.wait(timeout: .milliseconds(20)) else { return 2 }
                _ = item.wait()
                return 0  // not reached
            }
            gate.open()
            guard blockingCall({ item.wait(timeout: .seconds(20)) }) else { exit(2) }
            exit(status >= 70 && status < 99 ? 0 : 3)
        }
        let errors = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(errors.contains("WorkItem.wait(): this process is a fork()ed child"), "stderr: \(errors)")
    }

    /// A child whose first thread initialises a global while the child's second thread waits for the same global:
    /// both go on (the Swift runtime's once-lock, which the first thread would otherwise take with its parent's
    /// thread id, is released to the waiter). Before the fix the child hung here for ever.
    @Test(.disabled(if: faultForkBlockedBySanitizer, "TSan does not support multi-threaded fork children"))
    func aGlobalInitialisedInTheChildWhileAnotherThreadWaitsForIt() async {
        await #expect(processExitsWith: .success) {
            _ = ForkOnceProbe.waiterID.load(ordering: .relaxed)  // this thread caches its id in the runtime here
            let status = faultRunForked(seconds: 20) {
                guard ForkOnceProbe.value == 42 else { return 2 }
                guard let waiter = ForkOnceProbe.waiter.withLock({ $0 }), waiter.join(timeout: .seconds(10)) == 42
                else { return 3 }
                return 0
            }
            exit(status)
        }
    }

    /// An untimed `Job.waitUntilFinished()` in the child for a job of the parent's queue stops with a message.
    @Test(.disabled(if: faultForkBlockedBySanitizer, "TSan does not support multi-threaded fork children"))
    func untimedWaitForTheParentsJobTrapsInTheChild() async {
        let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
            let gate = ForkGate()
            let jobs = JobQueue(name: "fork.jobs")
            let job = jobs.addJob(name: "parent-job") { _ in gate.pass() }
            let status = faultRunForked {
                _ = job.waitUntilFinished()
                return 0  // not reached
            }
            gate.open()
            guard blockingCall({ job.waitUntilFinished(timeout: .seconds(20)) }) else { exit(2) }
            exit(status >= 70 && status < 99 ? 0 : 3)
        }
        let errors = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(errors.contains("waitUntilFinished(): this process is a fork()ed child"), "stderr: \(errors)")
        #expect(errors.contains("parent-job"), "stderr: \(errors)")
    }
}

/// A gate the parent's tasks wait at (polling a flag with short sleeps, which the pool cannot see, so the pool does
/// not grow for them) until the parent opens it after the fork.
final class ForkGate: Sendable {
    private let isOpen = Atomic<Bool>(false)
    /// Tasks that reached the gate.
    let arrived = Atomic<Int>(0)

    func pass() {
        arrived.add(1, ordering: .relaxed)
        let deadline = cthr_clock_now_ns() + 60_000_000_000
        while !isOpen.load(ordering: .acquiring) && cthr_clock_now_ns() < deadline { _ = cthr_sleep_ns(1_000_000) }
    }

    func open() { isOpen.store(true, ordering: .releasing) }
}

/// Appends "pid tag" lines to a file shared by the parent and the child (O_APPEND: each line is one write).
struct ForkLog: Sendable {
    let path: String
    let descriptor: Int32

    init() {
        path = "/tmp/threading-fork-\(getpid())-\(cthr_clock_now_ns()).log"
        descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND, 0o600)
    }

    func record(_ tag: String) {
        let line = "\(getpid()) \(tag)\n"
        line.utf8CString.withUnsafeBufferPointer { bytes in _ = write(descriptor, bytes.baseAddress, bytes.count - 1) }
    }

    /// The tags recorded by each process id.
    func read() -> [Int32: [String]] {
        close(descriptor)
        defer { unlink(path) }
        guard let file = fopen(path, "r") else { return [:] }
        defer { fclose(file) }
        var result: [Int32: [String]] = [:]
        var line = [CChar](repeating: 0, count: 128)
        while fgets(&line, Int32(line.count), file) != nil {
            let text = String(
                decoding: line.prefix { $0 != 0 && $0 != 10 }.map { UInt8(bitPattern: $0) },
                as: UTF8.self
            )
            let parts = text.split(separator: " ", maxSplits: 1)
            guard parts.count == 2, let pid = Int32(parts[0]) else { continue }
            result[pid, default: []].append(String(parts[1]))
        }
        return result
    }
}

/// The report's scenario; returns 0 when it held (a step's number otherwise, with a line on stderr).
func forkDuplicateScenario() -> Int32 {
    let log = ForkLog()
    guard log.descriptor >= 0 else { return 2 }
    let gate = ForkGate()
    let group = WorkGroup()
    let concurrent = ConcurrentQueue(label: "fork.concurrent")
    let serials = (0..<64).map { SerialQueue(label: "fork.serial.\($0)") }
    var expected: Set<String> = []
    for index in 0..<200 {
        expected.insert("c\(index)")
        concurrent.async(group: group) {
            gate.pass()
            log.record("c\(index)")
        }
    }
    for (queueIndex, serial) in serials.enumerated() {
        for index in 0..<10 {
            expected.insert("s\(queueIndex).\(index)")
            serial.async(group: group) {
                gate.pass()
                log.record("s\(queueIndex).\(index)")
            }
        }
    }
    let parent = getpid()
    let status = faultRunForked {
        // The child: one task of its own on a queue that was busy at the fork, and one on a new queue.
        let mine = WorkGroup()
        concurrent.async(group: mine) { log.record("child-own") }
        serials[0].async(group: mine) { log.record("child-own-serial") }
        guard mine.wait(timeout: .seconds(20)) else { return 10 }
        // Give anything the child wrongly kept a chance to run before it exits.
        _ = cthr_sleep_ns(50_000_000)
        return 0
    }
    let pendingAtFork = 840 - gate.arrived.load(ordering: .relaxed)
    gate.open()
    guard group.wait(timeout: .seconds(60)) else {
        faultLog("fork scenario: the parent's tasks did not all run\n")
        return 3
    }
    guard status == 0 else {
        faultLog("fork scenario: the child failed with status \(status)\n")
        return 4
    }
    let lines = log.read()
    let mine = lines[parent] ?? []
    let others = lines.filter { $0.key != parent }
    guard others.count == 1, let child = others.first?.value else {
        faultLog("fork scenario: expected lines from one child, got \(others.keys)\n")
        return 5
    }
    guard mine.count == 840, Set(mine) == expected else {
        faultLog("fork scenario: the parent ran \(mine.count) tasks, \(Set(mine).count) distinct, expected 840\n")
        return 6
    }
    guard Set(child) == ["child-own", "child-own-serial"], child.count == 2 else {
        let repeated = Set(child).intersection(expected)
        faultLog("fork scenario: the child ran \(child.count) tasks, \(repeated.count) of them the parent's\n")
        return 7
    }
    guard pendingAtFork > 700 else {
        faultLog("fork scenario: only \(pendingAtFork) tasks were pending at the fork\n")
        return 8
    }
    return 0
}

/// Timers, main queue, jobs, groups and busy queues across a fork; returns 0 when every rule held.
func forkRulesScenario() -> Int32 {
    RuntimeThread.designateMainForTesting()
    let log = ForkLog()
    guard log.descriptor >= 0 else { return 2 }
    let gate = ForkGate()
    let serial = SerialQueue(label: "fork.rules.serial")
    let concurrent = ConcurrentQueue(label: "fork.rules.concurrent")
    let group = WorkGroup()
    // Busy at the fork: a running task each, with more queued behind it.
    serial.async(group: group) { gate.pass() }
    serial.async(group: group) { log.record("serial-queued") }
    concurrent.async(group: group, flags: .barrier) { gate.pass() }
    concurrent.async(group: group) { log.record("concurrent-queued") }
    // Timers pending at the fork.
    let timer = QueueTimer(queue: serial, delay: .milliseconds(20), repeating: .milliseconds(20)) {
        log.record("timer")
    }
    serial.asyncAfter(delay: .milliseconds(20)) { log.record("after") }
    // The main queue's backlog.
    MainQueue.shared.async { log.record("main-backlog") }
    // Jobs: one running at the gate, one waiting for a slot, one waiting for a dependency.
    let jobs = JobQueue(name: "fork.rules.jobs", maxConcurrentJobs: 1)
    let running = jobs.addJob(name: "running") { _ in gate.pass() }
    let waiting = jobs.addJob(name: "waiting") { _ in log.record("job-waiting") }
    let dependent = Job(name: "dependent") { _ in log.record("job-dependent") }
    try? dependent.addDependency(running)
    jobs.addJob(dependent)
    while gate.arrived.load(ordering: .relaxed) < 3 { _ = cthr_sleep_ns(1_000_000) }

    let parent = getpid()
    let status = faultRunForked { forkRulesChild(log, serial, concurrent, group, timer, jobs, waiting) }
    gate.open()
    _ = MainQueue.runUntilIdle()
    guard group.wait(timeout: .seconds(30)), jobs.waitUntilAllFinished(timeout: .seconds(30)) else { return 3 }
    _ = cthr_sleep_ns(60_000_000)  // the parent's timers fire
    timer.cancel()
    RuntimeThread.undesignateMainForTesting()
    guard status == 0 else {
        faultLog("fork rules: the child failed with status \(status)\n")
        return 4
    }
    let lines = log.read()
    let mine = Set(lines[parent] ?? [])
    let child = lines.filter { $0.key != parent }.flatMap(\.value)
    let parentsWork: Set = [
        "serial-queued", "concurrent-queued", "timer", "after", "main-backlog", "job-waiting", "job-dependent",
    ]
    guard mine.isSuperset(of: parentsWork) else {
        faultLog("fork rules: the parent missed \(parentsWork.subtracting(mine))\n")
        return 5
    }
    guard Set(child) == ["child-serial", "child-concurrent", "child-barrier", "child-main", "child-job"] else {
        faultLog("fork rules: the child ran \(child)\n")
        return 6
    }
    return 0
}

/// The child's half of ``forkRulesScenario()``; returns 0 when every rule held.
func forkRulesChild(
    _ log: ForkLog,
    _ serial: SerialQueue,
    _ concurrent: ConcurrentQueue,
    _ group: WorkGroup,
    _ timer: QueueTimer,
    _ jobs: JobQueue,
    _ waiting: Job
) -> Int32 {
    // The parent's timers are cancelled here.
    guard timer.isCancelled else { return 10 }
    // The queues that were busy at the fork are idle and serve the child.
    guard serial.sync(execute: { 1 }) == 1, concurrent.sync(execute: { 2 }) == 2 else { return 11 }
    guard concurrent.sync(flags: .barrier, execute: { 3 }) == 3 else { return 12 }
    let mine = WorkGroup()
    serial.async(group: mine) { log.record("child-serial") }
    concurrent.async(group: mine) { log.record("child-concurrent") }
    concurrent.async(group: mine, flags: .barrier) { log.record("child-barrier") }
    guard mine.wait(timeout: .seconds(20)) else { return 13 }
    // The group still counts the parent's four tasks: a timed wait gives up.
    guard !group.wait(timeout: .milliseconds(20)) else { return 14 }
    // The main queue's backlog was dropped; the child's own main-queue task runs.
    MainQueue.shared.async { log.record("child-main") }
    guard MainQueue.runUntilIdle() else { return 15 }
    // The job queue is empty; the parent's jobs never end here; the child's own job runs.
    guard jobs.jobCount == 0, jobs.waitUntilAllFinished(timeout: .seconds(1)) else { return 16 }
    guard !waiting.waitUntilFinished(timeout: .milliseconds(20)) else { return 17 }
    let own = jobs.addJob(name: "child") { _ in log.record("child-job") }
    guard own.waitUntilFinished(timeout: .seconds(20)) else { return 18 }
    // Anything wrongly kept would run now.
    _ = cthr_sleep_ns(80_000_000)
    return 0
}

/// A value whose deinitializer records the process it ran in.
final class ForkLoggedValue: Sendable {
    let log: ForkLog
    let tag: String
    init(_ log: ForkLog, _ tag: String) {
        self.log = log
        self.tag = tag
    }
    deinit { log.record(tag) }
}

/// ``ForkTests/pendingRCUReleasesRunInTheParentOnly()``; returns 0 when the release ran once, in the parent.
func forkRCUReleaseScenario() -> Int32 {
    let log = ForkLog()
    guard log.descriptor >= 0 else { return 2 }
    let value = RCUValue(ForkLoggedValue(log, "old-released"))
    // A pool thread reads (the parent's threads used RCU, so the child is read-only) and holds its read section at
    // the gate, so the release of the value replaced below waits for a grace period across the fork.
    let gate = ForkGate()
    let reader = WorkGroup()
    ConcurrentQueue(label: "fork.rcu.reader").async(group: reader) { value.read { _ in gate.pass() } }
    while gate.arrived.load(ordering: .relaxed) == 0 { _ = cthr_sleep_ns(1_000_000) }
    value.store(ForkLoggedValue(log, "new-value"))
    let parent = getpid()
    let status = faultRunForked {
        guard !RCU.writersAvailable else { return 10 }
        _ = cthr_sleep_ns(100_000_000)  // a release the child wrongly ran would have run by now
        return 0
    }
    gate.open()
    guard reader.wait(timeout: .seconds(20)) else { return 3 }
    RCU.barrier()
    guard status == 0 else {
        faultLog("fork rcu: the child failed with status \(status)\n")
        return 4
    }
    let lines = log.read()
    guard lines[parent] == ["old-released"], lines.count == 1 else {
        faultLog("fork rcu: releases by process: \(lines)\n")
        return 5
    }
    return 0
}

/// A global that the first thread of a forked child initialises while a second thread of the child, started by the
/// initialiser, waits for it (see `aGlobalInitialisedInTheChildWhileAnotherThreadWaitsForIt`).
private enum ForkOnceProbe {
    /// The waiting thread's kernel id, once it is about to ask for ``value``.
    static let waiterID = Atomic<Int32>(0)
    /// The waiting thread, for the child to join.
    static let waiter = LockedValue<PosixThread<Int>?>(nil)

    static let value: Int = {
        let thread = try! PosixThread(name: "once-waiter") { () -> Int in
            ForkOnceProbe.waiterID.store(cthr_thread_id(), ordering: .releasing)
            return ForkOnceProbe.value
        }
        waiter.withLock { $0 = thread }
        // Return only once the waiter sleeps (in the once-lock: it does nothing else), or after 2 s.
        let deadline = cthr_clock_now_ns() + 2_000_000_000
        while cthr_clock_now_ns() < deadline {
            let id = waiterID.load(ordering: .acquiring)
            if id != 0, threadState(id) == "S" { break }
            _ = cthr_sleep_ns(1_000_000)
        }
        _ = cthr_sleep_ns(20_000_000)
        return 42
    }()

    /// The state letter of thread `id` of this process (`/proc/self/task/<id>/stat`), "" if unreadable.
    private static func threadState(_ id: Int32) -> String {
        guard let file = fopen("/proc/self/task/\(id)/stat", "r") else { return "" }
        defer { fclose(file) }
        var line = [CChar](repeating: 0, count: 512)
        guard fgets(&line, Int32(line.count), file) != nil else { return "" }
        let text = String(decoding: line.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        guard let close = text.lastIndex(of: ")") else { return "" }
        return String(text[text.index(after: close)...].dropFirst().prefix(1))
    }
}
