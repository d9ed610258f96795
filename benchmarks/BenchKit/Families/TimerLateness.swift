// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import Dispatch
import Glibc
import Synchronization
import Threading

/// The `timers` family: how late a repeating timer's handler runs while a CPU pool is
/// saturated. A 5 ms repeating timer runs on a serial queue; meanwhile 4 chains per CPU of CPU-bound tasks (each
/// spins 200 us, then submits the next) keep every thread of a pool busy with more work queued behind. One operation
/// is one deadline of the timer; its latency is its lateness: the handler's first run at or after it, minus the
/// deadline (see ``LatenessRecorder``). The timer is cancelled and the chains stopped before the run's pools are shut down.
public enum TimerLateness {
    /// A case as the CLI sees it.
    public struct Entry: Sendable {
        /// Display name.
        public var name: String
        /// Command-line identifier.
        public var id: String
        /// Ours, peer or reference.
        public var kind: StrategyKind
        /// One timed run (the thread count is ignored: one timer).
        public var run: @Sendable (_ threads: Int, _ seconds: Double) -> RunSample
    }

    /// The timer's interval.
    public static let intervalNanoseconds: UInt64 = 5_000_000
    /// How long each saturating task spins.
    static let spinNanoseconds: UInt64 = 200_000
    /// Saturating chains per CPU.
    static let chainsPerCPU = 4

    /// Ours (the saturated pool is another one, or the timer's own), Dispatch's, and ours with nothing saturated.
    public static let catalog: [Entry] = [
        Entry(name: "QueueTimer, another pool saturated", id: "timer-other-pool", kind: .ours) { _, seconds in
            let timerPool = WorkerPool(label: "bench.timer")
            let hogPool = WorkerPool(label: "bench.hog")
            defer {
                timerPool.shutdown()
                hogPool.shutdown()
            }
            return runOurs(timerPool: timerPool, hogPool: hogPool, seconds: seconds)
        },
        Entry(name: "QueueTimer, its own pool saturated", id: "timer-own-pool", kind: .ours) { _, seconds in
            let pool = WorkerPool(label: "bench.timer")
            defer { pool.shutdown() }
            return runOurs(timerPool: pool, hogPool: pool, seconds: seconds)
        },
        Entry(name: "DispatchSourceTimer, global queue saturated", id: "dispatch-timer", kind: .peer) {
            _,
            seconds in
            runDispatch(seconds: seconds)
        },
        Entry(name: "QueueTimer, nothing saturated", id: "timer-idle", kind: .reference) { _, seconds in
            let pool = WorkerPool(label: "bench.timer")
            defer { pool.shutdown() }
            return runOurs(timerPool: pool, hogPool: nil, seconds: seconds)
        },
    ]

    /// Ours: the timer on a `SerialQueue` of `timerPool`, the chains on a `ConcurrentQueue` of `hogPool`.
    static func runOurs(timerPool: WorkerPool, hogPool: WorkerPool?, seconds: Double) -> RunSample {
        let hogs = HogChains()
        if let hogPool {
            let hogQueue = ConcurrentQueue(label: "bench.hog.q", pool: hogPool)
            hogs.start(chains: chainsPerCPU * WorkerPool.defaultThreadCount) { hogQueue.async(execute: $0) }
        }
        let queue = SerialQueue(label: "bench.timer.q", pool: timerPool)
        let recorder = LatenessRecorder()
        return measure(hogs: hogs, recorder: recorder, seconds: seconds) {
            let timer = QueueTimer(
                queue: queue,
                delay: .nanoseconds(Int64(intervalNanoseconds)),
                repeating: .nanoseconds(Int64(intervalNanoseconds))
            ) { recorder.fired() }
            return {
                timer.cancel()
                queue.sync {}
            }
        }
    }

    /// Dispatch: a `DispatchSourceTimer` on a serial queue, the chains on the global concurrent queue.
    static func runDispatch(seconds: Double) -> RunSample {
        let hogs = HogChains()
        hogs.start(chains: chainsPerCPU * WorkerPool.defaultThreadCount) { DispatchQueue.global().async(execute: $0) }
        let queue = DispatchQueue(label: "bench.timer.dispatch")
        let recorder = LatenessRecorder()
        return measure(hogs: hogs, recorder: recorder, seconds: seconds) {
            let timer = DispatchSource.makeTimerSource(queue: queue)
            timer.schedule(
                deadline: .now() + .nanoseconds(Int(intervalNanoseconds)),
                repeating: .nanoseconds(Int(intervalNanoseconds)),
                leeway: .nanoseconds(0)
            )
            timer.setEventHandler { recorder.fired() }
            timer.resume()
            return {
                timer.cancel()
                queue.sync {}
            }
        }
    }

