// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

/// The quality of service of a queue: which lane of its worker pool runs its work.
///
/// Each pool keeps one lane per class. Workers always serve the highest non-empty lane first, but a lower lane that
/// has been passed over ``agingLimit`` times in a row is served next, so lower lanes are never starved.
///
/// QoS is a priority *inside* a pool, never a nice value: workers do not call `setpriority`, so they all run at the
/// process's nice value whatever lane they served last. (An earlier pool changed a worker's nice value per task:
/// without `CAP_SYS_NICE`, root inside a default container included, a worker that once ran `.background` work could
/// never return to nice 0, and as root it cost one or two system calls per lane switch.) Work that must run at a
/// lower OS priority belongs on a pool of its own whose threads you renice, or in a process of its own.
///
/// A value type with no references, so it is `Sendable`.
public enum QoS: Int, Sendable, Hashable, CaseIterable, Comparable, CustomStringConvertible {
    /// Work the user is interacting with right now.
    case userInteractive = 0
    /// Work the user started and waits for.
    case userInitiated = 1
    /// The default class.
    case `default` = 2
    /// Long-running work the user does not wait for, such as network loads.
    case utility = 3
    /// Maintenance work the user does not see.
    case background = 4

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
