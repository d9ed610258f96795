// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import CThreading
import Synchronization

/// The pool's side of a queue, and what every queue kind shares: label, QoS, target, the pool, a futex-able state
/// word, a lock for the pending items, the suspend count and the queue-specific values, and the code over them
/// (suspension, `fork()`, the slow `sync`, specifics, deadlock checks). ``SerialCore`` (also the main queue) and
/// ``ConcurrentCore`` add only what is theirs: they override the scheduling methods (`enqueue`, `tryEnqueue`,
/// `acquireSync`, `releaseSync`, `didResume`, `resetForChild`, and the ``PoolMember`` counts where they differ).
///
/// A class, not a protocol: the shared state is stored once here instead of being restated by each kind, a queue
/// is one reference (no existential box), and a call through a `QueueCore` reference is one vtable load; the
/// public queues hold their final subclass, so their calls are direct. Not `open` and never subclassed outside
/// this folder; the methods below that a subclass must override trap if it does not.
///
/// Files: this one holds the state and the scheduling interface; `QueueCore+Sync.swift` the slow `sync`, relayed
/// `sync` and the deadlock diagnoses; `QueueCore+Suspension.swift` suspend and resume; `QueueCore+Fork.swift` the
/// `fork()` handlers; `QueueCore+Specifics.swift` queue-specific values and "is current".
///
/// Lifetime: the public queue object holds its core; every scheduled unit holds it too, so a queue released with
/// pending work stays alive until that work ran. `@unchecked Sendable`: the mutable state is guarded by `lock`
/// (items, suspend count, specifics) or is the atomic `word`; each subclass's own state says what guards it.
class QueueCore: @unchecked Sendable, ForkParticipant, PoolMember {
    /// The queue's label (diagnostics, thread names).
    let label: String
    /// The queue's QoS.
    let qos: QoS
    /// The queue this one targets, or nil.
    let target: QueueCore?
    /// The pool that runs this queue's work (its target's, when it has one).
    let poolCore: PoolCore
    /// The state word (``QueueState`` bits); each kind documents what its bits mean (see ``SerialCore`` for why its
    /// drain lock lives here rather than in a lock of its own).
    let word = FutexWord.allocate()
    /// Guards the pending items, the suspend count and the specifics.
    let lock = RuntimeLock.make()
    /// Whether running this queue's work needs the main thread (it is the main queue or targets it).
    let needsMainThread: Bool
    /// Whether the queue runs one item at a time (a serial queue, the main queue).
    let isSerial: Bool
    /// Queue-specific values. Guarded by `lock`.
    final var specifics: [ObjectIdentifier: AnyObject] = [:]
    /// Pending items and the suspend count live in fixed heap storage reached through addressors (``items``,
    /// ``suspendCount``): class stored properties would pay Swift's dynamic exclusivity checks
    /// (`swift_beginAccess`, a TLS lookup) on every enqueue and dequeue.
    private let itemsStorage: UnsafeMutablePointer<RuntimeRing<QueueItem>>
    private let suspendStorage: UnsafeMutablePointer<Int>

    /// Calls `body` with the queue `depth` levels down this queue's target chain (0: this queue), lent without a
    /// retain or a release; nil when the chain is shorter. The chain is immutable and each level is kept alive by
    /// the one that targets it, so the references are valid while the caller holds this queue. A queue core's
    /// reference count lives in a side table (the fork registry holds it weakly), where each retain and release is
    /// a slow path: the `sync` slow path walks the chain this way (half its time went to those counts with four
    /// threads contending on two cores).
    @inline(__always)
    func withLevel<Result>(_ depth: Int, _ body: (QueueCore) -> Result) -> Result? {
        var level = Unmanaged.passUnretained(self)
        for _ in 0..<depth {
            let next: Unmanaged<QueueCore>? = level._withUnsafeGuaranteedRef { core in
                guard let target = core.target else { return nil }
                return Unmanaged.passUnretained(target)
            }
            guard let next else { return nil }
            level = next
        }
        return level._withUnsafeGuaranteedRef(body)
    }

