// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import CThreading
import Synchronization

/// A run queue of a worker pool: one FIFO ``RuntimeRing`` per ``QoS`` lane, taken in lane order with aging, behind
/// a small lock of its own.
///
/// A pool has two kinds (see ``PoolCore``): shared shards, which any thread submits to and the pool's workers take
/// from, and one local queue per worker slot, which only the worker in that slot submits to (bounded: when full, the
/// unit goes to a shared shard instead) and which idle workers steal from. No lock is shared by all producers
/// and workers: a producer takes its shard's lock, a worker its local queue's, a thief its victim's.
///
/// The hints (``countHint``, ``laneMaskHint``) are atomics written under the lock and read without it: workers use
/// them to choose where to take from, and a worker about to park reads them (sequentially consistent, against the
/// producers' stores) to be sure no work is left behind. The counters (``submitted``, ``completed``, ``steals``)
/// are monotonic atomics for statistics and for the pool's quiescence check.
///
/// A local queue also has a **next slot** (Tokio's LIFO slot, Go's `runnext`): the unit its worker submitted last,
/// which the worker runs right after its current unit. The slot is not in the lanes, the hints or ``take()``: only
/// its owner and, as a last resort, a thief that found no other work take it (``takeNext()``); a new unit displaces the
/// previous one into the lanes (``pushNext(_:lane:)``), or, when the lanes are full, goes to a shared shard itself.
///
/// While the pool records schedule delays (``PoolObservation/recordsScheduleDelays``), each unit submitted has the
/// time it was submitted (read before the lock is taken) kept beside it (``ScheduleStamps``), also when it moves
/// between queues, and the thread that takes it records the delay (after the lock is released). Otherwise a push
/// pays one relaxed load for it and a take one test of a field of the queue's own, and nothing reads the clock.
///
/// `@unchecked Sendable`: the rings, `stamps`, `skips`, `count`, `stamped`, `mask`, `nextLane` and `closed` are guarded
/// by `lock`; the rest is atomic or constant.
final class PoolRunQueue: @unchecked Sendable {
    private let lock = RuntimeLock.make()
    /// One ring per lane, then one more for the next slot (at most one unit, at index ``nextRing``).
    private let lanes = RuntimeRings<PoolUnit>(count: QoS.allCases.count + 1)
    /// The submission times of the units of ``lanes`` that have one.
    private let stamps = ScheduleStamps(rings: QoS.allCases.count + 1)
    private static let nextRing = QoS.allCases.count
    /// The lane of the unit in the next slot.
    private var nextLane = 0
    /// Times each lane was passed over since it was last served (aging; guarded by `lock`).
    private var skips = [Int](repeating: 0, count: QoS.allCases.count)
    private var count = 0
    /// Units queued that carry a stamp (guarded by `lock`): while 0, pushes and takes leave ``stamps`` alone.
    private var stamped = 0
    /// Bit `lane` set while that lane's ring is not empty (guarded by `lock`).
    private var mask: UInt32 = 0
    /// Set when the pool stopped: pushes are refused from then on (guarded by `lock`).
    private var closed = false
    /// The most units the queue holds (`Int.max` for a shared shard).
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
    /// Whether the next slot holds a unit (written under the lock, read without it).
    let nextHint = Atomic<Bool>(false)

    /// The pool's observability state: whether to stamp units, and the schedule-delay histogram.
    private let observation: PoolObservation
    /// `observation.scheduleDelays`, reached without reference counting (`observation`, held strongly, keeps it): the
    /// histogram is shared by every thread of the pool, and a retain and release per unit taken would write its
    /// reference count, one line for all of them.
    private let scheduleDelays: Unmanaged<LatencyHistogram>

    init(capacity: Int, observation: PoolObservation) {
        self.capacity = capacity
        self.observation = observation
        scheduleDelays = Unmanaged.passUnretained(observation.scheduleDelays)
    }

    /// The submission time to stamp a new unit with: now while the pool records schedule delays, else 0.
    @inline(__always)
    private func stamp() -> UInt64 {
        observation.recordsScheduleDelays.load(ordering: .relaxed) ? cthr_clock_now_ns() : 0
    }

    /// Keeps `stamp` (when not 0) for the unit just appended to `ring` (lock held).
    @inline(__always)
    private func keepStampLocked(_ stamp: UInt64, ring: Int) {
        guard stamp != 0 else { return }
        stamps.pushed(ring: ring, ahead: lanes[ring].count &- 1, stamp: stamp)
        stamped &+= 1
    }

