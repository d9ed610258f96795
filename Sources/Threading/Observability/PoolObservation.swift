// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import CThreading
import Synchronization

/// A pool's observability state: its workers' published activity (``WorkerActivity``), the stall threshold and
/// count, and the opt-in histograms of run time and schedule delay.
///
/// Workers attach when their thread starts and detach when it exits (registration at create/destroy, never per
/// unit). The stall watchdog (``StallWatchdog``) samples the attached workers every tick; the runtime snapshot and
/// the saturation report read the samples.
///
/// Lock order: a pool's lock may be held while this lock is taken (a worker detaches in `exitLocked`), never the
/// reverse; nothing that takes another lock of the runtime is called while it is held. The pool's fork handlers hold
/// it across `fork()` (after the pool's and its run queues' locks, see `PoolCore+Fork.swift`).
///
/// `@unchecked Sendable`: `workers` and the workers' sampler fields are guarded by `lock`; the rest is atomic.
final class PoolObservation: @unchecked Sendable {
    /// The stall threshold of a CPU pool until set (``WorkerPool/stallThreshold``).
    static let defaultStallThresholdNanoseconds: UInt64 = 5_000_000_000
    /// The stall threshold of a blocking pool until set: a minute. Its units block by design (file and socket I/O,
    /// foreign locks), so seconds are normal; but a call still blocked after the 60 s that load balancers and
    /// proxies wait for an answer by default (an AWS ALB's idle timeout, nginx's `proxy_read_timeout`) serves no
    /// client any more: it is a hang, and is reported.
    static let defaultBlockingStallThresholdNanoseconds: UInt64 = 60_000_000_000

    let lock = RuntimeLock.make()
    /// The pool's live workers (guarded by `lock`).
    private var workers: [PoolWorker] = []
    /// The stall threshold in nanoseconds, 0 when stall reports are off.
    let stallThreshold: Atomic<UInt64>
    /// Stall episodes reported so far.
    let stalls = Atomic<Int>(0)
    /// Whether workers record their units' run times in ``runTimes``.
    let recordsRunTimes = Atomic<Bool>(false)
    /// The run time of each unit, while ``recordsRunTimes`` is on.
    let runTimes = LatencyHistogram()
    /// Whether run queues stamp units with their submission time and record the delay until a worker takes them.
    let recordsScheduleDelays = Atomic<Bool>(false)
    /// The delay of each unit from its submission to a worker taking it, for units submitted while
    /// ``recordsScheduleDelays`` was on (see ``PoolRunQueue``).
    let scheduleDelays = LatencyHistogram()

    init(blocking: Bool) {
        stallThreshold = Atomic(
            blocking
                ? PoolObservation.defaultBlockingStallThresholdNanoseconds
                : PoolObservation.defaultStallThresholdNanoseconds
        )
    }

    /// A worker's thread started (on that thread): publishes its id and starts watching it.
    func attach(_ worker: PoolWorker) {
        worker.activity.threadID.store(cthr_thread_id(), ordering: .relaxed)
        lock.lock()
        workers.append(worker)
        lock.unlock()
        StallWatchdog.ensureStarted()
    }

    /// A worker's thread exits (the pool lock may be held).
    func detach(_ worker: PoolWorker) {
        lock.lock()
        if let index = workers.firstIndex(where: { $0 === worker }) { workers.remove(at: index) }
        lock.unlock()
    }

    /// One worker's state at a sample: its thread, the queue core it runs work of (0: a plain job), and for how long
    /// it has run the same unit or item (0 when it runs none).
    struct Runner {
        let threadID: Int32
        let subject: UInt
        let runningNanoseconds: UInt64
        /// Where the unit or item came from (``UnitOrigin``).
        var origin = UnitOrigin.none
    }

    /// A stall that began or ended at a sample, to be reported once the lock is released.
    struct StallChange {
        /// The activity of the stalled worker (its identity, to match the end with the beginning).
        let worker: ObjectIdentifier
        let began: Bool
        let runner: Runner
        let threshold: UInt64
    }

