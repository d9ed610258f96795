// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

#if LoggingSupport
import Logging

/// A ``RuntimeObserver`` that sends the runtime's reports to a swift-log `Logger` (trait `LoggingSupport`).
///
/// Each ``RuntimeEvent`` becomes one log record: its level from ``levels`` (or from the event's
/// ``RuntimeEvent/severity``), its message the event's line without the `Threading: ` prefix (the logger's label
/// says where it comes from), and its metadata the event's facts (`pool`, `queue`, `thread`, `duration_ms`, ...) plus
/// `event`, the kind's stable name (`pool.saturation.began`). The runtime's rate limits apply before the event is
/// made, so the logger sees at most what standard error saw. Set it with ``RuntimeObservation/log(to:levels:)``:
///
/// ```swift
/// import Logging
///
/// RuntimeObservation.log(to: Logger(label: "threading"))
/// ```
///
/// A value type holding a `Logger` (itself `Sendable`), so it is `Sendable`.
public struct LoggingObserver: RuntimeObserver {
    /// The logger every event goes to.
    public let logger: Logger
    /// The level for each kind of event; a kind not listed logs at the level of its severity (``level(for:)``).
    public let levels: [RuntimeEvent.Kind: Logger.Level]

    /// Creates an observer that logs to `logger`.
    ///
    /// - Parameters:
    ///   - logger: Where the events go; its own level filters them as usual.
    ///   - levels: A level per kind of event, overriding the one its severity gives (for instance
    ///     `[.stallEnded: .debug]`).
    public init(logger: Logger, levels: [RuntimeEvent.Kind: Logger.Level] = [:]) {
        self.logger = logger
        self.levels = levels
    }

    /// The level an event logs at: the one ``levels`` gives its kind, else `info`, `warning` or `error` for the
    /// severities ``RuntimeEvent/Severity/info``, ``RuntimeEvent/Severity/warning`` and
    /// ``RuntimeEvent/Severity/error``.
    ///
    /// - Parameter event: The event.
    /// - Returns: Its level.
    public func level(for event: RuntimeEvent) -> Logger.Level {
        if let level = levels[event.kind] { return level }
        switch event.severity {
        case .info: return .info
        case .warning: return .warning
        case .error: return .error
        }
    }

    /// Logs the event (see ``LoggingObserver``).
    public func observe(_ event: RuntimeEvent) {
        let prefix = "Threading: "
        let text = event.message.hasPrefix(prefix) ? String(event.message.dropFirst(prefix.count)) : event.message
        var metadata: Logger.Metadata = ["event": .string(event.kind.rawValue)]
        for (key, value) in event.metadata { metadata[key] = .string(value) }
        logger.log(level: level(for: event), "\(text)", metadata: metadata)
    }
}

extension RuntimeObservation {
    /// Sends every report of the runtime from now on to `logger` instead of standard error (trait
    /// `LoggingSupport`): sets ``observer`` to a ``LoggingObserver``.
    ///
    /// ```swift
    /// import Logging
    ///
    /// RuntimeObservation.log(to: Logger(label: "threading"))
    /// ```
    ///
    /// - Parameters:
    ///   - logger: Where the events go.
    ///   - levels: A level per kind of event, overriding the one its severity gives.
    public static func log(to logger: Logger, levels: [RuntimeEvent.Kind: Logger.Level] = [:]) {
        observer = LoggingObserver(logger: logger, levels: levels)
    }
}
#endif
