// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import Synchronization

/// A lock-free histogram of durations in nanoseconds: four buckets per power of two (a value is placed within 25%),
/// 256 relaxed atomic counters. Recording is one `wrappingAdd` on one counter; reading sums them (a racy but safe
/// view: a value recorded meanwhile may be in it or not).
final class LatencyHistogram: Sendable {
    static let bucketCount = 256
    private let buckets: InlineArray<256, Atomic<UInt64>> = InlineArray { _ in Atomic(0) }

    init() {}

    /// The bucket of `nanoseconds`: values below 4 have their own; above, two mantissa bits under the leading one.
    @inline(__always)
    static func bucket(of nanoseconds: UInt64) -> Int {
        if nanoseconds < 4 { return Int(nanoseconds) }
        let exponent = UInt64.bitWidth - 1 - nanoseconds.leadingZeroBitCount  // >= 2
        let mantissa = Int((nanoseconds >> UInt64(exponent - 2)) & 3)
        return (exponent - 1) * 4 + mantissa
    }

    /// The smallest value of bucket `index`.
    static func lowerBound(of index: Int) -> UInt64 {
        if index < 4 { return UInt64(index) }
        let exponent = index / 4 + 1
        let mantissa = UInt64(index % 4)
        return (4 | mantissa) << UInt64(exponent - 2)
    }

    @inline(__always)
    func record(_ nanoseconds: UInt64) {
        buckets[LatencyHistogram.bucket(of: nanoseconds)].wrappingAdd(1, ordering: .relaxed)
    }

    /// The counts now, as a public value.
    func distribution() -> LatencyDistribution {
        var counts = [UInt64](repeating: 0, count: LatencyHistogram.bucketCount)
        for index in 0..<LatencyHistogram.bucketCount { counts[index] = buckets[index].load(ordering: .relaxed) }
        return LatencyDistribution(bucketCounts: counts)
    }
}

/// A distribution of durations recorded by the runtime (``WorkerPoolStatistics/runTimes``): how many, and the
/// percentiles.
///
/// Values are kept in buckets four to a power of two, so a percentile is exact to within 25% (it reports the
/// bucket's lower bound). A value type, so it is `Sendable`.
public struct LatencyDistribution: Sendable, Hashable {
    /// Recorded values per bucket (see ``LatencyHistogram``).
    let bucketCounts: [UInt64]

    /// The number of recorded values.
    public var count: Int { Int(truncatingIfNeeded: bucketCounts.reduce(0, &+)) }

    /// The value below which `fraction` of the recorded values lie (`0.5`: the median, `0.99`: the 99th
    /// percentile), or `nil` when nothing was recorded.
    ///
    /// - Parameter fraction: Between 0 and 1. A value below 0 (negative infinity included) reads as 0 and one above
    ///   1 (infinity included) as 1. NaN is misuse and traps: it names no fraction, and read as 0 it would quietly
    ///   give the smallest value recorded.
    /// - Returns: The lower bound of the bucket holding that value: exact to within 25%.
    /// - Complexity: O(1) (256 buckets).
    public func percentile(_ fraction: Double) -> Duration? {
        require(
            !fraction.isNaN,
            "Threading: LatencyDistribution.percentile(_:): the fraction is NaN; pass a value between 0 and 1 (0.5 "
                + "for the median, 0.99 for the 99th percentile)"
        )
        let total = bucketCounts.reduce(0, &+)
        guard total > 0 else { return nil }
        let clamped = Swift.min(1, Swift.max(0, fraction))
        let rank = Swift.max(1, UInt64((clamped * Double(total)).rounded(.up)))
        var seen: UInt64 = 0
        for (index, count) in bucketCounts.enumerated() {
            seen &+= count
            if seen >= rank { return .nanoseconds(Int64(clamping: LatencyHistogram.lowerBound(of: index))) }
        }
        return nil
    }
}
