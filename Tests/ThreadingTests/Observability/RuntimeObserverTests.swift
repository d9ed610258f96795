// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import Foundation
import Synchronization
import Testing

@testable import Threading

/// Collects events, for the tests of the observer seam.
final class CollectingObserver: RuntimeObserver {
    let events = LockedValue<[RuntimeEvent]>([])

    func observe(_ event: RuntimeEvent) { events.withLock { $0.append(event) } }

    /// The events collected so far whose metadata has `key` equal to `value`.
    func events(where key: String, is value: String) -> [RuntimeEvent] {
        events.withLock { $0.filter { $0.metadata[key] == value } }
    }
}

/// An observer whose `observe` blocks until `release` opens (at most 30 s), then collects the event.
final class BlockingObserver: RuntimeObserver {
    let release = QueueGate()
    let entered = TestCounter()
    let events = LockedValue<[RuntimeEvent]>([])

    func observe(_ event: RuntimeEvent) {
        entered.add()
        _ = release.wait(seconds: 30)
        events.withLock { $0.append(event) }
    }
}

@Suite struct RuntimeObserverTests {
    /// Until set, events go to standard error as one line each.
    @Test func theDefaultObserverWritesToStandardError() async {
        let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
            guard RuntimeObservation.observer is StandardErrorObserver else { exit(1) }
            RuntimeObservation.report(.warning, .warning, "Threading: a test warning", ["k": "v"])
            exit(0)
        }
        let text = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(text == "Threading: a test warning\n", "\(text)")
    }

    /// A runtime report (a `sync` that waits for a suspended queue past its grace period) reaches the observer set
    /// by the program, formatted once, with its facts as metadata, and nothing is written to standard error.
    @Test func aRuntimeReportGoesToTheObserverWithItsMetadata() async {
        let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
            let observer = CollectingObserver()
            RuntimeObservation.observer = observer
            let queue = SerialQueue(label: "observer.suspended")
            queue.suspend()
            let rescuer = try! PosixThread {
                PosixThread.sleep(for: .milliseconds(1_500))
                queue.resume()
            }
            let ran = blockingCall { queue.sync { true } }
            blockingCall { rescuer.join() }
            let events = observer.events(where: "queue", is: "observer.suspended")
            guard ran, events.count == 1, let event = events.first, event.kind == .waitStalled,
                event.severity == .warning, event.message.hasPrefix("Threading: stalled wait: sync onto queue"),
                event.metadata["thread"] != nil, !event.message.hasSuffix("\n")
            else { exit(1) }
            exit(0)
        }
        let text = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(result != nil)
        #expect(!text.contains("stalled wait"), "\(text)")
    }

    /// An observer that does not return (a log sink stuck on a socket) stops only the runtime's delivery thread,
    /// never a pool's monitor. A one-thread CPU pool saturated by 44 blocked units reports it (the observer then
    /// blocks on its first event); once the units end, the monitor gives back every extra slot (and the extra
    /// threads leave when idle), and a second
    /// saturation is compensated (new threads) and counted. The events that find the hand-off full are dropped and
    /// counted, in `droppedEvents`, the snapshot and the dump; once the observer returns, the events held for it
    /// arrive, then one warning saying how many were dropped. Before the hand-off, the monitor stayed in
    /// `observe()`: the extra slots were never given back and the second saturation was never counted.
    @Test func aBlockingObserverDoesNotFreezeThePoolsMonitor() async {
        await #expect(processExitsWith: .success) {
            startExitTestWatchdog()
            let observer = BlockingObserver()
            RuntimeObservation.observer = observer
            let pool = WorkerPool(label: "observer.stuck", threads: 1)
            let queue = ConcurrentQueue(label: "observer.stuck.queue", pool: pool)
            let units = pool.maxThreads + 4
            let first = QueueGate()
            let firstDone = WorkGroup()
            for _ in 0..<units { queue.async(group: firstDone) { _ = first.wait(seconds: 15) } }
            let entered = { observer.entered.value }
            guard waitUntil(seconds: 8, { pool.statistics.saturations == 1 && entered() == 1 }) else { exit(10) }
            // The observer now blocks, on the delivery thread, in the saturation report.
            first.open()
            guard blockingCall({ firstDone.wait(timeout: .seconds(8)) }) else { exit(11) }
            // The monitor gives the extra slots back (it sleeps once nothing is pending), and the extra threads
            // leave after their idle timeout (2 s).
            guard waitUntil(seconds: 5, { pool.poolCore.lock.withLock { $0.extraSlots } == 0 }) else {
                exit(12)
            }
            guard waitUntil(seconds: 6, { pool.statistics.threads <= 2 }) else { exit(22) }
            // A second saturation is compensated again (up to the cap) and counted.
            let second = QueueGate()
            let secondDone = WorkGroup()
            for _ in 0..<units { queue.async(group: secondDone) { _ = second.wait(seconds: 15) } }
            guard waitUntil(seconds: 8, { pool.statistics.saturations == 2 }) else { exit(13) }
            guard pool.statistics.threads == pool.maxThreads else { exit(14) }
            second.open()
            guard blockingCall({ secondDone.wait(timeout: .seconds(8)) }) else { exit(15) }
            // Fill the hand-off from a runtime thread while the observer still blocks in the first event: the ring
            // takes `capacity` events and the last 10 are dropped.
            let before = RuntimeObservation.droppedEvents
            let filled = WorkGroup()
            queue.async(group: filled) {
                for index in 0..<(RuntimeEventDelivery.capacity + 10) {
                    RuntimeObservation.report(.warning, .warning, "Threading: filler \(index)", ["filler": "yes"])
                }
            }
            guard blockingCall({ filled.wait(timeout: .seconds(8)) }) else { exit(16) }
            guard RuntimeObservation.droppedEvents == before + 10, entered() == 1 else { exit(17) }
            let snapshot = RuntimeSnapshot.capture()
            guard snapshot.droppedEvents == before + 10,
                snapshot.description.contains("\(before + 10) runtime event(s) dropped: the observer did not keep up")
            else { exit(18) }
            // Released: the held events arrive in order, then the drop report.
            observer.release.open()
            let arrived = waitUntil(seconds: 8) {
                observer.events.withLock { $0.contains { $0.message.contains("runtime event(s) were dropped") } }
            }
            guard arrived else { exit(19) }
            let events = observer.events.withLock { $0 }
            let fillers = events.filter { $0.metadata["filler"] == "yes" }.map(\.message)
            let expected = (0..<RuntimeEventDelivery.capacity).map { "Threading: filler \($0)" }
            guard fillers == expected, events.first?.kind == .saturationBegan,
                let report = events.last, report.kind == .warning, report.metadata["dropped"] == "\(before + 10)",
                report.message.hasPrefix("Threading: \(before + 10) runtime event(s) were dropped")
            else { exit(20) }
            exit(poolTestShutDown(pool) ? 0 : 21)
        }
    }

    /// Events compare by severity, and every kind has a stable dotted name.
    @Test func kindsHaveStableNamesAndSeveritiesAreOrdered() {
        #expect(RuntimeEvent.Severity.info < .warning && RuntimeEvent.Severity.warning < .error)
        #expect(RuntimeEvent.Kind.allCases.allSatisfy { $0.rawValue.contains(".") })
        #expect(Set(RuntimeEvent.Kind.allCases.map(\.rawValue)).count == RuntimeEvent.Kind.allCases.count)
        let event = RuntimeEvent(kind: .stallEnded, severity: .info, message: "Threading: x")
        #expect(event.description == "Threading: x")
    }
}
