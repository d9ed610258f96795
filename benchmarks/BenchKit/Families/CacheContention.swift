// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import Foundation

/// The cache-contention workload: a dictionary shared by threads, made measurable.
///
/// T threads, started together, each loop for a fixed duration: pick a key uniformly in `0..<keyCount`, then read
/// it (with probability `readRatio`) or write it. Every value ever written for key k is `k + keyCount * r` for a
/// random r, so a read that returns a value not congruent to its key modulo `keyCount` (torn or corrupt), or no
/// value at all (lost), is counted as bad, and a strategy with any bad read is reported INVALID, never as fast.
/// After each run the whole cache is checked once more.
public enum CacheContention {
    /// The workload's parameters.
    public struct Parameters: Sendable, Codable, Equatable {
        /// Number of keys (default 1,024).
        public var keyCount: Int
        /// Fraction of operations that are reads, 0...1.
        public var readRatio: Double

        /// Creates parameters.
        public init(keyCount: Int = 1024, readRatio: Double = 0.95) {
            self.keyCount = keyCount
            self.readRatio = readRatio
        }
    }

    /// A cache strategy as the CLI and the study see it.
    public struct Entry: Sendable {
        /// Display name.
        public var name: String
        /// Command-line identifier.
        public var id: String
        /// Ours, peer or reference.
        public var kind: StrategyKind
        /// What it measures, for `--list`.
        public var summary: String
        /// Where it runs.
        public var isolation: Isolation
        /// Extra environment of the child process (`isolation == .childProcess`).
        public var environment: [String: String] = [:]
        /// Runs the workload in this process.
        public var runInProcess: @Sendable (Parameters, _ threads: Int, _ seconds: Double) -> RunSample

        /// Wraps a strategy type; `runInProcess` is specialized for it (no dynamic dispatch in the hot loop).
        public init<S: CacheStrategy>(_ type: S.Type, isolation: Isolation = .inProcess) {
            name = S.name
            id = S.id
            kind = S.kind
            summary = S.summary
            self.isolation = isolation
            runInProcess = { parameters, threads, seconds in
                runWorkload(S.self, parameters: parameters, threads: threads, seconds: seconds)
            }
        }

        /// The strategy run in a child process started in `MutexLock`'s opt-in membarrier mode (for the locks it
        /// uses), side by side with the default mode.
        public init<S: CacheStrategy>(membarrierModeOf type: S.Type) {
            self.init(S.self, isolation: .childProcess)
            name += " (membarrier)"
            id += "-membarrier"
            environment = ChildProcessRunner.membarrierMode
        }
    }

    /// Every cache strategy, ours first, then the peers, then the references.
    public static let catalog: [Entry] =
        oursEntries + peerEntries + [
            Entry(CASSpinCache.self),
            Entry(UnsynchronizedCache.self, isolation: .childProcess),
        ]

    /// The peers a server-Swift engineer would otherwise pick.
    static let peerEntries: [Entry] = [
        Entry(NSLockCache.self),
        Entry(NSRecursiveLockCache.self),
        Entry(SynchronizationMutexCache.self),
        Entry(NIOLockCache.self),
        Entry(NIOLockedValueBoxCache.self),
        Entry(DispatchSemaphoreCache.self),
        Entry(DispatchSerialSyncCache.self),
        Entry(DispatchSerialAsyncWriteCache.self),
        Entry(DispatchConcurrentBarrierCache.self),
        Entry(PthreadRWLockCache.self),
    ]

    /// Builds the study's cases for the chosen entries.
    public static func cases(_ entries: [Entry], parameters: Parameters, childRunner: ChildProcessRunner) -> [BenchCase]
    {
        entries.map { entry in
            switch entry.isolation {
            case .inProcess:
                let run = entry.runInProcess
                return BenchCase(name: entry.name, id: entry.id, kind: entry.kind) { threads, seconds in
                    run(parameters, threads, seconds)
                }
            case .childProcess:
                let id = entry.id
                let environment = entry.environment
                return BenchCase(name: entry.name, id: entry.id, kind: entry.kind, isolation: .childProcess) {
                    threads,
                    seconds in
                    childRunner.runCache(
                        strategy: id,
                        parameters: parameters,
                        threads: threads,
                        seconds: seconds,
                        environment: environment
                    )
                }
            }
        }
    }

