// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import CThreading
import Foundation
import Synchronization
import Testing

@testable import Threading

@Suite struct StallWatchdogTests {
    /// A unit that sleeps past its pool's threshold is reported once when the watchdog sees it (naming the pool,
    /// the queue and the thread) and once more when it returns; the pool counts one stall. A serial queue that runs
    /// many short items for longer than the threshold in all is no stall (each item counts).
    ///
    /// The short items sleep 5 ms each; on a loaded machine (the whole suite under ThreadSanitizer) the scheduler
    /// can hold one of them up past the 200 ms threshold, which the watchdog rightly reports. So a report of the
    /// busy queue fails the test only when it covers its whole drain (about 500 ms: what a drain counted as one
    /// unit would show), and any other event fails it.
    @Test func aStallIsReportedOnceAndOnceMoreAtItsEnd() async {
        await #expect(processExitsWith: .success) {
            let observer = CollectingObserver()
            RuntimeObservation.observer = observer
            let pool = WorkerPool(label: "stall.pool", threads: 2)
            pool.stallThreshold = .milliseconds(200)
            let queue = SerialQueue(label: "stall.queue", pool: pool)
            let busy = SerialQueue(label: "stall.busy", pool: pool)
            let thread = Atomic<Int32>(0)
            let done = WorkGroup()
            queue.async(group: done) {
                thread.store(cthr_thread_id(), ordering: .relaxed)
                _ = cthr_sleep_ns(700_000_000)
            }
            for _ in 0..<100 { busy.async(group: done) { _ = cthr_sleep_ns(5_000_000) } }  // 0.5 s in all
            guard blockingCall({ done.wait(timeout: .seconds(10)) }) else { exit(10) }
            // The end is seen at the next sample (at most 40 ms later at this threshold).
            guard waitUntil(seconds: 5, { observer.events(where: "pool", is: "stall.pool").count >= 2 }) else {
                exit(11)
            }
            _ = cthr_sleep_ns(300_000_000)  // nothing more comes
            let all = observer.events(where: "pool", is: "stall.pool")
            let events = all.filter { $0.metadata["queue"] == "stall.queue" }
            let heldUp = all.filter { $0.metadata["queue"] == "stall.busy" }
            let wholeDrain = heldUp.contains { Int($0.metadata["duration_ms"] ?? "") ?? 0 >= 400 }
            guard events.count == 2, events.count + heldUp.count == all.count, !wholeDrain else { exit(12) }
            let began = events[0]
            let ended = events[1]
            let tid = "\(thread.load(ordering: .relaxed))"
            guard began.kind == .stallBegan, began.severity == .warning, began.metadata["queue"] == "stall.queue",
                began.metadata["thread_id"] == tid, began.metadata["threshold_ms"] == "200",
                began.message.contains(
                    "worker pool 'stall.pool' thread \(tid) has been running serial queue "
                        + "'stall.queue' for"
                )
            else { exit(13) }
            guard ended.kind == .stallEnded, ended.severity == .info, ended.metadata["queue"] == "stall.queue",
                ended.metadata["thread_id"] == tid, Int(ended.metadata["duration_ms"] ?? "") ?? 0 >= 450,
                ended.message.contains("no stack was taken")
            else { exit(14) }
            // One stall, and one for each busy item the scheduler held up (each reported when it began and ended).
            guard pool.statistics.stalls == 1 + heldUp.count / 2 else { exit(15) }
            exit(poolTestShutDown(pool) ? 0 : 16)
        }
    }

    /// A blocking pool is watched by default, with a threshold of a minute (its units block by design, but a call
    /// blocked past the minute load balancers wait is a hang): a unit that runs 400 ms there is not reported.
    @Test func aBlockingPoolIsWatchedWithAOneMinuteDefaultThreshold() async {
        await #expect(processExitsWith: .success) {
            let observer = CollectingObserver()
            RuntimeObservation.observer = observer
            let blocking = WorkerPool(label: "stall.blocking", threads: 1, kind: .blocking)
            guard blocking.stallThreshold == .seconds(60), WorkerPool.blocking.stallThreshold == .seconds(60),
                WorkerPool(label: "stall.cpu", threads: 1).stallThreshold == .seconds(5)
            else { exit(9) }
            let done = WorkGroup()
            SerialQueue(label: "stall.blocking.queue", pool: blocking).async(group: done) {
                _ = cthr_sleep_ns(400_000_000)
            }
            guard blockingCall({ done.wait(timeout: .seconds(10)) }) else { exit(10) }
            _ = cthr_sleep_ns(200_000_000)
            guard observer.events(where: "pool", is: "stall.blocking").isEmpty, blocking.statistics.stalls == 0 else {
                exit(11)
            }
            exit(poolTestShutDown(blocking) ? 0 : 12)
        }
    }

    /// A stalled `WorkerPool.run` is named by its call site (`#fileID:#line`), in the stall report and in the
    /// snapshot, and so is a stalled ``WorkItem`` running on a queue, instead of `a job (no queue)`.
    @Test func aStalledRunAndAStalledWorkItemAreNamedByTheirCallSites() async {
        let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
            exit(namedStallScenario())
        }
        let text = exitTestText(result)
        #expect(
            text.contains("has been running WorkerPool.run from ThreadingTests/StallWatchdogTests.swift:"),
            "\(text)"
        )
    }

    /// A unit's origin is one word: the kind, the `#fileID` literal and the line (a line past 16,383 is left out),
    /// so that a pool unit carrying it stays 32 bytes apart in the run queues.
    @Test func aUnitOriginPacksTheKindFileAndLineInOneWord() {
        #expect(
            UnitOrigin(.run, fileID: "Handlers/Search.swift", line: 42).description
                == "WorkerPool.run from Handlers/Search.swift:42"
        )
        #expect(
            UnitOrigin(.workItem, fileID: "A/B.swift", line: 16_383).description
                == "WorkItem created at A/B.swift:16383"
        )
        #expect(UnitOrigin(.run, fileID: "A/B.swift", line: 16_384).description == "WorkerPool.run from A/B.swift")
        #expect(UnitOrigin.task.description?.hasPrefix("a task preferring this pool as its executor") == true)
        #expect(UnitOrigin.none.description == nil)
        #expect(RuntimeRegistry.describeSubject(0, origin: .none, in: []) == "a job (no queue)")
        #expect(MemoryLayout<UnitOrigin>.size == 8)
        #expect(MemoryLayout<PoolUnit>.stride <= 32)
    }

    /// A threshold of zero or less is misuse (nil turns the reports off).
    @Test func aNonPositiveThresholdTraps() async {
        await #expect(processExitsWith: .failure) {
            let pool = WorkerPool(label: "stall.zero", threads: 1)
            pool.stallThreshold = .zero
        }
    }

    /// The saturation report names the pool's longest-running workers.
    @Test func theSaturationReportNamesTheOldestRunners() async {
        await #expect(processExitsWith: .success) {
            let observer = CollectingObserver()
            RuntimeObservation.observer = observer
            guard let blocked = poolTestBlockedPool(label: "stall.saturated") else { exit(10) }
            SerialQueue(label: "stall.saturated.waiting", pool: blocked.pool).async {}
            guard
                waitUntil(seconds: 10, { !observer.events(where: "pool", is: "stall.saturated").isEmpty })
            else { exit(11) }
            let event = observer.events(where: "pool", is: "stall.saturated")[0]
            guard event.kind == .saturationBegan,
                event.message.contains("running longest: thread "),
                event.message.contains("serial queue 'stall.saturated.blocker'")
            else { exit(12) }
            blocked.gate.open()
            exit(poolTestShutDown(blocked.pool) ? 0 : 13)
        }
    }
}

