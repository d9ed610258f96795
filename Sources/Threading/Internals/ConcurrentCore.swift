// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import CThreading

/// A concurrent queue's engine: a reader count and a barrier bit in the state word, plus a FIFO of pending items.
///
/// A non-barrier `sync` on a queue with nothing pending is one CAS adding a reader (like a reader-writer lock); a
/// barrier `sync` on an idle queue is one CAS setting the barrier bit. Anything else joins the FIFO: `pump()`
/// starts items from its head while they are compatible with what runs (readers up to the width, or one barrier
/// alone), so a barrier waits for earlier work, runs alone, and later work waits for it.
final class ConcurrentCore: QueueCore, @unchecked Sendable {
    /// The maximum number of non-barrier items running at once.
    let width: UInt32
    /// The last async barrier started on the pool, which a `sync` caller may claim and run itself. Guarded by `lock`.
    private let pendingStorage = UnsafeMutablePointer<EngineClaim?>.allocate(capacity: 1)
    private var pendingBarrier: EngineClaim? {
        unsafeAddress { UnsafePointer(pendingStorage) }
        unsafeMutableAddress { pendingStorage }
    }

    init(label: String, qos: QoS, target: QueueCore?, width: Int) {
        self.width = UInt32(clamping: Swift.min(width, 1 << 23))
        pendingStorage.initialize(to: nil)
        super.init(label: label, qos: qos, target: target, isMain: false)
    }

    deinit {
        pendingStorage.deinitialize(count: 1)
        pendingStorage.deallocate()
    }

    override var isSerial: Bool { false }

    // MARK: Fast paths

    @inline(__always)
    func tryReadFast() -> Bool {
        var state = word.loadRelaxed()
        while state & (QueueState.owned | QueueState.hasItems | QueueState.suspended) == 0
            && state >> 8 < width
        {
            let result = word.weakCompareExchange(state, state &+ QueueState.reader)
            if result.exchanged { return true }
            state = result.original
        }
        return false
    }

    @inline(__always)
    func tryBarrierFast() -> Bool {
        word.compareExchange(0, QueueState.owned).exchanged
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

    override func acquireSync(_ context: EngineContext, barrier: Bool, requestedOn: QueueCore) {
        if barrier ? tryBarrierFast() : tryReadFast() { return }
        if checkDeadlock(context, requested: requestedOn, barrier: barrier) != nil {
            // A reader nested in a reader of the same queue: join at once (waiting behind a pending barrier
            // would wait for ourselves).
            word.add(QueueState.reader)
            return
        }
        context.prepareWait()
        lock.lock()
        while let claim = pendingBarrier {
            // A started async barrier still sits unrun on the pool: we would wait for it, so run it here.
            pendingBarrier = nil
            lock.unlock()
            if let item = claim.claim() { runStarted(item, barrier: true, context) }
            if barrier ? tryBarrierFast() : tryReadFast() { return }
            lock.lock()
        }
        items.append(.syncWaiter(context, barrier: barrier))
        word.bitOr(QueueState.hasItems)
        pumpLocked()
        lock.unlock()
        context.waitGranted()
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
        items.append(item)
        word.bitOr(QueueState.hasItems)
        pumpLocked()
        lock.unlock()
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
            guard word.compareExchange(state, desired).exchanged else { continue }
            _ = items.popFirst()
            if items.isEmpty { word.bitAnd(~QueueState.hasItems) }
            start(front, barrier: barrier)
        }
    }

    /// Runs a started item: grants a sync waiter, or hands the item to a waiting thread, the pool or the target
    /// queue. `locked`: the queue lock is held (needed to look for waiters).
    private func start(_ item: QueueItem, barrier: Bool, locked: Bool = true) {
        if case .syncWaiter(let waiter, _) = item {
            engineGrant(waiter)
        } else if let target {
            target.enqueue(.childTask(self, item, barrier: barrier))
        } else if locked && offerHelp(item, barrier: barrier) {
            return
        } else if barrier {
            let claim = EngineClaim(item)
            pendingBarrier = claim
            Engine.shared.submit(.claimedBarrier(self, claim), lane: lane)
        } else {
            Engine.shared.submit(.concurrent(self, item, barrier: barrier), lane: lane)
        }
    }

    /// Hands a started async item to a thread waiting in `sync` behind it (it must wait for the item anyway), to
    /// save the pool hop; false when no waiter can take it. Queue lock held (only called from `pumpLocked`).
    private func offerHelp(_ item: QueueItem, barrier: Bool) -> Bool {
        var offset = 0
        let limit = Swift.min(items.count, 8)
        while offset < limit {
            if case .syncWaiter(let waiter, _) = items[offset] {
                if engineOfferHelp(waiter, (self, item, barrier)) { return true }
            }
            offset += 1
        }
        return false
    }

    /// Runs an item whose slot `start` took, then gives the slot back.
    func runStarted(_ item: QueueItem, barrier: Bool, _ context: EngineContext) {
        context.push(self, exclusive: barrier, entry: true)
        execute(item, context)
        context.pop()
        if barrier { releaseBarrier() } else { releaseRead() }
    }
}
