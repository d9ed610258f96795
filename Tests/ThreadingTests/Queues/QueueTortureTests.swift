// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import CThreading
import Synchronization
import Testing

@testable import Threading

/// One queue under torture and what its tasks check while they run.
///
/// `Sendable`: the queues are `Sendable`; the counters are atomics.
final class TortureQueue: Sendable {
    let index: Int
    let serial: SerialQueue?
    let concurrent: ConcurrentQueue?
    /// The width limit that applies to this queue's own tasks (1 for serial queues and serial targets).
    let effectiveWidth: Int
    /// Non-barrier tasks of this queue running now, and barriers running now.
    let running = Atomic<Int>(0)
    let barriers = Atomic<Int>(0)
    /// For serial queues: the last sequence number run per submitting driver (FIFO check).
    let lastSequence: [TortureCell]
    /// Tracked tasks submitted to and completed on this queue (to name a stuck queue).
    let submitted = TortureCell()
    let completed = TortureCell()
    /// How the queue was made (kind, width, target), for diagnostics.
    let shape: String

    var queue: any WorkQueue { serial ?? concurrent! }

    init(
        index: Int,
        serial: SerialQueue?,
        concurrent: ConcurrentQueue?,
        effectiveWidth: Int,
        drivers: Int,
        shape: String
    ) {
        self.index = index
        self.shape = shape
        self.serial = serial
        self.concurrent = concurrent
        self.effectiveWidth = effectiveWidth
        self.lastSequence = (0..<drivers).map { _ in TortureCell(-1) }
    }
}

extension TortureTests {
    /// Random mixes of `async`, `sync`, barriers, suspend/resume, groups, work items, specifics, `asyncAfter` and
    /// repeating timers over serial and concurrent queues (some with targets: the pool fixes a queue's target at
    /// creation and has no target change, so target hierarchies are built up front), driven by several threads.
    ///
    /// Checks: every task runs exactly once; tasks a driver submits to a serial queue run in submission order; a
    /// serial queue runs one task at a time; a barrier runs alone; a concurrent queue never exceeds its width; the
    /// queue's specific is visible in each of its tasks.
    @Suite(.serialized)
    struct QueueTorture {
        static let drivers = 3

