// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import CThreading
import Synchronization

/// What one pool worker runs now, published for the stall watchdog and the runtime snapshot (Go's sysmon shape).
///
/// The worker's cost per unit and per queue item is a few relaxed stores on words only it writes (no clock read,
/// no read-modify-write, no lock): ``subject`` names the queue core whose work it runs (0: a plain job), ``progress``
/// counts the units and items it started, ``isRunning`` says whether it runs one now. The watchdog samples them every
/// tick: a worker that runs and whose progress did not change since the sample before has run the same unit or item
/// at least since then. Durations are therefore "at least", to one watchdog tick.
///
/// The sampler's own fields (`sampled*`, `since`, `reported`) are touched only by whoever holds the pool's
/// ``PoolObservation`` lock.
///
/// `@unchecked Sendable`: the published words are atomics; the sampler's fields are guarded by the observation lock.
final class WorkerActivity: @unchecked Sendable {
    /// The queue core whose item or drain the worker runs (its address; 0: a plain job or nothing).
    let subject = Atomic<UInt>(0)
    /// Units and items started by the worker (written by the worker only).
    let progress = Atomic<UInt64>(0)
    /// Whether the worker runs a unit now.
    let isRunning = Atomic<Bool>(false)
    /// The worker's kernel thread id (set once, by the worker, before it is attached).
    let threadID = Atomic<Int32>(0)
    /// `ForkRegistry.epoch` when it was attached: a forked child skips its parent's workers.
    let epoch: UInt32

    // Sampler state, guarded by the observation lock.
    var sampledProgress: UInt64 = .max
    /// When the current unit was first seen running (0: not running at the last sample).
    var since: UInt64 = 0
    /// The stall threshold the current unit's stall report used, or 0 when it was not reported.
    var reportedThreshold: UInt64 = 0
    /// ``subject`` when the stall was reported (the end names the same work).
    var reportedSubject: UInt = 0

    init() { epoch = ForkRegistry.epoch.load(ordering: .relaxed) }

    /// The worker starts a unit (worker thread only).
    @inline(__always)
    func begin(_ unit: PoolUnit) {
        let address: UInt
        switch unit {
        case .drain(let core): address = objectAddress(core)
        case .concurrent(let core, _, _): address = objectAddress(core)
        case .claimedBarrier(let core, _): address = objectAddress(core)
        case .job: address = 0
        }
        subject.store(address, ordering: .relaxed)
        progress.store(progress.load(ordering: .relaxed) &+ 1, ordering: .relaxed)
        isRunning.store(true, ordering: .releasing)
    }

    /// The worker starts an item of `queue` inside its unit (worker thread only).
    @inline(__always)
    func beginItem(of queue: AnyObject) {
        subject.store(objectAddress(queue), ordering: .relaxed)
        progress.store(progress.load(ordering: .relaxed) &+ 1, ordering: .relaxed)
    }

    /// The worker's unit returned (worker thread only).
    @inline(__always)
    func end() {
        isRunning.store(false, ordering: .releasing)
    }
}

extension ThreadContext {
    /// Records, on the calling thread's worker if it is one, that it starts an item of `queue` (a queue core's
    /// `execute`): the watchdog then measures the item, not the whole drain.
    @inline(__always)
    func recordItemStart(of queue: AnyObject) {
        guard let worker = pointee.worker else { return }
        worker._withUnsafeGuaranteedRef { $0.activity.beginItem(of: queue) }
    }
}
