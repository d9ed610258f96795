// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

/// The quality of service of a queue: which lane of the shared worker pool runs its work, and at which nice value.
///
/// The engine keeps one lane per class. Workers always serve the highest non-empty lane first, but a lower lane that
/// has been passed over ``agingLimit`` times in a row is served next, so lower lanes are never starved. A worker
/// sets its nice value to the lane's ``niceValue`` before running that lane's work (Linux applies nice per thread,
/// which is all libdispatch does with QoS on Linux). Raising priority (a smaller nice value) needs `CAP_SYS_NICE`
/// or a matching `RLIMIT_NICE`; where the system refuses (`EPERM`/`EACCES`) the worker keeps its current nice
/// value and the refusal is counted (see ``QueueEngineStatistics``), never reported as an error.
///
/// A value type with no references, so it is `Sendable`.
public enum QoS: Int, Sendable, Hashable, CaseIterable, Comparable, CustomStringConvertible {
    /// Work the user is interacting with right now (nice -4 where allowed).
    case userInteractive = 0
    /// Work the user started and waits for (nice -2 where allowed).
    case userInitiated = 1
    /// The default class (nice 0).
    case `default` = 2
    /// Long-running work the user does not wait for, such as network loads (nice 5).
    case utility = 3
    /// Maintenance work the user does not see (nice 10).
    case background = 4

    /// The nice value of this lane's workers.
    public var niceValue: Int32 {
        switch self {
        case .userInteractive: -4
        case .userInitiated: -2
        case .default: 0
        case .utility: 5
        case .background: 10
        }
    }

    /// How many consecutive times a non-empty lane may be passed over for higher lanes before it is served anyway.
    public static let agingLimit = 8

    /// A lane is "less" when it has lower priority: `QoS.background < QoS.userInteractive`.
    public static func < (lhs: QoS, rhs: QoS) -> Bool { lhs.rawValue > rhs.rawValue }

    /// The class name, such as `userInitiated`.
    public var description: String {
        switch self {
        case .userInteractive: "userInteractive"
        case .userInitiated: "userInitiated"
        case .default: "default"
        case .utility: "utility"
        case .background: "background"
        }
    }
}
