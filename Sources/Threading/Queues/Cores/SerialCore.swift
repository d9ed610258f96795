// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import CThreading
import Synchronization

/// A serial queue's pool: a drain lock in the state word plus a FIFO of pending items.
///
/// State word bits (``QueueState``): `owned` is the drain lock. Whoever holds it may run the queue's work: a pool
/// worker draining items, or a thread inside `sync` running its closure inline. An idle queue's `sync` is one CAS
/// (0 → owned), the closure, and one CAS back (owned → 0): no pool hop, no allocation. When the CAS fails:
/// - with items pending or the queue suspended, the caller joins the FIFO as a sync waiter and sleeps on its own
///   futex until the drain reaches it and hands it the drain lock (FIFO with respect to earlier `async` work);
/// - otherwise another `sync` holds it: the caller sleeps on the state word like a mutex waiter (`parked` bit),
///   and the releasing thread wakes one waiter (Drepper's three-state futex mutex), so contended `sync` behaves
///   like a mutex instead of a chain of pool hops.
/// Releasing with items pending hands the lock on: to a sync waiter at the head directly, else to a drain on the
/// pool (or on the target queue, or the main thread for the main queue).
final class SerialCore: QueueCore, @unchecked Sendable {
    // The shared state (label, target, pool, word, lock, items, suspension, specifics) is ``QueueCore``'s. The
    // state word's `owned` bit is the drain lock, but it is not a `cthr_lock_t`: the same compare-exchange that
    // takes or releases `owned` also reads and changes the pending-items, suspend and `parked` bits, so an idle
    // `sync` is one CAS in and one out and a release sees atomically whether to hand the queue on. A separate lock
    // word would need a second atomic per transition and a window between the two.

    /// Whether this is the main queue's core (its drains run only on the main thread).
    let isMain: Bool
    /// ``SerialExecutorState`` bits: whether the queue was handed out as an actor's executor, and whether its
    /// ``SerialQueue`` is gone since (see `SerialQueue+SerialExecutor.swift`).
    let executorState = Atomic<UInt8>(0)
    /// 1 while a drain sits on the pool (or, for a queue with a target, in the target) unstarted: the worker that
    /// runs it, or a `sync` waiter that would wait for it, claims it by exchanging 1 for 0 — exactly one of them
    /// drains. Once the pool stopped, the shutdown's count (``abandonAtStop()``) or the release of the refused drain
    /// (``drainRefused()``) claims it instead and gives the drain lock back.
    let drainClaim = FutexWord.allocate()
    /// The drainer's batch ring; only touched by the drain-lock owner (addressor: no exclusivity checks).
    private let spareStorage = UnsafeMutablePointer<RuntimeRing<QueueItem>>.allocate(capacity: 1)
    private var spare: RuntimeRing<QueueItem> {
        unsafeAddress { UnsafePointer(spareStorage) }
        unsafeMutableAddress { spareStorage }
    }
    /// Items of the drainer's batch (`spare`) not started yet. Set under `lock` when a batch is taken, decremented by
    /// the drainer before each item; the shutdown swaps it for ``abandonedBatch`` under `lock` once the pool stopped
    /// (``abandonAtStop()``), so each item of the batch is either started (the decrement came first) or counted as
    /// not run (the swap came first) and never started afterwards.
    ///
    /// On a cache line of its own: the drainer writes it per item, and the fields of this object that producers read
    /// on every `async` must not share its line.
    private let unstarted: UnsafeMutablePointer<Atomic<Int>> = {
        let size = MemoryLayout<Atomic<Int>>.size
        let raw = allocateLockState(byteCount: size, alignment: MemoryLayout<Atomic<Int>>.alignment)
        let pointer = raw.bindMemory(to: Atomic<Int>.self, capacity: 1)
        pointer.initialize(to: Atomic(0))
        return pointer
    }()
    /// What ``unstarted`` holds once a stopped pool's shutdown counted the batch (any decrement stays negative).
    private static let abandonedBatch = Int.min / 2
    /// Items a drain runs before yielding the worker to other queues that wait for one.
    static let batch = 64
    /// Rounds a drain lingers for more items before it releases the queue.
    static let lingerRounds = 16
    /// The most items one drain takes from the queue per lock round trip.
    static let maxBatch = 256

    init(label: String, qos: QoS, target: QueueCore?, main isMain: Bool = false, poolCore: PoolCore = .shared) {
        self.isMain = isMain
        spareStorage.initialize(to: RuntimeRing())
        super.init(
            label: label,
            qos: qos,
            target: target,
            poolCore: poolCore,
            needsMainThread: isMain,
            isSerial: true
        )
    }

    deinit {
        unstarted.deinitialize(count: 1)
        UnsafeMutableRawPointer(unstarted).deallocate()
        spareStorage.pointee.release()
        spareStorage.deinitialize(count: 1)
        spareStorage.deallocate()
    }

