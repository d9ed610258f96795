// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

/// Options for work submitted to a queue.
///
/// A value type, so it is `Sendable`.
public struct QueueTaskFlags: OptionSet, Sendable, Hashable {
    /// The raw bits.
    public let rawValue: UInt32

    /// Creates flags from raw bits.
    ///
    /// - Parameter rawValue: The bits.
    public init(rawValue: UInt32) { self.rawValue = rawValue }

    /// On a ``ConcurrentQueue``: wait for all earlier work, run alone, then let later work start. On a serial queue
    /// every task is already exclusive, so the flag changes nothing.
    public static let barrier = QueueTaskFlags(rawValue: 1)
}