    /// Study identifier for a read ratio: `cache-r95`, `cache-r50`, `cache-r100`.
    public static func studyID(readRatio: Double) -> String {
        "cache-r\(Int((readRatio * 100).rounded()))"
    }

    /// Study title for a read ratio and key count.
    public static func title(_ parameters: Parameters) -> String {
        let percent = parameters.readRatio * 100
        let shown = percent == percent.rounded() ? String(Int(percent)) : String(format: "%.1f", percent)
        return "cache \(shown)% reads, \(parameters.keyCount) keys"
    }

    /// Runs one timed run of strategy `S` on a fresh cache and validates it.
    public static func runWorkload<S: CacheStrategy>(
        _ type: S.Type,
        parameters: Parameters,
        threads: Int,
        seconds: Double
    ) -> RunSample {
        precondition(parameters.keyCount > 0, "keyCount must be positive")
        let cache = S(keyCount: parameters.keyCount)
        let readRatio = min(max(parameters.readRatio, 0), 1)
        let readThreshold = UInt64(readRatio * 4_294_967_296.0)
        let body: @Sendable (Int, StartGate) -> WorkerResult = { index, gate in
            worker(cache, keyCount: parameters.keyCount, readThreshold: readThreshold, index: index, gate: gate)
        }
        var sample = runTimed(threads: threads, seconds: seconds, afterJoin: { cache.quiesce() }, body)
        sample.badOperations += finalCheck(cache, keyCount: parameters.keyCount)
        return sample
    }

    /// The hot loop, identical for every strategy: random key, read or write, validate reads, sample latency.
    @inline(__always)
    static func worker<S: CacheStrategy>(
        _ cache: S,
        keyCount: Int,
        readThreshold: UInt64,
        index: Int,
        gate: StartGate
    ) -> WorkerResult {
        var random = FastRandom(seed: UInt64(truncatingIfNeeded: index &+ 1) &* 0x2545_F491_4F6C_DD1D)
        let keySpan = UInt64(keyCount)
        let mask = keyCount &- 1
        let powerOfTwo = keyCount & mask == 0
        var result = WorkerResult()
        var operations = 0
        var bad = 0
        gate.arriveAndWait()
        let cpuStart = threadCPUNanoseconds()
        repeat {
            for step in 0..<LatencySampler.interval {
                let bits = random.next()
                let key = Int(truncatingIfNeeded: ((bits >> 32) &* keySpan) >> 32)
                let started = step == 0 ? monotonicNanoseconds() : 0
                if bits & 0xFFFF_FFFF < readThreshold {
                    if let value = cache.read(key) {
                        let residue = powerOfTwo ? value & mask : value % keyCount
                        if value < 0 || residue != key { bad &+= 1 }
                    } else {
                        bad &+= 1
                    }
                } else {
                    cache.write(key, key &+ keyCount &* Int(truncatingIfNeeded: bits >> 44))
                }
                if step == 0 {
                    _ = result.latency.record(monotonicNanoseconds() &- started)
                }
            }
            operations &+= LatencySampler.interval
        } while !gate.isStopped
        result.endNanoseconds = monotonicNanoseconds()
        result.cpuNanoseconds = threadCPUNanoseconds() &- cpuStart
        result.operations = operations
        result.badOperations = bad
        return result
    }

    /// After a run: every key must still be present with a congruent value.
    static func finalCheck<S: CacheStrategy>(_ cache: S, keyCount: Int) -> Int {
        var bad = 0
        for key in 0..<keyCount {
            guard let value = cache.read(key), value >= 0, value % keyCount == key else {
                bad += 1
                continue
            }
        }
        return bad
    }
}
