// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import CThreading
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The pool's counters (``WorkerPoolStatistics``).
extension PoolCore {
    // MARK: Statistics

    /// The pool's counters now (``WorkerPoolStatistics``).
    func snapshot() -> WorkerPoolStatistics {
        // The counters first, so that the snapshot's own acquisition is not in them.
        let acquisitions = Int(lock.acquisitions.load(ordering: .relaxed))
        var local: UInt64 = 0
        var steals: UInt64 = 0
        for index in 0..<slotBound.load(ordering: .acquiring) {
            local &+= slots[index].submitted.load(ordering: .relaxed)
            steals &+= slots[index].steals.load(ordering: .relaxed)
        }
        let submitted = Int(truncatingIfNeeded: submittedTotal())
        return lock.withLock { synced in
            WorkerPoolStatistics(
                label: label,
                threads: synced.threads,
                peakThreads: synced.peakThreads,
                running: synced.running,
                blocked: synced.blocked,
                pending: pendingTotal(),
                idle: synced.idle.count,
                maxThreads: maxThreads,
                cores: cores,
                cancelledFirings: cancelledFirings.load(ordering: .relaxed) + droppedAfterStop.load(ordering: .relaxed),
                saturations: synced.saturations,
                saturationWarnings: synced.saturationWarnings,
                submitted: submitted,
                localSubmissions: Int(truncatingIfNeeded: local),
                steals: Int(truncatingIfNeeded: steals),
                wakeUps: Int(truncatingIfNeeded: wakeUps.load(ordering: .relaxed)),
                lockAcquisitions: acquisitions
            )
        }
    }

    func resetPeak() {
        lock.withLock { $0.peakThreads = $0.threads }
    }
}
