// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

#if LoggingSupport
import Foundation
import InMemoryLogging
import Logging
import Testing

@testable import Threading

/// The swift-log adapter (trait `LoggingSupport`), against swift-log's own in-memory handler.
@Suite struct LoggingObserverTests {
    private func event(
        _ kind: RuntimeEvent.Kind,
        _ severity: RuntimeEvent.Severity,
        _ metadata: [String: String] = [:]
    ) -> RuntimeEvent {
        RuntimeEvent(kind: kind, severity: severity, message: "Threading: something happened", metadata: metadata)
    }

    /// Each severity has its level, and a kind listed in `levels` takes the level given there instead.
    @Test func levelsFollowTheSeverityUnlessTheKindIsListed() {
        let observer = LoggingObserver(logger: Logger(label: "t"), levels: [.stallEnded: .debug])
        #expect(observer.level(for: event(.stallBegan, .info)) == .info)
        #expect(observer.level(for: event(.saturationBegan, .warning)) == .warning)
        #expect(observer.level(for: event(.waitCycle, .error)) == .error)
        #expect(observer.level(for: event(.stallEnded, .info)) == .debug)
    }

    /// One record per event: the line without its `Threading: ` prefix, the event's facts and its kind as metadata.
    @Test func anEventBecomesOneRecordWithItsFactsAsMetadata() {
        let (handler, logger) = InMemoryLogHandler.makeLogger(labeled: "threading")
        let observer = LoggingObserver(logger: logger)
        observer.observe(event(.saturationBegan, .warning, ["pool": "render", "queued": "12"]))
        let entries = handler.entries
        #expect(entries.count == 1)
        #expect(entries.first?.level == .warning)
        #expect(entries.first?.message.description == "something happened")
        #expect(
            entries.first?.metadata
                == ["event": "pool.saturation.began", "pool": "render", "queued": "12"]
        )
    }

    /// The logger's own level filters as usual: an info event does not reach a logger set to warning.
    @Test func theLoggersLevelFilters() {
        let (handler, base) = InMemoryLogHandler.makeLogger(labeled: "threading")
        var logger = base
        logger.logLevel = .warning
        let observer = LoggingObserver(logger: logger)
        observer.observe(event(.stallEnded, .info))
        observer.observe(event(.stallBegan, .warning))
        #expect(handler.entries.map(\.level) == [.warning])
    }

    /// `RuntimeObservation.log(to:)` is the one-line setup: a real report of the runtime (a saturated pool) reaches
    /// the logger with the pool's name, and nothing goes to standard error. In a process of its own, since the
    /// observer is process-wide.
    @Test func theOneLineSetupSendsARealReportToTheLogger() async {
        let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
            let (handler, logger) = InMemoryLogHandler.makeLogger(labeled: "threading")
            RuntimeObservation.log(to: logger)
            guard RuntimeObservation.observer is LoggingObserver,
                let (pool, gate) = poolTestBlockedPool(label: "log.saturated")
            else { exit(2) }
            let queue = ConcurrentQueue(label: "log.saturated.work", pool: pool)
            for _ in 0..<4 { queue.async {} }
            let logged = waitUntil(seconds: 20) {
                handler.entries.contains { $0.metadata["event"] == "pool.saturation.began" }
            }
            gate.open()
            guard logged, let entry = handler.entries.first(where: { $0.metadata["event"] == "pool.saturation.began" }),
                entry.level == .warning, entry.metadata["pool"] == "log.saturated",
                !entry.message.description.hasPrefix("Threading:")
            else { exit(1) }
            guard poolTestShutDown(pool) else { exit(3) }
            exit(0)
        }
        let text = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(result != nil)
        #expect(!text.contains("saturat"), "\(text)")
    }
}

extension InMemoryLogHandler {
    /// A handler and a logger (level `trace`) that writes to it.
    static func makeLogger(labeled label: String) -> (InMemoryLogHandler, Logger) {
        var handler = InMemoryLogHandler()
        handler.logLevel = .trace
        let captured = handler
        return (handler, Logger(label: label) { _ in captured })
    }
}
#endif
