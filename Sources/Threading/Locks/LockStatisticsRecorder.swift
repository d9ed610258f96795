// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import CThreading
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The counters behind ``LockStatistics``: relaxed atomics, touched only while statistics are enabled.
///
/// `Sendable` because every field is an `Atomic`.
@usableFromInline
final class LockStatisticsRecorder: Sendable {
    @usableFromInline let enabled = Atomic<Bool>(false)
    let acquisitions = Atomic<UInt64>(0)
    let contendedAcquisitions = Atomic<UInt64>(0)
    let waitNanoseconds = Atomic<UInt64>(0)

    @usableFromInline
    init() {}

    @inline(__always)
    var isEnabled: Bool { enabled.load(ordering: .relaxed) }

    /// Counts an acquisition that did not wait.
    func recordUncontended() {
        acquisitions.wrappingAdd(1, ordering: .relaxed)
    }

    /// Counts an acquisition that waited since `start` (a `cthr_clock_now_ns` reading).
    func recordContended(since start: UInt64) {
        let now = cthr_clock_now_ns()
        acquisitions.wrappingAdd(1, ordering: .relaxed)
        contendedAcquisitions.wrappingAdd(1, ordering: .relaxed)
        waitNanoseconds.wrappingAdd(now &- start, ordering: .relaxed)
    }

    /// Acquires with `attempt` (a trylock: 0 or EBUSY) and, when busy, `wait` (a blocking or timed lock), recording
    /// the outcome. Returns the code of the call that decided (0 when acquired).
    func acquire(attempt: () -> CInt, wait: () -> CInt) -> CInt {
        let first = attempt()
        if first == 0 {
            recordUncontended()
            return 0
        }
        if first != EBUSY { return first }
        let start = cthr_clock_now_ns()
        let code = wait()
        if code == 0 { recordContended(since: start) }
        return code
    }

    var snapshot: LockStatistics {
        LockStatistics(
            acquisitions: acquisitions.load(ordering: .relaxed),
            contendedAcquisitions: contendedAcquisitions.load(ordering: .relaxed),
            totalWait: .nanoseconds(Int64(clamping: waitNanoseconds.load(ordering: .relaxed)))
        )
    }

    func reset() {
        acquisitions.store(0, ordering: .relaxed)
        contendedAcquisitions.store(0, ordering: .relaxed)
        waitNanoseconds.store(0, ordering: .relaxed)
    }
}