    /// Samples every attached worker at `now` (the watchdog, every tick) and returns the stalls that began or ended.
    func sample(now: UInt64) -> [StallChange] {
        let threshold = stallThreshold.load(ordering: .relaxed)
        let epoch = ForkRegistry.epoch.load(ordering: .relaxed)
        var changes: [StallChange] = []
        lock.lock()
        // A forked child: the parent's workers do not exist here.
        if let first = workers.first, first.activity.epoch != epoch { workers.removeAll { $0.activity.epoch != epoch } }
        var index = 0
        while index < workers.count {
            let activity = workers[index].activity
            index += 1
            let running = activity.isRunning.load(ordering: .acquiring)
            let progress = activity.progress.load(ordering: .relaxed)
            if !(running && progress == activity.sampledProgress && activity.since != 0) {
                if activity.reportedThreshold != 0 {
                    let runner = Runner(
                        threadID: activity.threadID.load(ordering: .relaxed),
                        subject: activity.reportedSubject,
                        runningNanoseconds: now &- activity.since,
                        origin: activity.reportedOrigin
                    )
                    changes.append(
                        StallChange(
                            worker: ObjectIdentifier(activity),
                            began: false,
                            runner: runner,
                            threshold: activity.reportedThreshold
                        )
                    )
                    activity.reportedThreshold = 0
                }
                activity.sampledProgress = progress
                activity.since = running ? now : 0
                continue
            }
            let elapsed = now &- activity.since
            if threshold != 0 && activity.reportedThreshold == 0 && elapsed >= threshold {
                activity.reportedThreshold = threshold
                activity.reportedSubject = activity.subject.load(ordering: .relaxed)
                activity.reportedOrigin = activity.origin
                stalls.add(1, ordering: .relaxed)
                let runner = Runner(
                    threadID: activity.threadID.load(ordering: .relaxed),
                    subject: activity.reportedSubject,
                    runningNanoseconds: elapsed,
                    origin: activity.reportedOrigin
                )
                changes.append(
                    StallChange(worker: ObjectIdentifier(activity), began: true, runner: runner, threshold: threshold)
                )
            }
        }
        lock.unlock()
        return changes
    }

    /// How many of the pool's workers are inside a unit while their thread sleeps in the kernel now (`S` or `D` in
    /// `/proc/self/task/<tid>/stat`): blocked in a call (a pool wait, or one the pool cannot see, such as `usleep` or a
    /// synchronous driver). A runnable thread the system has not scheduled is not counted, so a loaded machine does
    /// not read as blocked work. One `/proc` read per running worker, outside every lock.
    func workersSleepingInUnits() -> Int {
        let epoch = ForkRegistry.epoch.load(ordering: .relaxed)
        var threads: [Int32] = []
        lock.lock()
        for worker in workers {
            let activity = worker.activity
            guard activity.epoch == epoch, activity.isRunning.load(ordering: .acquiring) else { continue }
            threads.append(activity.threadID.load(ordering: .relaxed))
        }
        lock.unlock()
        var sleeping = 0
        for thread in threads where thread != 0 {
            var asleep = false
            if cthr_thread_is_sleeping(thread, &asleep) == 0 && asleep { sleeping += 1 }
        }
        return sleeping
    }

    /// The local run queues, holding units, of the workers that have run the same unit since the previous call (the
    /// pool monitor's tick, 10 ms): those units wait behind a worker that may be stuck in a call the pool cannot
    /// see, and other workers take them only when they have nothing else (see `PoolCore+Rescue.swift`).
    func localQueuesOfStuckWorkers() -> [PoolRunQueue] {
        let epoch = ForkRegistry.epoch.load(ordering: .relaxed)
        var stuck: [PoolRunQueue] = []
        lock.lock()
        for worker in workers {
            let activity = worker.activity
            guard activity.epoch == epoch else { continue }
            let progress = activity.progress.load(ordering: .relaxed)
            if progress == activity.monitorProgress && activity.isRunning.load(ordering: .acquiring),
                let local = worker.local,
                local.countHint.load(ordering: .relaxed) > 0 || local.nextHint.load(ordering: .relaxed)
            {
                stuck.append(local)
            }
            activity.monitorProgress = progress
        }
        lock.unlock()
        return stuck
    }

    /// The workers running a unit at the last sample, longest-running first (a racy but safe view: to one tick).
    func runners(now: UInt64) -> [Runner] {
        let epoch = ForkRegistry.epoch.load(ordering: .relaxed)
        lock.lock()
        var result: [Runner] = []
        for worker in workers {
            let activity = worker.activity
            // A forked child's copy of its parent's workers (not swept yet) runs nothing here.
            guard activity.epoch == epoch, activity.isRunning.load(ordering: .acquiring) else { continue }
            let progress = activity.progress.load(ordering: .relaxed)
            let same = progress == activity.sampledProgress && activity.since != 0
            result.append(
                Runner(
                    threadID: activity.threadID.load(ordering: .relaxed),
                    subject: activity.subject.load(ordering: .relaxed),
                    runningNanoseconds: same ? now &- activity.since : 0,
                    origin: activity.origin
                )
            )
        }
        lock.unlock()
        result.sort { $0.runningNanoseconds > $1.runningNanoseconds }
        return result
    }
}
