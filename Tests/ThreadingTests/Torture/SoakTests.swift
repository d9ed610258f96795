// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import CThreading
import Glibc
import Synchronization
import Testing

@testable import Threading

/// The resident set size of this process in bytes, from `/proc/self/statm` (second field, in pages).
func tortureResidentBytes() -> Int {
    guard let file = fopen("/proc/self/statm", "r") else { return 0 }
    defer { fclose(file) }
    var size = 0
    var resident = 0
    guard
        withUnsafeMutablePointer(
            to: &size,
            { sizePointer in
                withUnsafeMutablePointer(to: &resident) { residentPointer in
                    withVaList([sizePointer, residentPointer]) { vfscanf(file, "%ld %ld", $0) }
                }
            }
        ) == 2
    else { return 0 }
    return resident * Int(sysconf(Int32(_SC_PAGESIZE)))
}

extension TortureTests {
    /// The soak: a mixed load (queues, locks, RCU values and maps, jobs, threads) repeated for a while; the resident
    /// set size after a warm-up round and at the end must not grow by more than ``SoakTorture/allowedGrowth``.
    ///
    /// Short by default (about 2 s); `make torture` runs it for `SOAK_SECONDS` (default 60 s) and `make soak
    /// SOAK_SECONDS=N` for as long as wanted.
    @Suite(.serialized)
    struct SoakTorture {
        /// The bound on growth of the resident set between the warm-up and the end: 16 MiB (allocator caches and
        /// the pool's thread stacks vary by a few MiB; a leak of one object per operation grows far beyond it).
        static let allowedGrowth = 16 << 20

        static var seconds: Double {
            if let text = getenv("SOAK_SECONDS").map({ String(cString: $0) }), let value = Double(text), value > 0 {
                return value
            }
            return Torture.isLong ? 60 : 2
        }

        /// AddressSanitizer keeps freed memory in quarantine (256 MiB by default) instead of reusing it, so the
        /// resident set grows by the quarantine, not by leaks: the RSS bound is checked in plain and TSan runs only
        /// (leaks are checked under ASan by the live-instance counts of the other torture suites).
        static let underAddressSanitizer = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "__asan_init") != nil

        @Test(.disabled(if: underAddressSanitizer, "ASan's quarantine grows the RSS by design"))
        func soakKeepsMemoryFlat() {
            let seed = Torture.seed()
            var random = TortureRandom(seed: seed)
            let operations = TortureCounter()
            // Warm-up round: lets the pool, the allocator and liburcu reach their steady state.
            soakRound(&random, operations)
            Self.flushDeferredReleases()
            let before = tortureResidentBytes()
            let deadline = cthr_clock_now_ns() + UInt64(Self.seconds * 1e9)
            var rounds = 0
            repeat {
                soakRound(&random, operations)
                rounds += 1
            } while cthr_clock_now_ns() < deadline
            Self.flushDeferredReleases()
            _ = Torture.waitUntil(seconds: 5) { QueueEngineStatistics.current.pending == 0 }
            let after = tortureResidentBytes()
            #expect(before > 0 && after > 0, "could not read /proc/self/statm")
            #expect(after - before <= Self.allowedGrowth, "RSS grew from \(before) to \(after) bytes")
            Torture.report(
                "soak",
                seed: seed,
                [
                    "seconds": Int(Self.seconds), "rounds": rounds, "operations": operations.value,
                    "rss-before-kib": before >> 10, "rss-after-kib": after >> 10, "growth-kib": (after - before) >> 10,
                ]
            )
        }

        /// Waits for RCU's deferred releases: an RCU map's entries, then its table, then its releaser are freed by
        /// chained callbacks, and one `RCU.barrier()` waits only for the callbacks queued before it.
        static func flushDeferredReleases() {
            for _ in 0..<3 { RCU.barrier() }
        }

        /// One round: 200 queue tasks over serial and concurrent queues, lock sections, RCU updates and reads, a
        /// small job DAG and a short-lived thread; everything ends before the round returns.
        func soakRound(_ random: inout TortureRandom, _ operations: TortureCounter) {
            let serial = SerialQueue(label: "soak.serial")
            let concurrent = ConcurrentQueue(label: "soak.concurrent", width: 2)
            let group = WorkGroup()
            let lock = MutexLock()
            let counter = Shared(0)
            let value = RCUValue([Int](repeating: 0, count: 8))
            let map = RCUMap<Int, [Int]>()
            for index in 0..<200 {
                let queue: any WorkQueue = index % 2 == 0 ? serial : concurrent
                queue.async(group: group) {
                    lock.withLock { counter.value += 1 }
                    if index % 4 == 0 {
                        value.update { old in old.map { $0 + 1 } }
                        map.set([index], forKey: index % 32)
                    } else {
                        _ = value.read { $0.count }
                        _ = map.withValue(forKey: index % 32) { $0.count }
                    }
                }
            }
            let jobs = JobQueue(name: "soak.jobs", maxConcurrentJobs: 2)
            var previous: Job?
            for _ in 0..<20 {
                let job = Job { _ in lock.withLock { counter.value += 1 } }
                if let previous, random.chance(50) { try? job.addDependency(previous) }
                previous = job
                jobs.addJob(job)
            }
            let thread = try? PosixThread { lock.withLock { counter.value += 1 } }
            thread?.join()
            #expect(group.wait(timeout: .seconds(20)))
            #expect(jobs.waitUntilAllFinished(timeout: .seconds(20)))
            #expect(lock.withLock { counter.value } == 220 + (thread == nil ? 0 : 1))
            operations.add(200 + 20 + 1 + 50)
        }
    }
}
