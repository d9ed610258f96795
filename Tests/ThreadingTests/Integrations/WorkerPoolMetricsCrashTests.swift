// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

#if MetricsSupport
import MetricsTestKit
import Testing

@testable import Threading

/// The poller's trap (trait `MetricsSupport`).
@Suite struct WorkerPoolMetricsCrashTests {
    /// A poller whose interval is not positive would spin: the program stops with a message naming the argument.
    @Test func aNonPositiveIntervalTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = WorkerPoolMetrics(pools: [], interval: .zero, factory: TestMetrics())
        }
        let text = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(text.contains("WorkerPoolMetrics(interval: 0.0 seconds): the interval must be positive"), "\(text)")
    }
}
#endif
