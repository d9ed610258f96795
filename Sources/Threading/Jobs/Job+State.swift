// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

extension Job {
    /// Where a ``Job`` is in its life cycle.
    ///
    /// A value type, so it is `Sendable`.
    public enum State: Sendable, Hashable, CustomStringConvertible {
        /// At least one dependency has not ended yet.
        case waiting
        /// All dependencies ended; the job may start.
        case ready
        /// The body is running (an asynchronous job: until it called `finish`).
        case executing
        /// The body returned (an asynchronous job: finished without an error) and the job was not cancelled.
        case finished
        /// The body threw (or an asynchronous job finished with an error): see ``Job/error``.
        case failed
        /// The job was cancelled: before it started (it never ran) or while it ran.
        case cancelled

        /// Whether this is an end state (finished, failed or cancelled).
        public var isEnded: Bool {
            switch self {
            case .finished, .failed, .cancelled: true
            case .waiting, .ready, .executing: false
            }
        }

        /// The state's name, such as `executing`.
        public var description: String {
            switch self {
            case .waiting: "waiting"
            case .ready: "ready"
            case .executing: "executing"
            case .finished: "finished"
            case .failed: "failed"
            case .cancelled: "cancelled"
            }
        }
    }

    /// The order in which a ``JobQueue`` starts its ready jobs: higher priorities first, equal priorities in the
    /// order they became ready.
    ///
    /// A value type, so it is `Sendable`.
    public enum Priority: Int, Sendable, Hashable, CaseIterable, Comparable, CustomStringConvertible {
        /// The lowest priority.
        case veryLow = -8
        /// Below normal.
        case low = -4
        /// The default.
        case normal = 0
        /// Above normal.
        case high = 4
        /// The highest priority.
        case veryHigh = 8

        /// Lower raw values are lower priorities.
        public static func < (lhs: Priority, rhs: Priority) -> Bool { lhs.rawValue < rhs.rawValue }

        /// The priority's name, such as `veryHigh`.
        public var description: String {
            switch self {
            case .veryLow: "veryLow"
            case .low: "low"
            case .normal: "normal"
            case .high: "high"
            case .veryHigh: "veryHigh"
            }
        }

        /// 0 for veryLow ... 4 for veryHigh.
        var index: Int {
            switch self {
            case .veryLow: 0
            case .low: 1
            case .normal: 2
            case .high: 3
            case .veryHigh: 4
            }
        }
    }
}
