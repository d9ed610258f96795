// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import CBenchSupport
import Glibc
import Histogram
import Synchronization
import Threading

/// The start line and stop flag shared by the threads of one timed run.
///
/// Every worker signals "arrived" and then spins (yielding the CPU) until the coordinator says "go", so all threads
/// start together; the coordinator raises `stop` when the duration is over. `Sendable` because every field is an
/// `Atomic`.
public final class StartGate: Sendable {
    let arrived = Atomic<Int>(0)
    let go = Atomic<Bool>(false)
    let stop = Atomic<Bool>(false)

    /// Creates a closed gate.
    public init() {}

    /// Signals arrival, then waits until the coordinator opens the gate.
    @inline(__always)
    public func arriveAndWait() {
        arrived.add(1, ordering: .acquiringAndReleasing)
        while !go.load(ordering: .acquiring) {
            sched_yield()
        }
    }

    /// Whether the run is over; workers poll it between batches of operations.
    @inline(__always)
    public var isStopped: Bool { stop.load(ordering: .relaxed) }
}

/// What one worker thread measured in one timed run.
public struct WorkerResult: Sendable {
    /// Operations completed.
    public var operations: Int = 0
    /// Operations whose result failed validation (torn, lost or corrupt reads, lost updates).
    public var badOperations: Int = 0
    /// CPU time the thread consumed while running, in nanoseconds.
    public var cpuNanoseconds: UInt64 = 0
    /// Monotonic time at which the thread finished its last operation.
    public var endNanoseconds: UInt64 = 0
    /// Sampled per-operation latencies in nanoseconds.
    public var latency = LatencySampler.makeHistogram()
    /// The longest wait this thread saw, in nanoseconds, when the family measures it beyond the sampled latencies
    /// (`locks`: the longest batch of `LatencySampler.interval` operations, an upper bound on its longest wait).
    public var worstNanoseconds: UInt64 = 0

    /// Creates an empty result.
    public init() {}
}

/// Samples one operation in every `LatencySampler.interval`; workers record samples into their own histogram.
public enum LatencySampler {
    /// One operation in this many is timed (two clock reads), so the timing cost stays under 1 ns per operation.
    public static let interval = 64

    /// A histogram for latencies from 1 ns to 100 s with two significant digits.
    public static func makeHistogram() -> Histogram<UInt64> {
        Histogram<UInt64>(
            lowestDiscernibleValue: 1,
            highestTrackableValue: 100_000_000_000,
            numberOfSignificantValueDigits: .two
        )
    }
}

/// The outcome of one timed run of `threads` workers.
public struct RunSample: Sendable {
    /// Completed operations per second over the run.
    public var operationsPerSecond: Double
    /// CPU nanoseconds spent by all workers per completed operation.
    public var cpuNanosecondsPerOperation: Double
    /// Slowest thread's operations divided by the mean per thread (1.0 is perfectly fair).
    public var fairness: Double
    /// Operations that failed validation.
    public var badOperations: Int
    /// Total operations.
    public var operations: Int
    /// Merged latency samples.
    public var latency: Histogram<UInt64>
    /// A non-nil description when the run ended abnormally (a child process that crashed, hung, ...).
    public var abnormalOutcome: String?
    /// The longest operation seen (the sampled latencies' maximum, or a family's own `worstNanoseconds`).
    public var worstNanoseconds: UInt64 = 0
    /// `membarrier` calls per second that this process's locks made during the run (`MutexLock.membarrierCalls`):
    /// 0 in the default lock mode, the host-wide cost of the opt-in membarrier mode otherwise.
    public var membarrierCallsPerSecond: Double = 0

    /// Creates a sample from its parts.
    public init(
        operationsPerSecond: Double,
        cpuNanosecondsPerOperation: Double,
        fairness: Double,
        badOperations: Int,
        operations: Int,
        latency: Histogram<UInt64>,
        abnormalOutcome: String? = nil
    ) {
        self.operationsPerSecond = operationsPerSecond
        self.cpuNanosecondsPerOperation = cpuNanosecondsPerOperation
        self.fairness = fairness
        self.badOperations = badOperations
        self.operations = operations
        self.latency = latency
        self.abnormalOutcome = abnormalOutcome
    }
}

