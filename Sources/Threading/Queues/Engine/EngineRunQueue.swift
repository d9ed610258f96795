// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import Synchronization

/// A run queue of a worker pool: one FIFO ``EngineRing`` per ``QoS`` lane, taken in lane order with aging, behind
/// a small lock of its own.
///
/// A pool has two kinds (see ``Engine``): injection shards, which any thread submits to and the pool's workers take
/// from, and one local queue per worker slot, which only the worker in that slot submits to (bounded: when full, the
/// unit goes to an injection shard instead) and which idle workers steal from. No lock is shared by all producers
/// and workers: a producer takes its shard's lock, a worker its local queue's, a thief its victim's.
///
/// The hints (``countHint``, ``laneMaskHint``) are atomics written under the lock and read without it: workers use
/// them to choose where to take from, and a worker about to park reads them (sequentially consistent, against the
/// producers' stores) to be sure no work is left behind. The counters (``submitted``, ``completed``, ``steals``)
/// are monotonic atomics for statistics and for the pool's quiescence check.
///
/// `@unchecked Sendable`: the rings, `skips`, `count`, `mask` and `closed` are guarded by `lock`; the rest is atomic.
final class EngineRunQueue: @unchecked Sendable {
    private let lock = EngineLock()
    private let lanes = EngineRings<EngineUnit>(count: QoS.allCases.count)
    /// Times each lane was passed over since it was last served (aging; guarded by `lock`).
    private var skips = [Int](repeating: 0, count: QoS.allCases.count)
    private var count = 0
    /// Bit `lane` set while that lane's ring is not empty (guarded by `lock`).
    private var mask: UInt32 = 0
    /// Set when the pool stopped: pushes are refused from then on (guarded by `lock`).
    private var closed = false
    /// The most units the queue holds (`Int.max` for an injection shard).
    let capacity: Int

    /// Units queued now (written under the lock, read without it).
    let countHint = Atomic<Int>(0)
    /// Bit `lane` set while that lane has units (written under the lock, read without it).
    let laneMaskHint = Atomic<UInt32>(0)
    /// Units submitted into this queue (moves between queues are not submissions).
    let submitted = Atomic<UInt64>(0)
    /// Units run to completion by the worker in this slot (local queues only).
    let completed = Atomic<UInt64>(0)
    /// Units the worker in this slot took from other workers' local queues (local queues only).
    let steals = Atomic<UInt64>(0)
    /// Whether the worker in this slot is running a unit now (local queues only).
    let executing = Atomic<Bool>(false)

    init(capacity: Int) {
        self.capacity = capacity
    }

    /// What ``push(_:lane:)`` did.
    enum Push {
        case pushed
        /// The queue holds ``capacity`` units: the caller injects the unit elsewhere.
        case full
        /// The pool stopped: the unit was not queued.
        case closed
    }

    /// Queues `unit` on `lane` and counts it as submitted.
    /// - Complexity: O(1) amortised; allocates only when the lane's ring grows past its high-water mark.
    @inline(__always)
    func push(_ unit: EngineUnit, lane: Int) -> Push {
        lock.lock()
        if closed {
            lock.unlock()
            return .closed
        }
        if count >= capacity {
            lock.unlock()
            return .full
        }
        lanes[lane].append(unit)
        count += 1
        mask |= 1 << UInt32(lane)
        laneMaskHint.store(mask, ordering: .relaxed)
        submitted.wrappingAdd(1, ordering: .sequentiallyConsistent)
        countHint.store(count, ordering: .sequentiallyConsistent)
        lock.unlock()
        return .pushed
    }

    /// Removes the next unit: the highest non-empty lane, except that a lane passed over more than
    /// ``QoS/agingLimit`` times is served first.
    @inline(__always)
    func take() -> EngineUnit? {
        lock.lock()
        guard count > 0 else {
            lock.unlock()
            return nil
        }
        var highest = -1
        var aged = -1
        var bits = mask
        while bits != 0 {
            let lane = bits.trailingZeroBitCount
            bits &= bits &- 1
            if highest < 0 {
                highest = lane
            } else {
                skips[lane] += 1
                if aged < 0 && skips[lane] > QoS.agingLimit { aged = lane }
            }
        }
        let lane = aged >= 0 ? aged : highest
        let unit = lanes[lane].popFirst()!
        skips[lane] = 0
        if lanes[lane].isEmpty { mask &= ~(1 << UInt32(lane)) }
        count -= 1
        laneMaskHint.store(mask, ordering: .relaxed)
        countHint.store(count, ordering: .sequentiallyConsistent)
        lock.unlock()
        return unit
    }

    /// Closes the queue (the pool stopped) and moves its units into `dropped`. Returns how many of them were tasks
    /// (drains of serial queues are not: their items are counted by the queue).
    func close(into dropped: inout [EngineUnit]) -> Int {
        lock.lock()
        closed = true
        var tasks = 0
        for lane in lanes.indices {
            while let unit = lanes[lane].popFirst() {
                if case .drain = unit {} else { tasks += 1 }
                dropped.append(unit)
            }
        }
        count = 0
        mask = 0
        laneMaskHint.store(0, ordering: .relaxed)
        countHint.store(0, ordering: .sequentiallyConsistent)
        lock.unlock()
        return tasks
    }

    /// `fork()` prepare handler: holds the lock across the fork (after the pool's lock).
    func forkPrepare() { lock.lock() }

    /// `fork()` handler in the parent.
    func forkParent() { lock.unlock() }

    /// `fork()` handler in the child: forgets the parent's units without releasing them (see `EngineFork`) and
    /// restarts the counters; `submitted` starts at `running` (the unit the forking worker is running, if this is its
    /// slot, which completes in the child).
    func forkChild(running: Bool) {
        for lane in lanes.indices { lanes[lane].abandon() }
        for lane in skips.indices { skips[lane] = 0 }
        count = 0
        mask = 0
        laneMaskHint.store(0, ordering: .relaxed)
        countHint.store(0, ordering: .relaxed)
        submitted.store(running ? 1 : 0, ordering: .relaxed)
        completed.store(0, ordering: .relaxed)
        executing.store(running, ordering: .relaxed)
        lock.unlock()
    }
}