    /// Runs one timer for `seconds` under `hogs`: `start` starts it and returns what stops it (after which no
    /// handler runs); then the chains are stopped.
    static func measure(
        hogs: HogChains,
        recorder: LatenessRecorder,
        seconds: Double,
        start: @escaping @Sendable () -> () -> Void
    ) -> RunSample {
        var sample = runTimed(threads: 1, seconds: seconds) { _, gate in
            gate.arriveAndWait()
            let cpuStart = processCPUNanoseconds()
            recorder.begin(interval: intervalNanoseconds)
            let stop = start()
            while !gate.isStopped { sleepNanoseconds(1_000_000) }
            stop()
            var result = recorder.result()
            result.cpuNanoseconds = processCPUNanoseconds() &- cpuStart
            if result.operations == 0 { result.badOperations = 1 }
            return result
        }
        if !hogs.stop() { sample.abnormalOutcome = "saturating chains did not stop in 30 s" }
        // The harness counts from "go" to the worker's end; firings per second is the timer's rate, not a speed.
        sample.fairness = 1
        return sample
    }
}

/// The time each firing's handler ran, and from them the lateness of each of the timer's deadlines.
///
/// The handler only records when it ran; ``result()`` then takes every deadline of the timer
/// (`first + k × interval`) up to the last run, and its lateness: the first run at or after it, minus the deadline.
/// That is how long the timer's work was overdue, whatever coalesced the firings (our timer thread coalesces
/// deadlines it missed itself, a `DispatchSourceTimer` merges firings its queue has not run yet), so the two
/// compare. `first` is taken just before the timer is created, so each figure may include the creation's few
/// microseconds.
///
/// `@unchecked Sendable`: `times` is written by the handler only, which runs on one serial queue; `begin` runs
/// before the timer starts and `result` after it stopped (its queue drained).
final class LatenessRecorder: @unchecked Sendable {
    private var first: UInt64 = 0
    private var interval: UInt64 = 1
    private var times: [UInt64] = []

    /// The first firing is due one interval from now.
    func begin(interval: UInt64) {
        self.interval = interval
        times.reserveCapacity(4096)
        first = monotonicNanoseconds() &+ interval
    }

    /// Records one firing.
    func fired() { times.append(monotonicNanoseconds()) }

    /// One operation per deadline up to the last run, its latency the deadline's lateness.
    func result() -> WorkerResult {
        var result = WorkerResult()
        guard let last = times.last, last >= first else { return result }
        var run = 0
        var deadline = first
        while deadline <= last {
            while times[run] < deadline { run += 1 }
            _ = result.latency.record(times[run] - deadline)
            result.operations += 1
            deadline &+= interval
        }
        result.endNanoseconds = last
        return result
    }
}

/// Chains of CPU-bound tasks that keep a pool saturated: each task spins, then submits the next, until `stop`.
/// `Sendable` because every field is an `Atomic`.
final class HogChains: Sendable {
    private let stopping = Atomic<Bool>(false)
    private let live = Atomic<Int>(0)

    /// Starts `chains` chains through `submit`.
    func start(chains: Int, submit: @escaping @Sendable (@escaping @Sendable () -> Void) -> Void) {
        for _ in 0..<chains {
            live.add(1, ordering: .relaxed)
            submit { self.step(submit) }
        }
    }

    private func step(_ submit: @escaping @Sendable (@escaping @Sendable () -> Void) -> Void) {
        let until = monotonicNanoseconds() &+ TimerLateness.spinNanoseconds
        while monotonicNanoseconds() < until {}
        if stopping.load(ordering: .relaxed) {
            live.subtract(1, ordering: .releasing)
        } else {
            submit { self.step(submit) }
        }
    }

    /// Stops the chains and waits (at most 30 s) until the last one ended; false on timeout.
    func stop() -> Bool {
        stopping.store(true, ordering: .relaxed)
        let deadline = monotonicNanoseconds() &+ 30_000_000_000
        while live.load(ordering: .acquiring) > 0 {
            if monotonicNanoseconds() > deadline { return false }
            sleepNanoseconds(1_000_000)
        }
        return true
    }
}