    /// The stamp of the unit just taken from `ring`, or 0 (lock held).
    @inline(__always)
    private func poppedStamp(ring: Int) -> UInt64 {
        guard stamped != 0 else { return 0 }
        let stamp = stamps.popped(ring: ring)
        if stamp != 0 { stamped &-= 1 }
        return stamp
    }

    /// Records the schedule delay of a unit just taken (stamped: the pool recorded delays when it was submitted).
    @inline(__always)
    private func recordTaken(_ submittedAt: UInt64) {
        if submittedAt != 0 {
            scheduleDelays._withUnsafeGuaranteedRef { $0.record(cthr_clock_now_ns() &- submittedAt) }
        }
    }

    /// What ``push(_:lane:)`` did.
    enum Push {
        case pushed
        /// The queue holds ``capacity`` units: the caller schedules the unit elsewhere.
        case full
        /// The pool stopped: the unit was not queued.
        case closed
    }

    /// Queues `unit` on `lane` and counts it as submitted unless `counted` is false (a unit moved from a next slot,
    /// already counted, passes the time it was first submitted as `submittedAt`).
    /// - Complexity: O(1) amortised; allocates only when the lane's ring grows past its high-water mark.
    @inline(__always)
    func push(_ unit: PoolUnit, lane: Int, counted: Bool = true, submittedAt: UInt64? = nil) -> Push {
        let stamp = submittedAt ?? stamp()
        lock.lock()
        if closed {
            lock.unlock()
            return .closed
        }
        if count >= capacity {
            lock.unlock()
            return .full
        }
        if counted { submitted.wrappingAdd(1, ordering: .sequentiallyConsistent) }
        appendLocked(unit, stamp, lane: lane)
        lock.unlock()
        return .pushed
    }

    /// Appends `unit` to `lane` and publishes the hints. Lock held; room checked.
    @inline(__always)
    private func appendLocked(_ unit: PoolUnit, _ stamp: UInt64, lane: Int) {
        lanes[lane].append(unit)
        keepStampLocked(stamp, ring: lane)
        count += 1
        mask |= 1 << UInt32(lane)
        laneMaskHint.store(mask, ordering: .relaxed)
        countHint.store(count, ordering: .sequentiallyConsistent)
    }

    /// Removes the first unit of the non-empty `lane`, with its submission stamp, and publishes the hints: the
    /// counterpart of ``appendLocked(_:_:lane:)``. Lock held.
    @inline(__always)
    private func popFirstLocked(lane: Int) -> (unit: PoolUnit, stamp: UInt64) {
        let unit = lanes[lane].popFirst()!
        let stamp = poppedStamp(ring: lane)
        skips[lane] = 0
        if lanes[lane].isEmpty { mask &= ~(1 << UInt32(lane)) }
        count -= 1
        laneMaskHint.store(mask, ordering: .relaxed)
        countHint.store(count, ordering: .sequentiallyConsistent)
        return (unit, stamp)
    }

    /// What ``pushNext(_:lane:)`` did.
    enum NextPush {
        /// The next slot was empty.
        case placed
        /// The slot's previous unit moved into the lanes: it is pending and stealable now.
        case displaced
        /// The slot holds a unit and the lanes are full, so nothing moved: the caller schedules the new unit
        /// elsewhere (it was not counted here).
        case full
        /// The pool stopped: the unit was not queued.
        case closed
    }

    /// Puts `unit` (counted as submitted) in the next slot; the slot's previous unit moves into the lanes. The owner
    /// only.
    ///
    /// When the slot's unit cannot move (the lanes are full), nothing changes (``NextPush/full``): the new unit is
    /// the caller's to place, and to handle should the pool refuse it, as for any refusal of its own unit. Taking the
    /// slot's unit out instead would leave the caller a unit of another queue that, refused in turn by a stopped pool,
    /// it would have to release there, where it may hold its own queue's lock (releasing a concurrent queue's started
    /// item takes that queue's lock).
    /// - Complexity: O(1) amortised: one lock round trip.
    @inline(__always)
    func pushNext(_ unit: PoolUnit, lane: Int) -> NextPush {
        let stamp = stamp()
        lock.lock()
        if closed {
            lock.unlock()
            return .closed
        }
        let occupied = !lanes[Self.nextRing].isEmpty
        if occupied && count >= capacity {
            lock.unlock()
            return .full
        }
        submitted.wrappingAdd(1, ordering: .sequentiallyConsistent)
        if occupied { moveNextLocked() }
        lanes[Self.nextRing].append(unit)
        keepStampLocked(stamp, ring: Self.nextRing)
        nextLane = lane
        // Sequentially consistent: against the monitor going to sleep (see `PoolCore.trySchedule`).
        nextHint.store(true, ordering: .sequentiallyConsistent)
        lock.unlock()
        return occupied ? .displaced : .placed
    }

