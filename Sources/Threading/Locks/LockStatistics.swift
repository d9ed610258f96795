// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

/// Contention counters of one lock, read with a lock's `statistics` property.
///
/// Every lock of Threading can count its acquisitions once `statisticsEnabled` is set; statistics are off by
/// default and cost nothing then (``MutexLock`` keeps its one-instruction fast path: enabling statistics sets a bit
/// in the lock word that sends lock and unlock to the slow path, which does the counting; the other locks check a
/// flag). Counters are relaxed atomics: a snapshot taken while other threads lock is consistent per field, not
/// across fields.
///
/// A value type of integers and a `Duration`, so it is `Sendable`.
public struct LockStatistics: Sendable, Hashable, CustomStringConvertible {
    /// Acquisitions counted while statistics were enabled (`lock`, successful `tryLock` and timed locks).
    public var acquisitions: UInt64

    /// Acquisitions that found the lock held and had to wait for it.
    public var contendedAcquisitions: UInt64

    /// Total time threads spent waiting in contended acquisitions (monotonic clock).
    public var totalWait: Duration

    /// Creates statistics from their fields.
    ///
    /// - Parameters:
    ///   - acquisitions: Number of acquisitions.
    ///   - contendedAcquisitions: Number of acquisitions that waited.
    ///   - totalWait: Total time spent waiting.
    public init(acquisitions: UInt64 = 0, contendedAcquisitions: UInt64 = 0, totalWait: Duration = .zero) {
        self.acquisitions = acquisitions
        self.contendedAcquisitions = contendedAcquisitions
        self.totalWait = totalWait
    }

    /// The share of acquisitions that had to wait, from 0 to 1 (0 when there were none).
    public var contentionRatio: Double {
        acquisitions == 0 ? 0 : Double(contendedAcquisitions) / Double(acquisitions)
    }

    /// A one-line summary: acquisitions, contended share and total wait.
    public var description: String {
        "acquisitions: \(acquisitions), contended: \(contendedAcquisitions), wait: \(totalWait)"
    }
}
