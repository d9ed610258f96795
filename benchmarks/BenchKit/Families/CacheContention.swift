// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import Foundation

/// The cache-contention workload: a dictionary shared by threads, made measurable.
///
/// T threads, started together, each loop for a fixed duration: pick a key index uniformly in `0..<keyCount`, then
/// read its key (with probability `readRatio`) or write it. Every value ever written for the key of index k carries
/// the token `k + keyCount * r` for a random r, so a read whose token is not congruent to its index modulo
/// `keyCount` (torn or corrupt), or that finds no value at all (lost), is counted as bad, and a strategy with any bad
/// read is reported INVALID, never as fast. After each run the whole cache is checked once more.
///
/// Two shapes (``CacheShapeID``): `Int` keys and values, and the realistic one, `String` keys (URL paths of 20 to 60
/// bytes, each thread holding its own copies, as a server holds the paths it parsed) with ``CachedPage`` values (a
/// write allocates a page). A read returns the page's token, read inside the strategy's critical or read section.
public enum CacheContention {
    /// The workload's parameters.
    public struct Parameters: Sendable, Codable, Equatable {
        /// Number of keys (default 1,024).
        public var keyCount: Int
        /// Fraction of operations that are reads, 0...1.
        public var readRatio: Double
        /// The key and value types.
        public var shape: CacheShapeID

        /// Creates parameters.
        public init(keyCount: Int = 1024, readRatio: Double = 0.95, shape: CacheShapeID = .int) {
            self.keyCount = keyCount
            self.readRatio = readRatio
            self.shape = shape
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

        /// Wraps a strategy, given as its type for each shape; `runInProcess` is specialized for each (no dynamic
        /// dispatch in the hot loop).
        public init<I: CacheStrategy, S: CacheStrategy>(
            _ intType: I.Type,
            _ stringType: S.Type,
            isolation: Isolation = .inProcess
        ) where I.Shape == IntCacheShape, S.Shape == StringCacheShape {
            precondition(I.id == S.id, "one strategy for both shapes")
            name = I.name
            id = I.id
            kind = I.kind
            summary = I.summary
            self.isolation = isolation
            runInProcess = { parameters, threads, seconds in
                switch parameters.shape {
                case .int: runWorkload(I.self, parameters: parameters, threads: threads, seconds: seconds)
                case .string: runWorkload(S.self, parameters: parameters, threads: threads, seconds: seconds)
                }
            }
        }

        /// The strategy run in a child process started in `MutexLock`'s opt-in membarrier mode (for the locks it
        /// uses), side by side with the default mode.
        public init<I: CacheStrategy, S: CacheStrategy>(membarrierModeOf intType: I.Type, _ stringType: S.Type)
        where I.Shape == IntCacheShape, S.Shape == StringCacheShape {
            self.init(I.self, S.self, isolation: .childProcess)
            name += " (membarrier)"
            id += "-membarrier"
            environment = ChildProcessRunner.membarrierMode
        }
    }

    /// Every cache strategy, ours first, then the peers, then the references.
    public static let catalog: [Entry] =
        oursEntries + peerEntries + [
            Entry(CASSpinCache<IntCacheShape>.self, CASSpinCache<StringCacheShape>.self),
            Entry(
                UnsynchronizedCache<IntCacheShape>.self,
                UnsynchronizedCache<StringCacheShape>.self,
                isolation: .childProcess
            ),
        ]

    /// The peers a server-Swift engineer would otherwise pick.
    static let peerEntries: [Entry] = [
        Entry(NSLockCache<IntCacheShape>.self, NSLockCache<StringCacheShape>.self),
        Entry(NSRecursiveLockCache<IntCacheShape>.self, NSRecursiveLockCache<StringCacheShape>.self),
        Entry(SynchronizationMutexCache<IntCacheShape>.self, SynchronizationMutexCache<StringCacheShape>.self),
        Entry(NIOLockCache<IntCacheShape>.self, NIOLockCache<StringCacheShape>.self),
        Entry(NIOLockedValueBoxCache<IntCacheShape>.self, NIOLockedValueBoxCache<StringCacheShape>.self),
        Entry(DispatchSemaphoreCache<IntCacheShape>.self, DispatchSemaphoreCache<StringCacheShape>.self),
        Entry(DispatchSerialSyncCache<IntCacheShape>.self, DispatchSerialSyncCache<StringCacheShape>.self),
        Entry(DispatchSerialAsyncWriteCache<IntCacheShape>.self, DispatchSerialAsyncWriteCache<StringCacheShape>.self),
        Entry(
            DispatchConcurrentBarrierCache<IntCacheShape>.self,
            DispatchConcurrentBarrierCache<StringCacheShape>.self
        ),
        Entry(PthreadRWLockCache<IntCacheShape>.self, PthreadRWLockCache<StringCacheShape>.self),
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

    /// Study identifier for a read ratio and shape: `cache-r95`, `cache-r50`, `cache-r100` for `Int` keys,
    /// `cache-string-r95`... for `String` keys.
    public static func studyID(readRatio: Double, shape: CacheShapeID = .int) -> String {
        let percent = Int((readRatio * 100).rounded())
        return shape == .int ? "cache-r\(percent)" : "cache-\(shape.rawValue)-r\(percent)"
    }

    /// Study title for a read ratio, key count and shape.
    public static func title(_ parameters: Parameters) -> String {
        let percent = parameters.readRatio * 100
        let shown = percent == percent.rounded() ? String(Int(percent)) : String(format: "%.1f", percent)
        let keys = "\(parameters.keyCount) keys"
        switch parameters.shape {
        case .int: return "cache \(shown)% reads, \(keys)"
        case .string: return "cache \(shown)% reads, \(keys), \(parameters.shape.title)"
        }
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
            // Each thread its own copies of the keys (made before the start gate, not timed).
            let keys = S.Shape.makeKeys(parameters.keyCount)
            return keys.withUnsafeBufferPointer { keys in
                worker(
                    cache,
                    keys: keys.baseAddress!,
                    keyCount: parameters.keyCount,
                    readThreshold: readThreshold,
                    index: index,
                    gate: gate
                )
            }
        }
        var sample = runTimed(threads: threads, seconds: seconds, afterJoin: { cache.quiesce() }, body)
        sample.badOperations += finalCheck(cache, keyCount: parameters.keyCount)
        return sample
    }

    /// The hot loop, identical for every strategy: random key, read or write, validate reads, sample latency.
    @inline(__always)
    static func worker<S: CacheStrategy>(
        _ cache: S,
        keys: UnsafePointer<S.Shape.Key>,
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
                    if let value = cache.read(S.Shape.key(key, in: keys)) {
                        let residue = powerOfTwo ? value & mask : value % keyCount
                        if value < 0 || residue != key { bad &+= 1 }
                    } else {
                        bad &+= 1
                    }
                } else {
                    let token = key &+ keyCount &* Int(truncatingIfNeeded: bits >> 44)
                    cache.write(S.Shape.key(key, in: keys), S.Shape.makeValue(token))
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
        for (index, key) in S.Shape.makeKeys(keyCount).enumerated() {
            guard let value = cache.read(key), value >= 0, value % keyCount == index else {
                bad += 1
                continue
            }
        }
        return bad
    }
}