    /// What ``spillNext()`` did.
    enum Spill {
        /// The next slot was empty.
        case empty
        /// Its unit moved into the lanes: it is pending and stealable now.
        case moved
        /// Its unit did not fit in the lanes (the queue is full) and was taken out: the caller schedules it
        /// elsewhere, uncounted (it was counted when it was submitted) and with its submission time.
        case overflow(PoolUnit, lane: Int, submittedAt: UInt64)
    }

    /// Empties the next slot into the lanes (the end of its lane): before its worker blocks, or when it ran
    /// ``PoolCore/nextRunLimit`` next units in a row while other work waits.
    func spillNext() -> Spill {
        lock.lock()
        defer { lock.unlock() }
        if lanes[Self.nextRing].isEmpty { return .empty }
        nextHint.store(false, ordering: .relaxed)
        if count < capacity {
            moveNextLocked()
            return .moved
        }
        let unit = lanes[Self.nextRing].popFirst()!
        return .overflow(unit, lane: nextLane, submittedAt: poppedStamp(ring: Self.nextRing))
    }

    /// Moves the next slot's unit to the end of its lane. Lock held; the slot holds a unit and the lanes have room.
    @inline(__always)
    private func moveNextLocked() {
        let previous = lanes[Self.nextRing].popFirst()!
        appendLocked(previous, poppedStamp(ring: Self.nextRing), lane: nextLane)
    }

    /// Takes the unit in the next slot. The owner takes it before anything else; a thief only when it found no
    /// other work.
    @inline(__always)
    func takeNext() -> PoolUnit? {
        lock.lock()
        let unit = lanes[Self.nextRing].popFirst()
        let stamp = unit == nil ? 0 : poppedStamp(ring: Self.nextRing)
        nextHint.store(false, ordering: .relaxed)
        lock.unlock()
        recordTaken(stamp)
        return unit
    }

    /// Removes the units of a worker stuck in one unit, for the shared shards (the monitor's rescue, see
    /// `PoolCore+Rescue.swift`): the next slot's unit first, then up to `limit` units in all, highest lanes first,
    /// each with its lane and submission stamp (0: none).
    func removeStranded(limit: Int) -> [(unit: PoolUnit, lane: Int, submittedAt: UInt64)] {
        var removed: [(unit: PoolUnit, lane: Int, submittedAt: UInt64)] = []
        lock.lock()
        if let unit = lanes[Self.nextRing].popFirst() {
            removed.append((unit, nextLane, poppedStamp(ring: Self.nextRing)))
            nextHint.store(false, ordering: .relaxed)
        }
        while count > 0 && removed.count < limit {
            let lane = mask.trailingZeroBitCount
            let (unit, stamp) = popFirstLocked(lane: lane)
            removed.append((unit, lane, stamp))
        }
        lock.unlock()
        return removed
    }

    /// Removes the next unit: the highest non-empty lane, except that a lane passed over more than
    /// ``QoS/agingLimit`` times is served first.
    @inline(__always)
    func take() -> PoolUnit? {
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
        let (unit, stamp) = popFirstLocked(lane: aged >= 0 ? aged : highest)
        lock.unlock()
        recordTaken(stamp)
        return unit
    }

    /// Adds the units queued in each lane now, the next slot's included, to `counts` (indexed by lane). Takes the
    /// lock for a few loads: the runtime snapshot's exact view of one queue at one moment.
    func addLaneCounts(to counts: inout [Int]) {
        lock.lock()
        for lane in 0..<Self.nextRing { counts[lane] += lanes[lane].count }
        if !lanes[Self.nextRing].isEmpty { counts[nextLane] += 1 }
        lock.unlock()
    }

