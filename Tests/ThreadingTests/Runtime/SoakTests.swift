// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import CTestSupport
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

/// The memory figures of one soak checkpoint.
struct SoakMemory {
    /// Bytes the allocator has handed out and not had back (`mallinfo2`: in-use chunks of every arena plus mmapped
    /// blocks): the live heap, which a leak grows and allocator caching does not.
    var heap: Int
    /// The resident set after `malloc_trim(0)` gave the allocator's free pages back.
    var resident: Int

    /// Hands free pages back to the system first, so that what glibc keeps cached after a burst (RCU defers
    /// frees to its callback thread, which builds up free space in the middle of the heap) is not counted.
    static func now() -> SoakMemory {
        _ = cthr_test_heap_trim()
        return SoakMemory(heap: Int(cthr_test_heap_in_use()), resident: tortureResidentBytes())
    }
}

extension TortureTests {
    /// The soak: a mixed load (queues, locks, RCU values and maps, jobs, threads) repeated for a while, in five
    /// equal stretches (the first a warm-up), in a process of its own (so that no other test's allocations blur the
    /// figures). After each stretch the live heap and the trimmed resident set are read; from the end of the warm-up
    /// to the end, the live heap must not grow by more than ``SoakTorture/allowedHeapGrowth`` and the resident set by
    /// more than ``SoakTorture/allowedResidentGrowth``.
    ///
    /// Short by default (about 2 s); `make torture` runs it for `SOAK_SECONDS` (default 60 s) and `make soak
    /// SOAK_SECONDS=N` for as long as wanted.
    @Suite(.serialized)
    struct SoakTorture {
        /// The bound on growth of the live heap: 160 KiB. Checked: leaking one 144-byte ring buffer per round (a bug
        /// this soak found in `JobQueue`) grew it by 252 KiB in the 2 s short run and by far more in longer ones,
        /// while without the leak it grew by 42 KiB in 2 s and by 4 KiB over the last 32 s of a 40 s run.
        static let allowedHeapGrowth = 160 << 10

        /// The bound on growth of the trimmed resident set: 8 MiB, for what the heap figure cannot see (pool thread
        /// stacks touched deeper, liburcu's per-thread state, page-granular heap fragmentation).
        static let allowedResidentGrowth = 8 << 20

        static var seconds: Double {
            if let text = getenv("SOAK_SECONDS").map({ String(cString: $0) }), let value = Double(text), value > 0 {
                return value
            }
            return Torture.isLong ? 60 : 2
        }

        /// The sanitizers replace malloc (so `mallinfo2` says nothing) and ASan keeps freed memory in quarantine
        /// instead of reusing it: the memory bounds are checked in plain runs only. Under the sanitizers the soak's
        /// load still runs and its counts are still checked (leaks are checked under ASan by the live-instance
        /// counts of the other torture suites).
        static let underSanitizer =
            dlsym(UnsafeMutableRawPointer(bitPattern: 0), "__asan_init") != nil
            || dlsym(UnsafeMutableRawPointer(bitPattern: 0), "__tsan_init") != nil

        @Test func soakKeepsMemoryFlat() async {
            let result = await #expect(
                processExitsWith: .success,
                observing: [\.standardOutputContent, \.standardErrorContent]
            ) {
                exit(SoakTorture.run())
            }
            // The child's summary line, for the torture log.
            let output = String(decoding: result?.standardOutputContent ?? [], as: UTF8.self)
            for line in output.split(separator: "\n") where line.hasPrefix("torture soak") { print(line) }
            let errors = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
            #expect(!errors.contains("soak:"), "\(errors)")
        }

        /// The soak itself, in the exit test's process. Returns 0, or 1 after saying on stderr what failed.
        static func run() -> Int32 {
            let seed = Torture.seed()
            var random = TortureRandom(seed: seed)
            let operations = TestCounter()
            var failures: [String] = []
            // Five equal stretches with a checkpoint after each; the first is the warm-up (the pool, the allocator,
            // liburcu and the pool's buffers reach their high-water marks there), the bounds apply from its end on.
            var checkpoints: [SoakMemory] = []
            var rounds = 0
            for _ in 1...5 {
                let deadline = cthr_clock_now_ns() + UInt64(seconds / 5 * 1e9)
                repeat {
                    failures += round(&random, operations)
                    rounds += 1
                } while cthr_clock_now_ns() < deadline && failures.isEmpty
                checkpoints.append(checkpoint())
            }
            let first = checkpoints[1]
            let last = checkpoints[checkpoints.count - 1]
            if !underSanitizer {
                if first.resident == 0 || last.resident == 0 { failures.append("could not read /proc/self/statm") }
                if last.heap - first.heap > allowedHeapGrowth {
                    failures.append("live heap grew: \(checkpoints.map { $0.heap >> 10 }) KiB at the checkpoints")
                }
                if last.resident - first.resident > allowedResidentGrowth {
                    failures.append(
                        "resident set grew: \(checkpoints.map { $0.resident >> 10 }) KiB at the checkpoints"
                    )
                }
            }
            Torture.report(
                "soak",
                seed: seed,
                [
                    "seconds": Int(seconds), "rounds": rounds, "operations": operations.value,
                    "heap-first-kib": first.heap >> 10, "heap-last-kib": last.heap >> 10,
                    "heap-growth-kib": (last.heap - first.heap) >> 10,
                    "rss-first-kib": first.resident >> 10, "rss-last-kib": last.resident >> 10,
                    "rss-growth-kib": (last.resident - first.resident) >> 10,
                ]
            )
            print(
                "torture soak checkpoints: heap-kib=\(checkpoints.map { $0.heap >> 10 }) "
                    + "rss-kib=\(checkpoints.map { $0.resident >> 10 })"
            )
            fflush(nil)  // the summary line must reach the parent before `exit`
            for failure in failures { faultLog("soak: \(failure) (seed \(seed))\n") }
            return failures.isEmpty ? 0 : 1
        }

        /// Lets deferred work finish (RCU callbacks, queue tasks), then reads the memory figures.
        static func checkpoint() -> SoakMemory {
            flushDeferredReleases()
            _ = waitUntil(seconds: 5) { WorkerPoolStatistics.current.pending == 0 }
            return SoakMemory.now()
        }

        /// Waits for RCU's deferred releases: an RCU map's entries, then its table, then its releaser are freed by
        /// chained callbacks, and one `RCU.barrier()` waits only for the callbacks queued before it.
        static func flushDeferredReleases() {
            for _ in 0..<3 { RCU.barrier() }
        }

        /// One round: 200 queue tasks over serial and concurrent queues, lock sections, RCU updates and reads, a
        /// small job DAG and a short-lived thread; everything ends before the round returns. Returns what failed.
        static func round(_ random: inout TortureRandom, _ operations: TestCounter) -> [String] {
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
            var failures: [String] = []
            if !group.wait(timeout: .seconds(20)) { failures.append("queue tasks did not finish within 20 s") }
            if !jobs.waitUntilAllFinished(timeout: .seconds(20)) { failures.append("jobs did not finish within 20 s") }
            let expected = 220 + (thread == nil ? 0 : 1)
            let counted = lock.withLock { counter.value }
            if counted != expected { failures.append("counted \(counted) critical sections, expected \(expected)") }
            operations.add(200 + 20 + 1 + 50)
            return failures
        }
    }
}