    /// A forked child: no drain of the parent's is pending, and the batch a drainer had taken is the parent's (the
    /// forking thread's own drain, if it was draining, finds it empty and stops after its current item).
    override func resetForChild(heldByForkingThread held: Bool) {
        drainClaim.storeRelaxed(0)
        spare.abandon()
    }

    // MARK: Fast paths

    /// `sync` on the calling thread: the fast path (take the idle queue's drain lock and run `work` here) when
    /// `eligible` (a queue without target; for the main queue, the main thread), else the slow path.
    @inline(__always)
    func syncFast(_ context: ThreadContext, eligible: Bool, _ work: () -> Void) {
        if eligible && tryAcquireFast() {
            context.push(self, exclusive: true, entry: true)
            defer {
                context.pop()
                releaseFast()
            }
            work()
            return
        }
        syncSlow(context, barrier: false, work)
    }

    @inline(__always)
    func tryAcquireFast() -> Bool {
        word.compareExchange(0, QueueState.owned).exchanged
    }

    @inline(__always)
    func releaseFast() {
        if !word.compareExchange(QueueState.owned, 0).exchanged { releaseSlow() }
    }

    // MARK: Acquire

    override func acquireSync(_ context: ThreadContext, barrier: Bool, requestedOn: QueueCore) {
        if tryAcquireFast() { return }
        _ = checkDeadlock(context, requested: requestedOn, barrier: barrier)
        var parkedBefore = false
        var spins = 0
        while true {
            let state = word.load()
            if state & (QueueState.owned | QueueState.hasItems | QueueState.suspended) == 0 {
                let desired = state | QueueState.owned | (parkedBefore ? QueueState.parked : 0)
                if word.compareExchange(state, desired).exchanged { return }
                continue
            }
            if state & (QueueState.hasItems | QueueState.suspended) != 0
                || (needsMainThread && context.pointee.isMainThread)
            {
                acquireInOrder(context, parkedBefore: parkedBefore)
                return
            }
            if spins < 100 {
                spins += 1
                continue
            }
            if state & QueueState.parked == 0 {
                if !word.compareExchange(state, state | QueueState.parked).exchanged { continue }
            }
            parkedBefore = true
            BlockingHook.willBlock()
            _ = WaitRecording.recording(.sync, on: self) { word.wait(expected: state | QueueState.parked) }
            BlockingHook.didUnblock()
        }
    }

    /// Joins the FIFO as a sync waiter and sleeps until granted the drain lock.
    private func acquireInOrder(_ context: ThreadContext, parkedBefore: Bool) {
        context.prepareWait()
        lock.lock()
        items.append(.syncWaiter(context, barrier: false))
        var takeOver = false
        while true {
            let state = word.load()
            var desired = state | QueueState.hasItems | (parkedBefore ? QueueState.parked : 0)
            takeOver = state & (QueueState.owned | QueueState.suspended) == 0
            if takeOver { desired |= QueueState.owned }
            if state == desired || word.compareExchange(state, desired).exchanged { break }
        }
        if takeOver && items.count == 1 {
            // Only our own waiter is pending and the queue was free: take it ourselves.
            _ = items.popFirst()
            word.bitAnd(~QueueState.hasItems)
            lock.unlock()
            return
        }
        lock.unlock()
        if !isMain && target == nil && (takeOver || drainClaim.compareExchange(1, 0).exchanged) {
            // We hold the drain lock (taken now, or a drain that sat unstarted on the pool, claimed from it): run
            // the items queued ahead of us on this thread — we would wait for exactly them — until our own turn.
            drain(context, untilGranted: true)
            if context.pointee.parker.load() == .granted { return }
        } else if takeOver {
            scheduleDrain()
        }
        if needsMainThread && context.pointee.isMainThread {
            // Only the main thread drains the main queue: run the earlier main-queue work here until our turn.
            while context.pointee.parker.load() != .granted {
                MainLoop.shared.drainOnce(context, wait: true, deadline: .max)
            }
            return
        }
        context.waitGranted(on: self)
    }

    override func releaseSync(barrier: Bool) {
        releaseFast()
    }

    // MARK: Release

    /// Gives the drain lock up, or hands it to the next waiter or a drain when items are pending.
    func releaseSlow() {
        while true {
            let state = word.load()
            if state & QueueState.hasItems != 0 && state & QueueState.suspended == 0 {
                lock.lock()
                guard let front = items.first else {
                    // Set by the last batch's drain, with nothing queued since (see `drain`).
                    word.bitAnd(~QueueState.hasItems)
                    lock.unlock()
                    continue
                }
                if case .syncWaiter(let waiter, _) = front {
                    _ = items.popFirst()
                    if items.isEmpty { word.bitAnd(~QueueState.hasItems) }
                    lock.unlock()
                    grantWaiter(waiter)
                    return
                }
                lock.unlock()
                scheduleDrain()
                return
            }
            let desired = state & ~(QueueState.owned | QueueState.parked)
            if word.compareExchange(state, desired).exchanged {
                if state & QueueState.parked != 0 {
                    let everyone = state & (QueueState.hasItems | QueueState.suspended) != 0
                    word.wake(everyone ? Int32.max : 1)
                }
                return
            }
        }
    }

