// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import CThreading
import Synchronization

/// A concurrent queue's pool: a reader count and a barrier bit in the state word, plus a FIFO of pending items.
///
/// A non-barrier `sync` on a queue with nothing pending is one CAS adding a reader (like a reader-writer lock); a
/// barrier `sync` on an idle queue is one CAS setting the barrier bit. Anything else joins the FIFO: `pump()`
/// starts items from its head while they are compatible with what runs (readers up to the width, or one barrier
/// alone), so a barrier waits for earlier work, runs alone, and later work waits for it.
///
/// Striped readers. On a queue without a width limit or a target, a non-barrier `sync` does not touch the shared
/// word at all when it can: it adds one to a per-thread *stripe* counter (one cache line each, chosen by thread id)
/// and then checks the word; readers on different cores then write different cache lines, so reads scale instead of
/// bouncing one line between cores. The pairing with barriers is Dekker's: a reader increments its stripe and then
/// loads the word; a barrier sets `owned` (and `draining`) and then loads every stripe, all sequentially consistent.
/// So either the reader sees the barrier and backs off (to the FIFO), or the barrier sees the reader and waits:
/// it stays `owned` + `draining` with its item parked in `drainingItem`, and the reader that leaves last (it
/// decrements, then sees `draining`) pumps the queue, which starts the barrier under the queue lock.
final class ConcurrentCore: QueueCore, @unchecked Sendable {
    // The shared state (label, target, pool, word, lock, items, suspension, specifics) is ``QueueCore``'s.

    /// The maximum number of non-barrier items running at once.
    let width: UInt32
    /// The last async barrier started on the pool, which a `sync` caller may claim and run itself. Guarded by `lock`.
    private let pendingStorage = UnsafeMutablePointer<ItemClaim?>.allocate(capacity: 1)
    private var pendingBarrier: ItemClaim? {
        unsafeAddress { UnsafePointer(pendingStorage) }
        unsafeMutableAddress { pendingStorage }
    }
    /// A barrier that owns the queue but waits for striped readers to leave. Guarded by `lock`.
    private let drainingStorage = UnsafeMutablePointer<QueueItem?>.allocate(capacity: 1)
    private var drainingItem: QueueItem? {
        unsafeAddress { UnsafePointer(drainingStorage) }
        unsafeMutableAddress { drainingStorage }
    }
    /// Whether the shutdown of the stopped pool counted this queue's tasks (``abandonAtStop()``): items queued
    /// later never start (``enqueue(_:)`` releases them). Guarded by `lock`, which makes its accesses exclusive.
    @exclusivity(unchecked) private var countedAtStop = false
    /// The stripe counters (one per 64-byte line), or nil for a queue whose readers count in the word only.
    let stripes: UnsafeMutablePointer<Atomic<UInt32>>?
    /// Number of stripes minus one (a power of two minus one).
    let stripeMask: Int

    /// `UInt32`s per stripe: one 64-byte cache line each.
    static let stripeStride = 16

    init(label: String, qos: QoS, target: QueueCore?, width: Int, poolCore: PoolCore) {
        self.width = UInt32(clamping: Swift.min(width, 1 << 23))
        pendingStorage.initialize(to: nil)
        drainingStorage.initialize(to: nil)
        if width >= 1 << 23 && target == nil {
            // Two stripes per core (thread ids spread over them), 4 to 64: 256 bytes per queue on two cores.
            var count = 4
            while count < 2 * Int(cthr_cpu_count()) && count < 64 { count <<= 1 }
            let raw = UnsafeMutableRawPointer.allocate(
                byteCount: count * Self.stripeStride * MemoryLayout<UInt32>.stride,
                alignment: 64
            )
            let slots = raw.bindMemory(to: Atomic<UInt32>.self, capacity: count * Self.stripeStride)
            for index in 0..<count { (slots + index * Self.stripeStride).initialize(to: Atomic(0)) }
            stripes = slots
            stripeMask = count - 1
        } else {
            stripes = nil
            stripeMask = 0
        }
        super.init(label: label, qos: qos, target: target, poolCore: poolCore, needsMainThread: false, isSerial: false)
    }