/// A `run` and a work item stall on a blocking pool with a 200 ms threshold: both stall reports and the snapshot's
/// runners name their call sites. Outside the exit test's closure, so that `#fileID` and `#line` are this file's.
private func namedStallScenario() -> Int32 {
    let observer = CollectingObserver()
    RuntimeObservation.observer = observer
    let pool = WorkerPool(label: "stall.named", threads: 2, kind: .blocking)
    pool.stallThreshold = .milliseconds(200)
    let release = Semaphore(value: 0)
    let runLine = #line + 1
    Task { try await pool.run { _ = release.wait(timeout: .seconds(10)) } }
    let itemLine = #line + 1
    let item = WorkItem { _ = release.wait(timeout: .seconds(10)) }
    SerialQueue(label: "stall.items", pool: pool).async(execute: item)
    let run = "WorkerPool.run from ThreadingTests/StallWatchdogTests.swift:\(runLine)"
    let workItem =
        "serial queue 'stall.items' (WorkItem created at ThreadingTests/StallWatchdogTests.swift:\(itemLine))"
    let began = { observer.events(where: "pool", is: "stall.named").filter { $0.kind == .stallBegan } }
    guard waitUntil(seconds: 10, { began().count == 2 }) else {
        faultLog("stall reports: \(observer.events.withLock { $0.map(\.message) })\n")
        return 10
    }
    let works = RuntimeSnapshot.capture().pools.first { $0.label == "stall.named" }?.runners.map(\.work) ?? []
    for event in began() { faultLog(event.message + "\n") }
    faultLog("snapshot: \(works)\n")
    release.signal()
    release.signal()
    guard began().contains(where: { $0.message.contains("has been running \(run) for") }),
        began().contains(where: { $0.message.contains("has been running \(workItem) for") }),
        Set(works) == [run, workItem]
    else { return 11 }
    return poolTestShutDown(pool) ? 0 : 12
}