    // MARK: Async

    override func enqueue(_ item: QueueItem) {
        lock.lock()
        appendLocked(item)
    }

    override func tryEnqueue(_ item: QueueItem) -> Bool {
        lock.lock()
        // Under the queue lock: the shutdown counts this queue's work under it after moving to `draining`.
        guard poolCore.isAccepting(SchedulerThread.current) else {
            lock.unlock()
            return false
        }
        appendLocked(item)
        return true
    }

    /// Appends `item`, unlocks, and schedules a drain if the queue was idle. Queue lock held on entry.
    @inline(__always)
    private func appendLocked(_ item: QueueItem) {
        items.append(item)
        var schedule = false
        while true {
            let state = word.loadRelaxed()
            if state & QueueState.hasItems != 0 && state & (QueueState.owned | QueueState.suspended) != 0 { break }
            var desired = state | QueueState.hasItems
            schedule = state & (QueueState.owned | QueueState.suspended) == 0
            if schedule { desired |= QueueState.owned }
            if word.compareExchange(state, desired).exchanged { break }
        }
        lock.unlock()
        if schedule { scheduleDrain() }
    }

    /// Hands the (owned) queue to whoever drains it: the pool, the target queue, or the main thread. `yielding`: the
    /// drain gives its worker up to other work (see ``PoolCore/schedule(_:lane:yielding:)``).
    func scheduleDrain(yielding: Bool = false) {
        if isMain {
            MainLoop.shared.signal()
        } else if let target {
            // Claimed as a pool's drain is: by the target when it runs the item, or by the shutdown's count when
            // the target will not (see `abandonAtStop()`).
            drainClaim.store(1)
            target.enqueue(.childDrain(self))
        } else {
            drainClaim.store(1)
            if !poolCore.schedule(.drain(self), lane: lane, yielding: yielding) { drainRefused() }
        }
    }

    /// A drain of this queue will never run: the stopped pool refused it (this thread scheduled it while it held the
    /// drain lock), or the target released it unrun (``QueueCore/releaseUnrun(_:)``). When the shutdown counted this
    /// queue before (``abandonAtStop()``), it did not see the drain and could not give the lock back:
    /// that is done here, as the count does (so a later `sync` runs instead of waiting for ever). Otherwise the count,
    /// still to come, finds the drain unclaimed and does it. Items queued after the count (a child queue's forwarded
    /// drain or task: submissions are refused by then) never run either: they are released (the tasks among them
    /// counted as dropped), so that the release does not schedule another drain for them.
    @inline(never)
    func drainRefused() {
        var removed = RuntimeRing<QueueItem>()
        lock.lock()
        let counted = unstarted.pointee.load(ordering: .relaxed) < 0
        let late = counted ? removeQueuedWorkLocked(into: &removed) : 0
        lock.unlock()
        QueueCore.releaseUnrun(&removed)
        if late > 0 { poolCore.droppedAfterStop.add(late, ordering: .relaxed) }
        if counted && drainClaim.compareExchange(1, 0).exchanged { releaseSlow() }
    }

    /// Runs a drain the pool scheduled, unless a sync waiter claimed it first (then it has run or is running).
    func runScheduledDrain(_ context: ThreadContext) {
        if drainClaim.compareExchange(1, 0).exchanged { drain(context) }
    }

    /// Queued items and the drainer's unstarted batch (see ``PoolMember``).
    override var pendingTaskCount: Int {
        lock.withLock { queuedTaskCountLocked + Swift.max(0, unstarted.pointee.load(ordering: .relaxed)) }
    }

    /// See ``PoolMember/abandonAtStop()``: the queued items and the drainer's unstarted batch, which the
    /// drainer then releases instead of running. A drain that was scheduled and never started (the stopped pool
    /// dropped it) held the drain lock: it is released here, so a later `sync` (or one already waiting in the queue,
    /// which is then granted) runs instead of waiting for a drain that never comes (a drain refused after this count
    /// releases it itself: ``drainRefused()``).
    override func abandonAtStop() -> Int {
        var removed = RuntimeRing<QueueItem>()  // no new generic type: a forked child may shut a pool down
        lock.lock()
        var tasks = removeQueuedWorkLocked(into: &removed)
        tasks += Swift.max(0, unstarted.pointee.exchange(SerialCore.abandonedBatch, ordering: .relaxed))
        lock.unlock()
        QueueCore.releaseUnrun(&removed)
        if !isMain && drainClaim.compareExchange(1, 0).exchanged { releaseSlow() }
        return tasks
    }

