// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import Foundation
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

    /// Events compare by severity, and every kind has a stable dotted name.
    @Test func kindsHaveStableNamesAndSeveritiesAreOrdered() {
        #expect(RuntimeEvent.Severity.info < .warning && RuntimeEvent.Severity.warning < .error)
        #expect(RuntimeEvent.Kind.allCases.allSatisfy { $0.rawValue.contains(".") })
        #expect(Set(RuntimeEvent.Kind.allCases.map(\.rawValue)).count == RuntimeEvent.Kind.allCases.count)
        let event = RuntimeEvent(kind: .stallEnded, severity: .info, message: "Threading: x")
        #expect(event.description == "Threading: x")
    }
}