    /// Sets the shared state (a subclass first sets its own) and registers the queue for `fork()`.
    init(label: String, qos: QoS, target: QueueCore?, poolCore: PoolCore, needsMainThread: Bool, isSerial: Bool) {
        self.label = label
        self.qos = qos
        self.target = target
        self.poolCore = target?.poolCore ?? poolCore
        self.needsMainThread = needsMainThread || (target?.needsMainThread ?? false)
        self.isSerial = isSerial
        itemsStorage = .allocate(capacity: 1)
        itemsStorage.initialize(to: RuntimeRing())
        suspendStorage = .allocate(capacity: 1)
        suspendStorage.initialize(to: 0)
        ForkRegistry.register(self, as: .queue)
    }

    deinit {
        // The state word, a `~Copyable` ``FutexWord``, frees itself.
        itemsStorage.deinitialize(count: 1)
        itemsStorage.deallocate()
        suspendStorage.deallocate()
    }

    /// Pending items. Guarded by `lock`.
    final var items: RuntimeRing<QueueItem> {
        unsafeAddress { UnsafePointer(itemsStorage) }
        unsafeMutableAddress { itemsStorage }
    }

    /// How many `suspend()` calls are not yet balanced by `resume()`. Guarded by `lock`.
    final var suspendCount: Int {
        unsafeAddress { UnsafePointer(suspendStorage) }
        unsafeMutableAddress { suspendStorage }
    }

    // MARK: Scheduling: each kind overrides these

    /// Queues an item (async work, a sync waiter) and schedules the queue if needed, whatever the pool's life
    /// (internal continuations: relayed `sync`, child drains, timer firings that passed their own check).
    func enqueue(_ item: QueueItem) { mustOverride() }

    /// Queues a task a user submits if the pool takes it from the calling thread (``PoolCore/isAccepting(_:)``),
    /// deciding under the queue's lock or, on a lock-free path, after the work is visible to the shutdown; returns
    /// false, with nothing queued, when the pool refused it. An accepted task runs or is counted by the shutdown.
    func tryEnqueue(_ item: QueueItem) -> Bool { mustOverride() }

    /// Acquires the queue for a synchronous closure on the calling thread (blocking until granted).
    func acquireSync(_ context: ThreadContext, barrier: Bool, requestedOn: QueueCore) { mustOverride() }

    /// Releases what `acquireSync` took.
    func releaseSync(barrier: Bool) { mustOverride() }

    /// Restarts the queue after its last suspension was lifted (queue lock not held).
    func didResume() { mustOverride() }

    /// The kind's part of ``forkChild(_:)`` (queue lock held, one thread).
    func resetForChild(heldByForkingThread held: Bool) { mustOverride() }

    /// Tasks queued here and not started (see ``PoolMember``); a kind adds what it holds besides the items.
    var pendingTaskCount: Int { lock.withLock { queuedTaskCountLocked } }

    /// See ``PoolMember/abandonAtStop()``: the queued tasks, released (outside the lock); a kind that holds taken
    /// work besides the items gives that up too.
    func abandonAtStop() -> Int {
        var removed = RuntimeRing<QueueItem>()  // no new generic type: a forked child may shut a pool down
        lock.lock()
        let tasks = removeQueuedWorkLocked(into: &removed)
        lock.unlock()
        QueueCore.releaseUnrun(&removed)
        return tasks
    }

    /// Releases items that will never run (the pool stopped), outside the queue's lock (see
    /// ``releaseUnrun(_:)-(QueueItem)``). One item at a time, with no collection of the children: a forked child may
    /// shut a pool down, and must not make the runtime instantiate a new generic type.
    static func releaseUnrun(_ items: inout RuntimeRing<QueueItem>) {
        while let item = items.popFirst() { releaseUnrun(item) }
        items.release()
    }

    /// What an item that will never run owes the child queue it came from, outside the queue's lock: a child's
    /// drain gives the child's drain lock back (``SerialCore/drainRefused()``), a concurrent child's started item
    /// its reader slot or barrier (``ConcurrentCore/startedItemDropped(_:barrier:)``), so that the child is not held
    /// for ever by work nobody will run.
    static func releaseUnrun(_ item: QueueItem) {
        switch item {
        case .childDrain(let child): child.drainRefused()
        case .childTask(let child, let started, let barrier): child.startedItemDropped(started, barrier: barrier)
        default: break
        }
    }