        @Test func queueTorture() {
            let seed = Torture.seed()
            var setup = TortureRandom(seed: seed)
            let opsPerDriver = Torture.size(400, long: 40_000)
            let key = QueueKey<Int>()
            let violations = TortureViolations()

            // Roots, then queues targeting them.
            let serialRoot = SerialQueue(label: "torture.root.serial")
            let concurrentRoot = ConcurrentQueue(label: "torture.root.concurrent", width: 3)
            var queues: [TortureQueue] = []
            for index in 0..<12 {
                let targetKind = setup.below(3)
                let target: (any WorkQueue)? =
                    switch targetKind {
                    case 0: nil
                    case 1: serialRoot
                    default: concurrentRoot
                    }
                let targetName = ["no target", "serial root", "concurrent root (width 3)"][targetKind]
                if index % 2 == 0 {
                    let queue = SerialQueue(label: "torture.serial.\(index)", target: target)
                    queue.setSpecific(key, index)
                    queues.append(
                        TortureQueue(
                            index: index,
                            serial: queue,
                            concurrent: nil,
                            effectiveWidth: 1,
                            drivers: Self.drivers,
                            shape: "serial, \(targetName)"
                        )
                    )
                } else {
                    let width = setup.chance(30) ? nil : 1 + setup.below(4)
                    let queue = ConcurrentQueue(label: "torture.concurrent.\(index)", width: width, target: target)
                    queue.setSpecific(key, index)
                    var effective = width ?? Int.max
                    if target === serialRoot { effective = 1 }
                    queues.append(
                        TortureQueue(
                            index: index,
                            serial: nil,
                            concurrent: queue,
                            effectiveWidth: effective,
                            drivers: Self.drivers,
                            shape: "concurrent width \(width.map(String.init) ?? "default"), \(targetName)"
                        )
                    )
                }
            }

            let queueList = queues
            let totalIDs = Self.drivers * opsPerDriver
            let runs = (0..<totalIDs).map { _ in TortureCell() }
            let submitted = TestCounter()
            let completed = TestCounter()
            let suspensions = TestCounter()
            let timerFirings = TestCounter()
            let opCounts = (0..<8).map { _ in TestCounter() }
            let group = WorkGroup()

            /// The body of every tracked task: runs-once, exclusivity, width, FIFO and specific checks.
            @Sendable func task(_ queue: TortureQueue, id: Int, driver: Int, sequence: Int?, barrier: Bool) {
                let previous = runs[id].value.add(1, ordering: .relaxed).oldValue
                if previous != 0 { violations.record("task \(id) ran \(previous + 1) times") }
                if key.current != queue.index {
                    violations.record("task on queue \(queue.index) saw specific \(String(describing: key.current))")
                }
                if barrier {
                    let others = queue.running.load(ordering: .sequentiallyConsistent)
                    let inside = queue.barriers.add(1, ordering: .sequentiallyConsistent).newValue
                    if others != 0 || inside != 1 {
                        violations.record(
                            "barrier on queue \(queue.index) ran with \(others) tasks, \(inside) barriers"
                        )
                    }
                    Torture.spin(50)
                    queue.barriers.subtract(1, ordering: .sequentiallyConsistent)
                } else {
                    let now = queue.running.add(1, ordering: .sequentiallyConsistent).newValue
                    if now > queue.effectiveWidth {
                        violations.record(
                            "queue \(queue.index) ran \(now) tasks at once (width \(queue.effectiveWidth))"
                        )
                    }
                    if queue.barriers.load(ordering: .sequentiallyConsistent) != 0 {
                        violations.record("a task of queue \(queue.index) ran during a barrier")
                    }
                    if let sequence {
                        let last = queue.lastSequence[driver].value.exchange(sequence, ordering: .relaxed)
                        if last >= sequence {
                            violations.record(
                                "serial queue \(queue.index): driver \(driver) task \(sequence) after \(last)"
                            )
                        }
                    }
                    Torture.spin(20)
                    queue.running.subtract(1, ordering: .sequentiallyConsistent)
                }
                queue.completed.value.add(1, ordering: .relaxed)
                completed.add()
            }

            let ok = runTogether(Self.drivers) { driver in
                var random = TortureRandom(seed: seed &+ UInt64(driver) &+ 1)
                var sequences = [Int](repeating: 0, count: queueList.count)
                var timers: [QueueTimer] = []
                for op in 0..<opsPerDriver {
                    let id = driver * opsPerDriver + op
                    let target = queueList[random.below(queueList.count)]
                    let isSerial = target.serial != nil
                    func nextSequence() -> Int? {
                        guard isSerial else { return nil }
                        defer { sequences[target.index] += 1 }
                        return sequences[target.index]
                    }
                    submitted.add()
                    target.submitted.value.add(1, ordering: .relaxed)
                    let kind = random.below(100)
                    switch kind {
                    case 0..<35:  // async
                        opCounts[0].add()
                        let sequence = nextSequence()
                        target.queue.async { task(target, id: id, driver: driver, sequence: sequence, barrier: false) }
                    case 35..<50:  // sync
                        opCounts[1].add()
                        let sequence = nextSequence()
                        if let serial = target.serial {
                            serial.sync { task(target, id: id, driver: driver, sequence: sequence, barrier: false) }
                        } else {
                            target.concurrent!.sync {
                                task(target, id: id, driver: driver, sequence: nil, barrier: false)
                            }
                        }
                    case 50..<60:  // barrier (async or sync) on concurrent queues; a plain task on serial ones
                        opCounts[2].add()
                        if let concurrent = target.concurrent {
                            if random.chance(50) {
                                concurrent.async(flags: .barrier) {
                                    task(target, id: id, driver: driver, sequence: nil, barrier: true)
                                }
                            } else {
                                concurrent.sync(flags: .barrier) {
                                    task(target, id: id, driver: driver, sequence: nil, barrier: true)
                                }
                            }
                        } else {
                            let sequence = nextSequence()
                            target.serial!.async(flags: .barrier) {
                                task(target, id: id, driver: driver, sequence: sequence, barrier: false)
                            }
                        }
                    case 60..<70:  // group
                        opCounts[3].add()
                        let sequence = nextSequence()
                        target.queue.async(group: group) {
                            task(target, id: id, driver: driver, sequence: sequence, barrier: false)
                        }
                    case 70..<78:  // suspend, submit, resume
                        opCounts[4].add()
                        suspensions.add()
                        let sequence = nextSequence()
                        target.queue.suspend()
                        target.queue.async { task(target, id: id, driver: driver, sequence: sequence, barrier: false) }
                        Torture.spin(random.below(200))
                        target.queue.resume()
                    case 78..<86:  // work item, sometimes waited for
                        opCounts[5].add()
                        let sequence = nextSequence()
                        let item = WorkItem { task(target, id: id, driver: driver, sequence: sequence, barrier: false) }
                        target.queue.async(execute: item)
                        if random.chance(30) && !item.wait(timeout: .seconds(20)) {
                            violations.record("work item \(id) not done within 20 s")
                        }
                    case 86..<97:  // asyncAfter (not FIFO with the rest: it runs when its deadline passes)
                        opCounts[6].add()
                        target.queue.asyncAfter(delay: .microseconds(random.below(3_000))) {
                            task(target, id: id, driver: driver, sequence: nil, barrier: false)
                        }
                        if isSerial { _ = nextSequence() }  // keep numbering dense; FIFO not asserted for timers
                    default:  // a repeating timer for a while, plus a plain async to keep the id accounted for
                        opCounts[7].add()
                        let sequence = nextSequence()
                        target.queue.async { task(target, id: id, driver: driver, sequence: sequence, barrier: false) }
                        timers.append(
                            QueueTimer(queue: target.queue, delay: .microseconds(500), repeating: .milliseconds(1)) {
                                if key.current != target.index { violations.record("timer on the wrong queue") }
                                timerFirings.add()
                            }
                        )
                        if timers.count > 4 { timers.removeFirst().cancel() }
                    }
                    if op % 32 == 0 { PosixThread.yield() }
                }
                for timer in timers { timer.cancel() }
            }
            #expect(ok)
            let allRan = waitUntil(seconds: 30) { completed.value == totalIDs }
            let stuck = queueList.filter {
                $0.submitted.value.load(ordering: .relaxed) != $0.completed.value.load(ordering: .relaxed)
            }.map {
                "queue \($0.index) (\($0.shape)): \($0.completed.value.load(ordering: .relaxed)) of "
                    + "\($0.submitted.value.load(ordering: .relaxed)) ran"
            }
            #expect(allRan, "only \(completed.value) of \(totalIDs) tasks ran; \(stuck)")
            #expect(group.wait(timeout: .seconds(20)), "group did not finish")
            // Nothing may run twice after the fact either.
            _ = cthr_sleep_ns(20_000_000)
            var lost = 0
            var duplicated = 0
            for run in runs {
                let count = run.value.load(ordering: .relaxed)
                if count == 0 { lost += 1 } else if count > 1 { duplicated += 1 }
            }
            #expect(lost == 0 && duplicated == 0, "lost \(lost), ran twice \(duplicated)")
            #expect(violations.count == 0, "\(violations.messages)")
            Torture.report(
                "queues",
                seed: seed,
                [
                    "tasks": submitted.value, "async": opCounts[0].value, "sync": opCounts[1].value,
                    "barrier": opCounts[2].value, "group": opCounts[3].value, "suspend-resume": opCounts[4].value,
                    "work-items": opCounts[5].value, "async-after": opCounts[6].value, "timers": opCounts[7].value,
                    "timer-firings": timerFirings.value, "lost": lost, "duplicated": duplicated,
                    "violations": violations.count,
                ]
            )
        }
    }
}