/// Runs `body` on `threads` fresh OS threads that start together, for `seconds`, and aggregates their results.
///
/// `body(index, gate)` must call `gate.arriveAndWait()` before its first measured operation, complete at least one
/// batch of operations (so even a very short run measures something) and return when
/// `gate.isStopped` becomes true. The coordinator waits for all arrivals, opens the gate, sleeps for the duration,
/// raises `stop` and joins every thread. Throughput is measured from "go" to the last worker's end.
///
/// `afterJoin`, when given, runs after the join (e.g. draining asynchronous writes) and counts in the elapsed time.
public func runTimed(
    threads: Int,
    seconds: Double,
    afterJoin: (() -> Void)? = nil,
    _ body: @escaping @Sendable (Int, StartGate) -> WorkerResult
) -> RunSample {
    precondition(threads > 0, "runTimed: threads must be positive")
    let gate = StartGate()
    let results = ResultSlots(count: threads)
    var handles: [pthread_t] = []
    handles.reserveCapacity(threads)
    for index in 0..<threads {
        handles.append(spawnThread { results.store(index, body(index, gate)) })
    }
    while gate.arrived.load(ordering: .acquiring) < threads {
        sched_yield()
    }
    let membarriersBefore = MutexLock.membarrierCalls
    let start = cthr_bench_now_ns()
    gate.go.store(true, ordering: .releasing)
    sleepNanoseconds(UInt64(max(seconds, 0) * 1e9))
    gate.stop.store(true, ordering: .releasing)
    for handle in handles {
        joinThread(handle)
    }
    var drained: UInt64 = 0
    if let afterJoin {
        afterJoin()
        drained = cthr_bench_now_ns()
    }
    let all = results.collect()
    var latency = LatencySampler.makeHistogram()
    var operations = 0
    var bad = 0
    var cpu: UInt64 = 0
    var end = max(start, drained)
    var slowest = Int.max
    var worst: UInt64 = 0
    for result in all {
        worst = max(worst, result.worstNanoseconds, result.latency.totalCount > 0 ? result.latency.max : 0)
        operations += result.operations
        bad += result.badOperations
        cpu += result.cpuNanoseconds
        end = max(end, result.endNanoseconds)
        slowest = min(slowest, result.operations)
        latency.add(result.latency)
    }
    let elapsed = Double(max(end - start, 1)) / 1e9
    let mean = Double(operations) / Double(threads)
    var sample = RunSample(
        operationsPerSecond: Double(operations) / elapsed,
        cpuNanosecondsPerOperation: operations > 0 ? Double(cpu) / Double(operations) : 0,
        fairness: mean > 0 ? Double(slowest) / mean : 0,
        badOperations: bad,
        operations: operations,
        latency: latency
    )
    sample.membarrierCallsPerSecond = Double(MutexLock.membarrierCalls &- membarriersBefore) / elapsed
    sample.worstNanoseconds = worst
    return sample
}

/// Per-thread result slots written once by each worker and read by the coordinator after the join.
///
/// `@unchecked Sendable`: each slot is written by exactly one thread, and read only after `pthread_join`, which
/// orders the write before the read.
final class ResultSlots: @unchecked Sendable {
    // A fixed buffer, not an Array: writing one element of a shared `var` array is a mutation of the whole array.
    private let slots: UnsafeMutablePointer<WorkerResult>
    private let count: Int

    init(count: Int) {
        self.count = count
        slots = .allocate(capacity: count)
        slots.initialize(repeating: WorkerResult(), count: count)
    }

    deinit {
        slots.deinitialize(count: count)
        slots.deallocate()
    }

    func store(_ index: Int, _ result: WorkerResult) { slots[index] = result }

    func collect() -> [WorkerResult] { Array(UnsafeBufferPointer(start: slots, count: count)) }
}

/// Sleeps the calling thread for `ns` nanoseconds, resuming after signals.
public func sleepNanoseconds(_ ns: UInt64) {
    var request = timespec(tv_sec: Int(ns / 1_000_000_000), tv_nsec: Int(ns % 1_000_000_000))
    var remaining = timespec()
    while nanosleep(&request, &remaining) != 0 && errno == EINTR {
        request = remaining
    }
}

/// Monotonic clock in nanoseconds.
@inline(__always)
public func monotonicNanoseconds() -> UInt64 { cthr_bench_now_ns() }

/// CPU time of the calling thread in nanoseconds.
@inline(__always)
public func threadCPUNanoseconds() -> UInt64 { cthr_bench_thread_cpu_ns() }

private final class ThreadEntry {
    let body: () -> Void
    init(_ body: @escaping () -> Void) { self.body = body }
}

/// Starts a raw pthread running `body` (the harness's own threads, independent of the library under test).
public func spawnThread(_ body: @escaping @Sendable () -> Void) -> pthread_t {
    var handle = pthread_t()
    let context = Unmanaged.passRetained(ThreadEntry(body)).toOpaque()
    let code = pthread_create(
        &handle,
        nil,
        { raw in
            Unmanaged<ThreadEntry>.fromOpaque(raw!).takeRetainedValue().body()
            return nil
        },
        context
    )
    precondition(code == 0, "pthread_create failed with code \(code)")
    return handle
}

/// Joins a thread started by ``spawnThread(_:)``.
public func joinThread(_ handle: pthread_t) {
    let code = pthread_join(handle, nil)
    precondition(code == 0, "pthread_join failed with code \(code)")
}