    /// The trap behind the scheduling methods above, which every kind overrides.
    private func mustOverride(_ function: StaticString = #function) -> Never {
        threadingFatal("internal error: \(type(of: self)) does not implement QueueCore.\(function)")
    }
}

extension QueueCore {
    /// Lane of the shared pool (the root queue's QoS when there is a target).
    var lane: Int { qos.rawValue }

    /// Tasks queued here and not started (a child queue's drain is counted in the child). Queue lock held.
    var queuedTaskCountLocked: Int {
        var count = 0
        for index in 0..<items.count where items[index].isTask { count += 1 }
        return count
    }

    /// Takes the queued work out of the queue once its pool stopped (sync waiters stay): returns the tasks among
    /// it, and the items, to be released outside the lock (a released `run` resumes its caller with
    /// ``ThreadingError/shutDown``). Queue lock held.
    func removeQueuedWorkLocked(into removed: inout RuntimeRing<QueueItem>) -> Int {
        let tasks = queuedTaskCountLocked
        var kept = RuntimeRing<QueueItem>()
        while let item = items.popFirst() {
            if item.isSyncWaiter { kept.append(item) } else { removed.append(item) }
        }
        swap(&items, &kept)
        kept.release()
        if items.isEmpty { word.bitAnd(~QueueState.hasItems) }
        return tasks
    }

    // MARK: Submission

    /// Queues a firing: a timer's or `asyncAfter`'s (on the timer thread), or a notification
    /// (``WorkGroup/notify(queue:execute:)``, ``WorkItem/notify(queue:execute:)``) whose registration passed the
    /// pool's check. Once the pool no longer takes work from the calling thread it is not queued: delayed work and
    /// notifications stop at the shutdown and are counted in the pool's ``WorkerPoolStatistics/cancelledFirings``
    /// (see <doc:Pools>). Decided under the queue's lock (``tryEnqueue(_:)``), so a firing is either queued before
    /// the shutdown counts the queue's work, or counted here.
    func enqueueFiring(_ item: QueueItem) {
        if !tryEnqueue(item) { poolCore.countCancelledFiring() }
    }

    /// Queues a task the user submits with a trapping form (`async`, an actor's job): when the pool refused it,
    /// ``PoolCore/refuse(_:)`` traps (or, on a thread of the stopped pool, counts the drop).
    @inline(__always)
    func enqueue(_ item: QueueItem, refusing operation: @autoclosure () -> String) {
        if !tryEnqueue(item) { poolCore.refuse("\(operation()) on queue '\(label)'") }
    }

    // MARK: Running items

    /// Runs a dequeued item on the calling thread (never a sync waiter).
    @inline(__always)
    func execute(_ item: QueueItem, _ context: ThreadContext) {
        context.recordItemStart(of: self)
        switch item {
        case .task(let body), .barrier(let body):
            body()
        case .actorJob(let job):
            runActorJob(job)
        case .childDrain(let child):
            child.runScheduledDrain(context)
        case .childTask(let child, let inner, let barrier):
            child.runStarted(inner, barrier: barrier, context)
        case .syncWaiter:
            threadingFatal("internal error: a sync waiter is granted, not executed")
        }
    }
}

/// State bits shared by serial and concurrent queue words.
enum QueueState {
    /// Serial: the drain lock is held (by a worker draining, or a thread inside `sync`). Concurrent: a barrier runs.
    static let owned: UInt32 = 1
    /// Serial: threads sleep on the word waiting for the drain lock (mutex-style contention).
    static let parked: UInt32 = 2
    /// Items are pending in the queue (set and cleared under the queue lock). Serial: while a drain holds the queue
    /// it may stay set with nothing pending (the drain clears it when it finds the queue empty, so that producers
    /// queueing behind a batch leave the word alone).
    static let hasItems: UInt32 = 4
    /// The queue is suspended.
    static let suspended: UInt32 = 8
    /// Concurrent: a barrier owns the queue (`owned`) but waits for striped readers to leave; the last one to leave
    /// starts it.
    static let draining: UInt32 = 16
    /// Concurrent: one running reader (non-barrier task or sync), counted in bits 8...31.
    static let reader: UInt32 = 256
}