    deinit {
        pendingStorage.deinitialize(count: 1)
        pendingStorage.deallocate()
        drainingStorage.deinitialize(count: 1)
        drainingStorage.deallocate()
        if let stripes {
            for index in 0...stripeMask { (stripes + index * Self.stripeStride).deinitialize(count: 1) }
            UnsafeMutableRawPointer(stripes).deallocate()
        }
    }

    /// A forked child: the parent's started barrier and the barrier waiting for readers are abandoned (never run,
    /// never released), and the readers of the parent's threads are gone, unless the forking thread itself reads
    /// (then the stripes stay as they were: see the fork rules in the Misuse article).
    override func resetForChild(heldByForkingThread held: Bool) {
        pendingStorage.initialize(to: nil)
        drainingStorage.initialize(to: nil)
        if let stripes, !held {
            var index = 0
            while index <= stripeMask {
                (stripes + index * Self.stripeStride).pointee.store(0, ordering: .relaxed)
                index += 1
            }
        }
    }

    // MARK: Fast paths

    /// Adds a reader if nothing is pending, suspended or running as a barrier and the width allows. `admitting`: the
    /// compare-exchange is sequentially consistent (an async submission's pairing with the shutdown, see
    /// ``tryEnqueue(_:)``; the same instruction on x86-64).
    @inline(__always)
    func tryReadFast(admitting: Bool = false) -> Bool {
        var state = word.loadRelaxed()
        while state & (QueueState.owned | QueueState.hasItems | QueueState.suspended) == 0
            && state >> 8 < width
        {
            let result =
                admitting
                ? word.pointer.pointee.weakCompareExchange(
                    expected: state,
                    desired: state &+ QueueState.reader,
                    successOrdering: .sequentiallyConsistent,
                    failureOrdering: .relaxed
                )
                : word.weakCompareExchange(state, state &+ QueueState.reader)
            if result.exchanged { return true }
            state = result.original
        }
        return false
    }

    /// Enters as a striped reader if nothing pending, suspended or running as a barrier; returns the stripe to
    /// pass to ``leaveStriped(_:)``, or nil (the caller takes the other paths).
    @inline(__always)
    func enterStriped() -> UnsafeMutablePointer<Atomic<UInt32>>? {
        guard let stripes else { return nil }
        let slot = stripes + (Int(cthr_lock_self()) & stripeMask) &* Self.stripeStride
        slot.pointee.add(1, ordering: .sequentiallyConsistent)
        let state = word.pointer.pointee.load(ordering: .sequentiallyConsistent)
        if state & (QueueState.owned | QueueState.hasItems | QueueState.suspended) == 0 { return slot }
        leaveStriped(slot)
        return nil
    }

    /// Leaves a striped read: the last reader out of a draining queue starts the waiting barrier.
    @inline(__always)
    func leaveStriped(_ slot: UnsafeMutablePointer<Atomic<UInt32>>) {
        slot.pointee.subtract(1, ordering: .sequentiallyConsistent)
        if word.pointer.pointee.load(ordering: .sequentiallyConsistent) & QueueState.draining != 0 { pump() }
    }

    /// Whether any striped reader is inside (sequentially consistent loads: the barrier's half of the pairing).
    private func stripesBusy() -> Bool {
        guard let stripes else { return false }
        for index in 0...stripeMask
        where (stripes + index * Self.stripeStride).pointee.load(ordering: .sequentiallyConsistent) != 0 {
            return true
        }
        return false
    }

    @inline(__always)
    func tryBarrierFast() -> Bool {
        if stripes != nil && stripesBusy() { return false }
        // Sequentially consistent: the barrier's half of the Dekker pairing with `enterStriped` (set `owned`, then
        // load the stripes); acquire-release would not order the store before the loads in the language's model.
        let taken = word.pointer.pointee.compareExchange(
            expected: 0,
            desired: QueueState.owned,
            ordering: .sequentiallyConsistent
        )
        guard taken.exchanged else { return false }
        if stripes != nil && stripesBusy() {
            // A reader came in between the checks: give the queue back and take the slow path.
            releaseBarrier()
            return false
        }
        return true
    }