    override func didResume() {
        var schedule = false
        while true {
            let state = word.load()
            guard state & QueueState.hasItems != 0, state & (QueueState.owned | QueueState.suspended) == 0 else {
                break
            }
            if word.compareExchange(state, state | QueueState.owned).exchanged {
                schedule = true
                break
            }
        }
        if schedule { scheduleDrain() }
    }

    // MARK: Drain

    /// Runs pending items while holding the drain lock (called by a pool worker, a target's drain, or the main loop).
    ///
    /// Items are taken in batches: one lock round trip swaps the pending ring (up to ``maxBatch`` items) with the drainer's empty spare
    /// ring (no copy, no allocation in steady state), so producers and the drainer rarely meet on the lock. When the
    /// drain must stop early (a sync waiter's turn, a suspension, the fairness batch limit), the items not yet run go
    /// back to the front of the queue.
    /// With `untilGranted`, the caller is a sync waiter draining on its own thread: no yielding or lingering (it
    /// stops at its own waiter entry, which grants it the queue).
    func drain(_ context: ThreadContext, untilGranted: Bool = false) {
        context.push(self, exclusive: true, entry: true)
        var count = 0
        var lingered = false
        outer: while true {
            lock.lock()
            if poolCore.isStopped {
                // A timed shutdown stopped the pool: what is still queued never runs.
                lock.unlock()
                break
            }
            if suspendCount > 0 || items.isEmpty {
                let suspended = suspendCount > 0
                if items.isEmpty { word.bitAnd(~QueueState.hasItems) }
                lock.unlock()
                if !suspended && !lingered && !isMain && !untilGranted && linger() {
                    lingered = true
                    continue
                }
                break
            }
            if items.count <= SerialCore.maxBatch {
                // `hasItems` stays set: producers that queue behind this batch then find it set and leave the word
                // alone (one compare-and-swap fewer per item while a drain keeps up); it is cleared when this loop
                // next finds the queue empty.
                swap(&items, &spare)
            } else {
                for _ in 0..<SerialCore.maxBatch { spare.append(items.popFirst()!) }
            }
            unstarted.pointee.store(spare.count, ordering: .relaxed)
            lock.unlock()
            while let item = spare.popFirst() {
                // Counts the item as started, unless a stopped pool's shutdown counted the batch as not run.
                if unstarted.pointee.subtract(1, ordering: .relaxed).newValue < 0 {
                    QueueCore.releaseUnrun(&spare)  // abandoned (see `abandonAtStop()`): released, never run
                    break outer
                }
                if case .syncWaiter(let waiter, _) = item {
                    putBack()
                    context.pop()
                    grantWaiter(waiter)
                    return
                }
                execute(item, context)
                count += 1
                if word.load() & QueueState.suspended != 0 {
                    putBack()
                    break outer
                }
                if count >= SerialCore.batch && !isMain && !untilGranted && poolCore.hasPendingWork {
                    if putBack() {
                        // Yield the worker to other queues; keep the drain lock and come back at the lane's tail.
                        context.pop()
                        scheduleDrain(yielding: true)
                        return
                    }
                    count = 0
                }
            }
        }
        context.pop()
        releaseSlow()
    }

    /// Before giving the queue up, waits a moment (yielding the CPU) for a producer's next item, when no other work
    /// waits for a worker: a steady producer then feeds one long drain instead of paying a pool round trip per
    /// burst. Returns whether an item arrived.
    private func linger() -> Bool {
        for round in 0..<SerialCore.lingerRounds {
            if word.load() & QueueState.hasItems != 0 { return true }
            if poolCore.hasPendingWork { return false }
            if round >= 2 { _ = cthr_thread_yield() }
        }
        return word.load() & QueueState.hasItems != 0
    }

    /// Returns the batch's unrun items to the front of the queue (or releases them when the shutdown of a stopped
    /// pool counted them as not run). Drain lock held.
    ///
    /// - Returns: Whether items are pending now (the batch's, or items queued since it was taken).
    @discardableResult
    private func putBack() -> Bool {
        lock.lock()
        if unstarted.pointee.exchange(0, ordering: .relaxed) < 0 {
            unstarted.pointee.store(SerialCore.abandonedBatch, ordering: .relaxed)
            lock.unlock()
            QueueCore.releaseUnrun(&spare)
            return false
        }
        if !spare.isEmpty {
            items.prepend(&spare)
            word.bitOr(QueueState.hasItems)
        }
        let pending = !items.isEmpty
        lock.unlock()
        return pending
    }
}
