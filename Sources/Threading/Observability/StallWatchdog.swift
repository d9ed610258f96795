// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import CThreading
import Synchronization

/// The stall watchdog: one thread per process (`threading.watch`, started when the first pool worker starts) that
/// samples every pool's workers (``PoolObservation/sample(now:)``) every tick and reports a unit that runs past its
/// pool's stall threshold, once when the stall is seen and once when it ends (``RuntimeEvent/Kind/stallBegan``,
/// ``RuntimeEvent/Kind/stallEnded``).
///
/// The tick is a fifth of the smallest threshold, between 10 ms and 100 ms; the workers pay no clock read and no
/// lock for it (see ``WorkerActivity``). The reports carry no stack of the stalled thread: capturing another
/// thread's stack in-process means interrupting it with a signal and unwinding in the handler, and neither
/// `backtrace()` (it may allocate and take the loader's lock on first use) nor the Swift runtime's backtracer (made
/// for crashes, out of process) is safe there; the report names the thread id so that `gdb -p`/`lldb -p` can.
enum StallWatchdog {
    /// `ForkRegistry.epoch` of the process the watchdog thread was started in (`.max`: not started). A forked child
    /// (another epoch) starts its own.
    private static let startedEpoch = Atomic<UInt32>(.max)

    static let shortestTickNanoseconds: UInt64 = 10_000_000
    static let longestTickNanoseconds: UInt64 = 100_000_000

    /// Starts the watchdog thread unless this process has one.
    static func ensureStarted() {
        let code = startRuntimeThreadOncePerEpoch(startedEpoch, named: "threading.watch") { _ in
            StallWatchdog.main()
            return nil
        }
        // Refused: the next worker that starts tries again.
        if code != 0 { reportThreadRefusal(of: "watchdog", code: code, threads: nil) }
    }

    private static func main() {
        let epoch = ForkRegistry.epoch.load(ordering: .relaxed)
        // The thread of a parent does not exist in a forked child, so this loop ends only with the process.
        while ForkRegistry.epoch.load(ordering: .relaxed) == epoch {
            _ = cthr_sleep_ns(tick())
            sampleAll()
        }
    }

    /// The sleep between two samples: a fifth of the smallest threshold set, clamped.
    static func tick() -> UInt64 {
        var smallest = UInt64.max
        var index = 0
        while index < RuntimeRegistry.poolEntryCount {
            if let pool = RuntimeRegistry.pool(at: index) {
                let threshold = pool.observation.stallThreshold.load(ordering: .relaxed)
                if threshold != 0 && threshold < smallest { smallest = threshold }
            }
            index += 1
        }
        return Swift.min(longestTickNanoseconds, Swift.max(shortestTickNanoseconds, smallest / 5))
    }

    /// Samples every pool once and reports the stalls that began or ended (outside every lock).
    static func sampleAll() {
        let now = cthr_clock_now_ns()
        var reports: [(pool: PoolCore, change: PoolObservation.StallChange)] = []
        // Allocation-free unless a stall began or ended (the sample's empty array allocates nothing).
        var index = 0
        while index < RuntimeRegistry.poolEntryCount {
            if let pool = RuntimeRegistry.pool(at: index) {
                let changes = pool.observation.sample(now: now)
                if !changes.isEmpty {
                    for change in changes { reports.append((pool, change)) }
                }
            }
            index += 1
        }
        guard !reports.isEmpty else { return }
        let queues = RuntimeRegistry.queues()
        for (pool, change) in reports { report(change, of: pool, queues: queues) }
    }

    /// Reports one stall change to the observer (outside every lock).
    /// The work each reported stall names, by worker, from its beginning to its end (only the watchdog thread
    /// touches it): the queue may be gone by the end.
    nonisolated(unsafe) private static var reportedWork: [ObjectIdentifier: (work: String, queue: String?)] = [:]

    static func report(_ change: PoolObservation.StallChange, of pool: PoolCore, queues: [QueueCore]) {
        let runner = change.runner
        let named =
            change.began
            ? (
                RuntimeRegistry.describeSubject(runner.subject, origin: runner.origin, in: queues),
                queueLabel(runner.subject, queues)
            )
            : reportedWork.removeValue(forKey: change.worker)
                ?? (
                    RuntimeRegistry.describeSubject(runner.subject, origin: runner.origin, in: queues),
                    queueLabel(runner.subject, queues)
                )
        if change.began { reportedWork[change.worker] = named }
        let work = named.0
        let duration = formatDuration(runner.runningNanoseconds)
        let threshold = formatDuration(change.threshold)
        var metadata = [
            "pool": pool.label,
            "thread_id": "\(runner.threadID)",
            "work": work,
            "duration_ms": "\(runner.runningNanoseconds / 1_000_000)",
            "threshold_ms": "\(change.threshold / 1_000_000)",
        ]
        if let queue = named.1 { metadata["queue"] = queue }
        if change.began {
            let message =
                "Threading: stall: worker pool '\(pool.label)' thread \(runner.threadID) has been running \(work) "
                + "for \(duration) (stall threshold \(threshold)); it is blocked or busy in code the pool cannot see "
                + "(RuntimeSnapshot.capture() shows every thread; `gdb -p` or `lldb -p` gives this one's stack)"
            RuntimeObservation.report(.stallBegan, .warning, message, metadata)
        } else {
            let message =
                "Threading: stall ended: worker pool '\(pool.label)' thread \(runner.threadID) finished \(work) "
                + "after about \(duration) (no stack was taken: unwinding another thread in-process is not "
                + "async-signal-safe)"
            RuntimeObservation.report(.stallEnded, .info, message, metadata)
        }
    }

    private static func queueLabel(_ subject: UInt, _ queues: [QueueCore]) -> String? {
        for queue in queues where objectAddress(queue) == subject {
            return queue.label
        }
        return nil
    }
}