    @inline(__always)
    func releaseRead() {
        let old = word.subtract(QueueState.reader)
        if old & QueueState.hasItems != 0 { pump() }
    }

    @inline(__always)
    func releaseBarrier() {
        let old = word.bitAnd(~QueueState.owned)
        if old & QueueState.hasItems != 0 { pump() }
    }

    // MARK: Sync

    override func acquireSync(_ context: ThreadContext, barrier: Bool, requestedOn: QueueCore) {
        if barrier ? tryBarrierFast() : tryReadFast() { return }
        if checkDeadlock(context, requested: requestedOn, barrier: barrier) != nil {
            // A reader nested in a reader of the same queue: join at once (waiting behind a pending barrier
            // would wait for ourselves).
            word.add(QueueState.reader)
            return
        }
        lock.lock()
        while let claim = pendingBarrier {
            // A started async barrier still sits unrun on the pool: we would wait for it, so run it here.
            pendingBarrier = nil
            lock.unlock()
            if let item = claim.claim() { runStarted(item, barrier: true, context) }
            if barrier ? tryBarrierFast() : tryReadFast() { return }
            lock.lock()
        }
        // Only now: a barrier run above may have waited in a nested `sync`, which uses the same parker.
        context.prepareWait()
        items.append(.syncWaiter(context, barrier: barrier))
        word.bitOr(QueueState.hasItems)
        pumpLocked()
        lock.unlock()
        context.waitGranted(on: self)
    }

    override func releaseSync(barrier: Bool) {
        if barrier { releaseBarrier() } else { releaseRead() }
    }

    // MARK: Async

    override func enqueue(_ item: QueueItem) {
        if !item.isBarrier && tryReadFast() {
            start(item, barrier: false, locked: false)
            return
        }
        lock.lock()
        if countedAtStop && !item.isSyncWaiter {
            // A child's started item or drain after the shutdown counted this queue: it can never run.
            lock.unlock()
            if item.isTask { poolCore.droppedAfterStop.add(1, ordering: .relaxed) }
            QueueCore.releaseUnrun(item)
            return
        }
        appendLocked(item)
        lock.unlock()
    }

    /// Queues `item` behind the pending ones and starts what may start. Queue lock held.
    @inline(__always)
    private func appendLocked(_ item: QueueItem) {
        items.append(item)
        word.bitOr(QueueState.hasItems)
        pumpLocked()
    }

    override func tryEnqueue(_ item: QueueItem) -> Bool {
        if !item.isBarrier && tryReadFast(admitting: true) {
            // Dekker's pairing with the shutdown: the reader is added (a locked read-modify-write) before the pool's
            // life is read, and the shutdown moves to `draining` before it reads the readers (`pendingTaskCount`).
            guard poolCore.isAccepting(SchedulerThread.current) else {  // the thread's context only when not running
                releaseRead()
                return false
            }
            if target != nil {
                start(item, barrier: false, locked: false)  // into the target's queue (counted there)
                return true
            }
            guard poolCore.trySchedule(.concurrent(self, item, barrier: false), lane: lane) else {
                // Only after a timed shutdown stopped the pool: the unit was not queued.
                releaseRead()
                return false
            }
            return true
        }
        lock.lock()
        guard poolCore.isAccepting(SchedulerThread.current) else {
            lock.unlock()
            return false
        }
        appendLocked(item)
        lock.unlock()
        return true
    }

    /// Queued items and running readers: a reader may be an accepted task on its way to the pool (see
    /// ``tryEnqueue(_:)``), so the shutdown waits while any runs (see ``PoolMember``).
    override var pendingTaskCount: Int {
        lock.withLock {
            queuedTaskCountLocked + Int(word.pointer.pointee.load(ordering: .sequentiallyConsistent) >> 8)
                + (drainingItem?.isTask == true ? 1 : 0)
        }
    }