    /// Closes the queue (the pool stopped) and moves its units, the next slot's included, settled for the drop
    /// (``PoolUnit/settledForDrop()``), into `dropped`. Returns how many of them were tasks (drains of serial
    /// queues are not: their items are counted by the queue; nor is a barrier that a `sync` caller took and ran).
    func close(into dropped: inout [PoolUnit]) -> Int {
        lock.lock()
        closed = true
        var tasks = 0
        for lane in lanes.indices {
            while let popped = lanes[lane].popFirst() {
                guard let unit = popped.settledForDrop() else { continue }
                if unit.isTask { tasks += 1 }
                dropped.append(unit)
            }
        }
        stamps.removeAll()
        stamped = 0
        count = 0
        mask = 0
        laneMaskHint.store(0, ordering: .relaxed)
        countHint.store(0, ordering: .sequentiallyConsistent)
        nextHint.store(false, ordering: .relaxed)
        lock.unlock()
        return tasks
    }

    /// `fork()` prepare handler: holds the lock across the fork (after the pool's lock).
    func forkPrepare() { lock.lock() }

    /// `fork()` handler in the parent.
    func forkParent() { lock.unlock() }

    /// `fork()` handler in the child: forgets the parent's units without releasing them (see `ForkRegistry`) and
    /// restarts the counters; `submitted` starts at `running` (the unit the forking worker is running, if this is its
    /// slot, which completes in the child).
    func forkChild(running: Bool) {
        var lane = 0
        while lane < lanes.count {
            lanes[lane].abandon()
            lane += 1
        }
        stamps.abandonAll()
        stamped = 0
        lane = 0
        while lane < skips.count {
            skips[lane] = 0
            lane += 1
        }
        count = 0
        mask = 0
        laneMaskHint.store(0, ordering: .relaxed)
        countHint.store(0, ordering: .relaxed)
        nextHint.store(false, ordering: .relaxed)
        submitted.store(running ? 1 : 0, ordering: .relaxed)
        completed.store(0, ordering: .relaxed)
        executing.store(running, ordering: .relaxed)
        lock.unlock()
    }
}

/// The submission times of the units of a ``PoolRunQueue`` that have one, kept apart from the units so that a unit moves
/// in and out of its ring as it would without them (no copy of a unit, so no extra retain of its queue). Guarded by
/// the run queue's lock; the run queue calls it only for a stamped unit or while it holds stamped units
/// (``PoolRunQueue``'s `stamped` count), so a queue that stamps nothing touches none of it.
///
/// Per ring (a lane, or the next slot), a stamped unit's entry holds its position: the units taken from the ring since
/// its counter restarted, plus those ahead of it. The counter restarts when a stamped unit enters a ring that holds
/// no other, and counts every take while the ring holds one; the take whose count matches the oldest entry gets that
/// stamp back (units leave a ring in the order they entered it).
struct ScheduleStamps: ~Copyable {
    private struct Entry {
        let position: UInt64
        let stamp: UInt64
    }

    /// Per ring: units taken since its counter restarted.
    private let taken: UnsafeMutablePointer<UInt64>
    private let entries: RuntimeRings<Entry>
    private let ringCount: Int

    init(rings: Int) {
        ringCount = rings
        taken = .allocate(capacity: rings)
        taken.initialize(repeating: 0, count: rings)
        entries = RuntimeRings(count: rings)
        // The rings' mutable accessor used once, in the parent: `abandonAll()`, a fork child handler, then needs no
        // type metadata the runtime has not made yet (`make fork-check`). On an empty ring `abandon()` changes nothing.
        entries[0].abandon()
    }

    deinit {
        taken.deallocate()
    }

    /// A unit stamped `stamp` (not 0) entered `ring` behind `ahead` units.
    func pushed(ring: Int, ahead: Int, stamp: UInt64) {
        if entries[ring].isEmpty { taken[ring] = 0 }
        entries[ring].append(Entry(position: taken[ring] &+ UInt64(ahead), stamp: stamp))
    }

    /// The oldest unit of `ring` left it: its stamp, or 0 when it had none.
    func popped(ring: Int) -> UInt64 {
        guard let first = entries[ring].first else { return 0 }
        let position = taken[ring]
        taken[ring] = position &+ 1
        guard first.position == position else { return 0 }
        return entries[ring].popFirst()!.stamp
    }

    /// Every unit left (the queue closed): no stamp is kept.
    func removeAll() {
        var ring = 0
        while ring < ringCount {
            while entries[ring].popFirst() != nil {}
            ring += 1
        }
    }

    /// A forked child's copy: forgets the parent's stamps without freeing their memory (see `ForkRegistry`). A
    /// `while` loop, as in every child handler: a `for` over a range could ask the runtime for a type there.
    func abandonAll() {
        var ring = 0
        while ring < ringCount {
            entries[ring].abandon()
            ring += 1
        }
    }
}