    /// See ``PoolMember/abandonAtStop()``: the queued tasks and a barrier waiting for striped readers to leave,
    /// released unrun; then the `sync` callers waiting behind them are granted as soon as the slots that the dropped
    /// units held come back (``startedItemDropped(_:barrier:)``), instead of waiting for ever.
    override func abandonAtStop() -> Int {
        var removed = RuntimeRing<QueueItem>()  // no new generic type: a forked child may shut a pool down
        lock.lock()
        var tasks = removeQueuedWorkLocked(into: &removed)
        if let parked = drainingItem, parked.isTask {
            // Popped as the queue's head: it owns the queue, and waits only for the striped readers.
            drainingItem = nil
            word.bitAnd(~(QueueState.owned | QueueState.draining))
            removed.append(parked)
            tasks += 1
        }
        countedAtStop = true
        pumpLocked()
        lock.unlock()
        QueueCore.releaseUnrun(&removed)
        return tasks
    }

    /// A started item of this queue will never run: the stopped pool refused or dropped its unit
    /// (``PoolCore/unitDropped(_:)``), or the target queue released it unrun (``QueueCore/releaseUnrun(_:)-(QueueItem)``).
    /// Its reader slot or barrier comes back, so that the `sync` callers and barriers behind it are not held for
    /// ever. Before the shutdown counted the queue, nothing queued starts (the stopped pool refuses it back into the
    /// queue, see ``start(_:barrier:locked:)``) and the count takes it; afterwards only `sync` callers are queued.
    func startedItemDropped(_ item: QueueItem, barrier: Bool) {
        QueueCore.releaseUnrun(item)
        let old = barrier ? word.bitAnd(~QueueState.owned) : word.subtract(QueueState.reader)
        // As `releaseRead`/`releaseBarrier`, unless this thread is in this queue's own pump, whose item its target
        // refused at once (the pool stopped right after the pump looked): that pump reads the word again and goes on.
        if old & QueueState.hasItems != 0 && !lock.isHeldByCurrentThread { pump() }
    }

    override func didResume() {
        pump()
    }

    func pump() {
        lock.lock()
        pumpLocked()
        lock.unlock()
    }

    /// Starts items from the head while they are compatible with what runs. Queue lock held.
    private func pumpLocked() {
        if word.load() & QueueState.draining != 0 && !startDrainedBarrier() { return }
        while let front = items.first {
            let state = word.load()
            if state & QueueState.suspended != 0 { return }
            let barrier = front.isBarrier
            let desired: UInt32
            if barrier {
                if state & QueueState.owned != 0 || state >> 8 != 0 { return }
                desired = state | QueueState.owned
            } else {
                if state & QueueState.owned != 0 || state >> 8 >= width { return }
                desired = state &+ QueueState.reader
            }
            // A child queue of a stopped pool starts nothing but `sync` callers (its target would release the item
            // unrun and give the slot back into this pump, once per item): the shutdown's count takes the rest.
            if target != nil && !front.isSyncWaiter && poolCore.isStopped { return }
            guard word.compareExchange(state, desired).exchanged else { continue }
            _ = items.popFirst()
            if items.isEmpty { word.bitAnd(~QueueState.hasItems) }
            if barrier && stripes != nil {
                // Striped readers may be inside: park the barrier until the last one leaves.
                drainingItem = front
                word.pointer.pointee.bitwiseOr(QueueState.draining, ordering: .sequentiallyConsistent)
                _ = startDrainedBarrier()
                return
            }
            if !start(front, barrier: barrier) { return }
        }
    }

    /// Starts the draining barrier if no striped reader is left; returns whether it did. Queue lock held, `draining`
    /// set. (Holding the lock makes this the only place that clears `draining`.)
    private func startDrainedBarrier() -> Bool {
        if stripesBusy() { return false }
        word.bitAnd(~QueueState.draining)
        guard let item = drainingItem else { return true }
        drainingItem = nil
        return start(item, barrier: true)
    }

    /// Runs a started item: grants a sync waiter, or hands the item to a waiting thread, the pool or the target
    /// queue. `locked`: the queue lock is held (needed to look for waiters).
    ///
    /// Returns false when the stopped pool refused the item. Under the queue's lock (the shutdown has not counted the
    /// queue yet: after the count no task is queued) it goes back to the head of the queue with its slot given back,
    /// for the count (``abandonAtStop()``); without the lock it is counted as dropped and gives its slot back as a
    /// dropped unit does (``startedItemDropped(_:barrier:)``).
    @discardableResult
    private func start(_ item: QueueItem, barrier: Bool, locked: Bool = true) -> Bool {
        let unit: PoolUnit
        if case .syncWaiter(let waiter, _) = item {
            grantWaiter(waiter)
            return true
        } else if let target {
            target.enqueue(.childTask(self, item, barrier: barrier))
            return true
        } else if locked && barrier && !poolCore.isStopped && offerHelp(item, barrier: barrier) {
            // (Not once the pool stopped: its tasks start nowhere, they are counted.)
            return true
        } else if barrier {
            let claim = ItemClaim(item)
            pendingBarrier = claim
            unit = .claimedBarrier(self, claim)
        } else {
            unit = .concurrent(self, item, barrier: barrier)
        }
        if poolCore.trySchedule(unit, lane: lane) { return true }
        guard locked else {
            poolCore.countDropped(unit)
            return false
        }
        if barrier {
            pendingBarrier = nil
            word.bitAnd(~QueueState.owned)
        } else {
            word.subtract(QueueState.reader)
        }
        items.pushFront(item)
        word.bitOr(QueueState.hasItems)
        return false
    }

    /// Hands a started async item to a thread waiting in `sync` behind it (it must wait for the item anyway), to
    /// save the pool hop; false when no waiter can take it. Queue lock held (only called from `pumpLocked`).
    ///
    /// Only barriers are offered: while one runs the queue is owned, so the waiter cannot be granted meanwhile. A
    /// non-barrier item could run beside the waiter's own grant, and a nested `sync` inside it (which reuses the
    /// waiter's parker) could then take that grant for its own and lose it.
    ///
    /// A barrier offered this way is also left claimable (`pendingBarrier`): the offered waiter may be descheduled,
    /// and the next thread that enters `sync` (it would wait for the barrier too) then runs it at once instead of
    /// waiting for that waiter to get a CPU. Whoever claims first runs it; the other finds nothing to do.
    private func offerHelp(_ item: QueueItem, barrier: Bool) -> Bool {
        var offset = 0
        let limit = Swift.min(items.count, 8)
        var claim: ItemClaim?
        while offset < limit {
            if case .syncWaiter(let waiter, _) = items[offset] {
                let offered = claim ?? ItemClaim(item)
                claim = offered
                if offerHelpToWaiter(waiter, (self, offered, barrier)) {
                    if barrier { pendingBarrier = offered }
                    return true
                }
            }
            offset += 1
        }
        return false
    }

    /// Runs an item whose slot `start` took, then gives the slot back.
    ///
    /// After a barrier, the async barriers queued right behind it run here too, without giving the queue up in
    /// between (see ``takeChainedBarrier()``).
    func runStarted(_ item: QueueItem, barrier: Bool, _ context: ThreadContext) {
        context.push(self, exclusive: barrier, entry: true)
        execute(item, context)
        if barrier {
            var chained = 1
            while chained < Self.barrierChainLimit, let next = takeChainedBarrier() {
                execute(next, context)
                chained += 1
            }
        }
        context.pop()
        if barrier { releaseBarrier() } else { releaseRead() }
    }

    /// The most barriers one thread runs back to back before it gives the queue up (so the pool and waiting
    /// threads get their turn under a steady stream of barriers).
    static let barrierChainLimit = 16

    /// The async barrier at the head of the queue, removed, for the thread that just ran a barrier and still owns
    /// the queue; nil if the head is anything else (a task, a `sync` waiter), the queue is suspended or has a
    /// target. The thread is a pool worker, or a `sync` caller that would wait for these barriers anyway (they are
    /// ahead of it: it is not queued yet, or queued behind them). FIFO order is kept, and the next barrier runs
    /// alone because the queue stays `owned` throughout (striped readers back off while it is set).
    private func takeChainedBarrier() -> QueueItem? {
        let state = word.load()
        if state & QueueState.hasItems == 0 || state & QueueState.suspended != 0 || target != nil { return nil }
        lock.lock()
        defer { lock.unlock() }
        guard word.load() & QueueState.suspended == 0, let front = items.first, case .barrier = front else {
            return nil
        }
        _ = items.popFirst()
        if items.isEmpty { word.bitAnd(~QueueState.hasItems) }
        return front
    }
}
