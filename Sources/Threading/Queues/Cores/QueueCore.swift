// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import CThreading
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The pool's side of a queue: label, QoS, target, a futex-able state word, a lock for the pending items, and
/// the queue-specific values. Adopted by ``SerialCore`` (also the main queue) and ``ConcurrentCore``, which hold
/// that state and implement the scheduling (`enqueue`, `acquireSync`, `releaseSync`, `didResume`,
/// `resetForChild`); everything shared (suspension, `fork()`, the slow `sync`, specifics, deadlock checks) is in
/// the extension below.
///
/// Lifetime: the public queue object holds its core; every scheduled unit holds it too, so a queue released with
/// pending work stays alive until that work ran. `Sendable`: each adopter is `@unchecked Sendable` because its
/// mutable state is guarded by `lock` or is the atomic `word`.
protocol QueueCore: AnyObject, Sendable, ForkParticipant, PoolMember {
    /// The queue's label (diagnostics, thread names).
    var label: String { get }
    /// The queue's QoS.
    var qos: QoS { get }
    /// The queue this one targets, or nil.
    var target: (any QueueCore)? { get }
    /// The pool that runs this queue's work (its target's, when it has one).
    var poolCore: PoolCore { get }
    /// The state word (``QueueState`` bits).
    var word: FutexWord { get }
    /// Guards the pending items, the suspend count and the specifics.
    var lock: RuntimeLock { get }
    /// Fixed heap storage of the pending items (see ``items``); the adopter allocates it with
    /// ``allocateItemsStorage()`` and frees it with ``deallocateCoreStorage()``.
    var itemsStorage: UnsafeMutablePointer<RuntimeRing<QueueItem>> { get }
    /// Fixed heap storage of the suspend count (see ``suspendCount``), allocated with
    /// ``allocateSuspendStorage()``.
    var suspendStorage: UnsafeMutablePointer<Int> { get }
    /// Queue-specific values. Guarded by `lock`.
    var specifics: [ObjectIdentifier: AnyObject] { get set }
    /// Whether running this queue's work needs the main thread (it is the main queue or targets it).
    var needsMainThread: Bool { get }
    /// Whether the queue runs one item at a time (a serial queue, the main queue).
    var isSerial: Bool { get }

    /// Queues an item (async work, a sync waiter) and schedules the queue if needed, whatever the pool's life
    /// (internal continuations: relayed `sync`, child drains, timer firings that passed their own check).
    func enqueue(_ item: QueueItem)

    /// Queues a task a user submits if the pool takes it from the calling thread (``PoolCore/isAccepting(_:)``),
    /// deciding under the queue's lock or, on a lock-free path, after the work is visible to the shutdown; returns
    /// false, with nothing queued, when the pool refused it. An accepted task runs or is counted by the shutdown.
    func tryEnqueue(_ item: QueueItem) -> Bool

    /// Acquires the queue for a synchronous closure on the calling thread (blocking until granted).
    func acquireSync(_ context: ThreadContext, barrier: Bool, requestedOn: any QueueCore)

    /// Releases what `acquireSync` took.
    func releaseSync(barrier: Bool)

    /// Restarts the queue after its last suspension was lifted (queue lock not held).
    func didResume()

    /// The adopter's part of ``forkChild(_:)`` (queue lock held, one thread).
    func resetForChild(heldByForkingThread held: Bool)
}

extension QueueCore {
    /// Pending items and the suspend count live in fixed heap storage reached through addressors: class stored
    /// properties would pay Swift's dynamic exclusivity checks (`swift_beginAccess`, a TLS lookup) on every
    /// enqueue and dequeue.
    static func allocateItemsStorage() -> UnsafeMutablePointer<RuntimeRing<QueueItem>> {
        let storage = UnsafeMutablePointer<RuntimeRing<QueueItem>>.allocate(capacity: 1)
        storage.initialize(to: RuntimeRing())
        return storage
    }

    /// The suspend count's storage, initialized to 0 (see ``allocateItemsStorage()``).
    static func allocateSuspendStorage() -> UnsafeMutablePointer<Int> {
        let storage = UnsafeMutablePointer<Int>.allocate(capacity: 1)
        storage.initialize(to: 0)
        return storage
    }

    /// Frees the storage of the items and the suspend count; the adopter's `deinit` calls it (the state word, a
    /// `~Copyable` ``FutexWord``, frees itself).
    func deallocateCoreStorage() {
        itemsStorage.deinitialize(count: 1)
        itemsStorage.deallocate()
        suspendStorage.deallocate()
    }

    /// Pending items. Guarded by `lock`.
    var items: RuntimeRing<QueueItem> {
        unsafeAddress { UnsafePointer(itemsStorage) }
        unsafeMutableAddress { itemsStorage }
    }

    /// How many `suspend()` calls are not yet balanced by `resume()`. Guarded by `lock`.
    var suspendCount: Int {
        unsafeAddress { UnsafePointer(suspendStorage) }
        unsafeMutableAddress { suspendStorage }
    }

    /// Lane of the shared pool (the root queue's QoS when there is a target).
    var lane: Int { qos.rawValue }

    /// Tasks queued here and not started (see ``PoolMember``).
    var pendingTaskCount: Int { lock.withLock { queuedTaskCountLocked } }

    /// Tasks queued here and not started (a child queue's drain is counted in the child). Queue lock held.
    var queuedTaskCountLocked: Int {
        var count = 0
        for index in 0..<items.count {
            switch items[index] {
            case .task, .barrier, .childTask: count += 1
            case .syncWaiter, .childDrain: break
            }
        }
        return count
    }

    /// Takes the queued work out of the queue once its pool stopped (sync waiters stay): returns the tasks among
    /// it, and the items, to be released outside the lock (a released `run` resumes its caller with
    /// ``ThreadingError/shutDown``). Queue lock held.
    func removeQueuedWorkLocked(into removed: inout RuntimeRing<QueueItem>) -> Int {
        let tasks = queuedTaskCountLocked
        var kept = RuntimeRing<QueueItem>()
        while let item = items.popFirst() {
            if case .syncWaiter = item { kept.append(item) } else { removed.append(item) }
        }
        swap(&items, &kept)
        kept.release()
        if items.isEmpty { word.bitAnd(~QueueState.hasItems) }
        return tasks
    }

    /// See ``PoolMember/abandonAtStop()``: the queued tasks, released (outside the lock).
    func abandonAtStop() -> Int {
        var removed = RuntimeRing<QueueItem>()  // no new generic type: a forked child may shut a pool down
        lock.lock()
        let tasks = removeQueuedWorkLocked(into: &removed)
        lock.unlock()
        removed.release()
        return tasks
    }

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

    /// Marks a process-wide queue (``ConcurrentQueue/global(qos:)``, the queues of ``QueuePool/shared(for:)``):
    /// ``suspend()`` refuses it. `name` is how its users reach it, for the message. Kept as a queue-specific value
    /// under a key no ``QueueKey`` can have, so the adopters need no field for it.
    func markProcessWide(_ name: String) {
        setSpecific(ProcessWideQueueMark.key, ProcessWideQueueMark(name))
    }

    /// Suspends: no new work starts until a matching `resume`. Traps on a process-wide queue (see
    /// ``markProcessWide(_:)``): every other user of it would stall.
    func suspend() {
        lock.lock()
        if let mark = specifics[ProcessWideQueueMark.key] as? ProcessWideQueueMark {
            lock.unlock()
            threadingFatal(
                "Threading: suspend() of queue '\(label)' (\(mark.name)) refused: it is a process-wide queue, and "
                    + "suspending it would stall every other user of it in the process; suspend a queue of your own "
                    + "that targets it instead"
            )
        }
        suspendCount += 1
        if suspendCount == 1 { word.bitOr(QueueState.suspended) }
        lock.unlock()
    }

    /// Resumes; traps on over-resume.
    func resume() {
        lock.lock()
        guard suspendCount > 0 else {
            lock.unlock()
            threadingFatal("resume() of queue '\(label)' that is not suspended (more resume() than suspend() calls)")
        }
        suspendCount -= 1
        let restart = suspendCount == 0
        if restart { word.bitAnd(~QueueState.suspended) }
        lock.unlock()
        if restart { didResume() }
    }

    // MARK: fork()

    /// `fork()` prepare handler (see ``ForkRegistry``): holds the queue lock across the fork.
    func forkPrepare() { lock.lock() }

    /// `fork()` handler in the parent.
    func forkParent() { lock.unlock() }

    /// `fork()` handler in the child (one thread; the queue lock held by `forkPrepare`): drops the items the parent
    /// queued (abandoned, never released) and the claims of the parent's dead threads on the queue, so the queue
    /// is idle and usable. A suspension stays (it is the user's). Kept only when the forking thread itself is
    /// running the queue (it goes on and releases it): its drain lock, barrier or reader counts.
    func forkChild(_ forking: ThreadContext) {
        let held = forking.frameIndex(holding: self) >= 0
        items.abandon()
        var kept: UInt32 = suspendCount > 0 ? QueueState.suspended : 0
        if held {
            let transient = QueueState.hasItems | QueueState.parked | QueueState.draining | QueueState.suspended
            kept |= word.loadRelaxed() & ~transient
        }
        word.storeRelaxed(kept)
        resetForChild(heldByForkingThread: held)
        lock.unlock()
    }

    /// Lifts every outstanding `suspend()` because the queue's last public handle is gone: nobody can call
    /// `resume()` any more, so the held work (and any child queue targeting this one) would otherwise never run.
    func releaseSuspension() {
        lock.lock()
        let restart = suspendCount > 0
        if restart {
            suspendCount = 0
            word.bitAnd(~QueueState.suspended)
        }
        lock.unlock()
        if restart { didResume() }
    }

    // MARK: Running items

    /// Runs a dequeued item on the calling thread (never a sync waiter).
    @inline(__always)
    func execute(_ item: QueueItem, _ context: ThreadContext) {
        context.recordItemStart(of: self)
        switch item {
        case .task(let body), .barrier(let body):
            body()
        case .childDrain(let child):
            child.drain(context)
        case .childTask(let child, let inner, let barrier):
            child.runStarted(inner, barrier: barrier, context)
        case .syncWaiter:
            threadingFatal("internal error: a sync waiter is granted, not executed")
        }
    }

    // MARK: Sync

    /// The slow `sync`: acquires this queue and its target chain (diagnosing deadlocks), runs `body` inline, releases.
    func syncSlow<R>(_ context: ThreadContext, barrier: Bool, _ body: () throws -> R) rethrows -> R {
        if needsMainThread && !context.pointee.isMainThread {
            return try relaySync(context, barrier: barrier, body, rescue: { throw $0 })
        }
        if poolCore.isStopped && word.load() & QueueState.hasItems != 0 {
            // A timed shutdown left tasks in this queue: they never run, so a sync behind them would never start.
            threadingFatal(
                "Threading: sync on queue '\(label)': its worker pool '\(poolCore.label)' was shut down with tasks of "
                    + "this queue left behind (shutdown(timeout:) timed out); they never run, so this sync could "
                    + "never start"
            )
        }
        let stall = SyncStall.watch(self)
        acquireSync(context, barrier: barrier, requestedOn: self)
        context.push(self, exclusive: barrier || isSerial, entry: true)
        var acquired = 1
        var next = target
        while let level = next {
            level.acquireSync(context, barrier: false, requestedOn: self)
            context.push(level, exclusive: level.isSerial, entry: false)
            acquired += 1
            next = level.target
        }
        stall?.started()
        defer {
            // Release deepest first, without allocating: walk down from self for each level (chains are short).
            var remaining = acquired
            while remaining > 0 {
                remaining -= 1
                var level: any QueueCore = self
                for _ in 0..<remaining { level = level.target! }
                context.pop()
                level.releaseSync(barrier: remaining == 0 ? barrier : false)
            }
        }
        return try body()
    }

    /// `sync` by handing the closure to the queue and waiting (for queues whose work must run on the main thread).
    func relaySync<R>(
        _ context: ThreadContext,
        barrier: Bool,
        _ body: () throws -> R,
        rescue: (any Error) throws -> R
    ) rethrows -> R {
        _ = checkDeadlock(context, requested: self, barrier: barrier)
        return try MainThreadWait.syncing(context) {
            try relayAndWait(context, barrier: barrier, body, rescue: rescue)
        }
    }

    private func relayAndWait<R>(
        _ context: ThreadContext,
        barrier: Bool,
        _ body: () throws -> R,
        rescue: (any Error) throws -> R
    ) rethrows -> R {
        typealias Slot = (work: (() throws -> R)?, result: Result<R, any Error>?)
        let box = UnsafeMutablePointer<Slot>.allocate(capacity: 1)
        defer { box.deallocate() }
        withoutActuallyEscaping(body) { escapable in
            box.initialize(to: (escapable, nil))
            let slot = UnsafeSendableBox(box)
            let waiter = context
            context.prepareWait()
            let closure: () -> Void = {
                let box = slot.value
                box.pointee.result = Result { try box.pointee.work!() }
                box.pointee.work = nil  // drop the borrowed closure before the caller returns
                if self.needsMainThread { MainThreadWait.served(waiter) }
                grantWaiter(waiter)
            }
            enqueue(barrier ? .barrier(closure) : .task(closure))
            context.waitGranted()
        }
        let result = box.move().result!
        switch result {
        case .success(let value): return value
        case .failure(let error): return try rescue(error)
        }
    }

    // MARK: Specifics

    func setSpecific(_ key: ObjectIdentifier, _ value: AnyObject?) {
        lock.lock()
        let old = value == nil ? specifics.removeValue(forKey: key) : specifics.updateValue(value!, forKey: key)
        lock.unlock()
        _ = old  // released here, outside the lock
    }

    func getSpecific(_ key: ObjectIdentifier) -> AnyObject? {
        lock.withLock { specifics[key] }
    }

    /// Looks `key` up on this queue, then through its target chain.
    func lookupSpecific(_ key: ObjectIdentifier) -> AnyObject? {
        var level: (any QueueCore)? = self
        while let current = level {
            if let value = current.getSpecific(key) { return value }
            level = current.target
        }
        return nil
    }

    /// Whether the calling thread's current queue is this queue or has it in its target chain.
    var isCurrent: Bool {
        var level = RuntimeThread.current.currentQueue
        while let current = level {
            if current === self { return true }
            level = current.target
        }
        return false
    }

    /// Before blocking for `requested` (reached through this queue), traps if the calling thread already holds it.
    func checkDeadlock(_ context: ThreadContext, requested: any QueueCore, barrier: Bool) -> QueueFrame? {
        guard let frame = context.frame(holding: self) else { return nil }
        if isSerial || barrier || frame.exclusive {
            diagnoseDeadlock(self, requested: requested, frame: frame, barrier: barrier, context)
        }
        return frame
    }
}

/// A `sync` that began while its queue, or a queue in its target chain, was suspended: it cannot start before that
/// queue is resumed. That is not provably a deadlock, even when the syncing thread made the suspension itself: any
/// thread holding the queue may call `resume()`, and releasing the queue's last handle resumes it. So the sync is not
/// stopped; but if it has not started after ``jobStallGraceNanoseconds`` (a second), one line on stderr names the
/// queue, the suspended queue and the waiting thread, instead of a silent hang.
///
/// Costs: on the slow `sync` path, one load of each chain level's state word; only a sync onto a suspended queue arms
/// the one-shot report (a delayed task on the global queue).
final class SyncStall: Sendable {
    private let begun = Atomic<Bool>(false)

    /// Arms the report if `core` or a queue it targets is suspended now; nil otherwise.
    static func watch(_ core: any QueueCore) -> SyncStall? {
        var level: (any QueueCore)? = core
        while let current = level {
            if current.word.load() & QueueState.suspended != 0 {
                let stall = SyncStall()
                let thread = RuntimeThread.describeCurrent()
                let queue = current === core ? "" : " (which targets queue '\(current.label)')"
                let line =
                    "Threading: stalled wait: sync onto queue '\(core.label)'\(queue) on thread \(thread) has not "
                    + "started after a second: queue '\(current.label)' is suspended (suspend() not yet balanced by "
                    + "resume()); the sync starts only once a thread resumes it or releases its last handle"
                ConcurrentQueue.global().asyncAfter(delay: .nanoseconds(Int64(jobStallGraceNanoseconds))) {
                    if !stall.begun.load(ordering: .acquiring) {
                        RuntimeObservation.report(
                            .waitStalled,
                            .warning,
                            line,
                            ["queue": core.label, "thread": thread]
                        )
                    }
                }
                return stall
            }
            level = current.target
        }
        return nil
    }

    /// The sync acquired its queues: no report.
    func started() { begun.store(true, ordering: .releasing) }
}

/// A value that crosses to the queue's thread while its owner waits for it (used by relayed `sync`).
struct UnsafeSendableBox<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}

/// State bits shared by serial and concurrent queue words.
enum QueueState {
    /// Serial: the drain lock is held (by a worker draining, or a thread inside `sync`). Concurrent: a barrier runs.
    static let owned: UInt32 = 1
    /// Serial: threads sleep on the word waiting for the drain lock (mutex-style contention).
    static let parked: UInt32 = 2
    /// Items are pending in the queue (set and cleared under the queue lock).
    static let hasItems: UInt32 = 4
    /// The queue is suspended.
    static let suspended: UInt32 = 8
    /// Concurrent: a barrier owns the queue (`owned`) but waits for striped readers to leave; the last one to leave
    /// starts it.
    static let draining: UInt32 = 16
    /// Concurrent: one running reader (non-barrier task or sync), counted in bits 8...31.
    static let reader: UInt32 = 256
}

/// Prints a deadlock diagnosis to stderr and stops the program.
func diagnoseDeadlock(
    _ held: any QueueCore,
    requested: any QueueCore,
    frame: QueueFrame,
    barrier: Bool,
    _ context: ThreadContext
) -> Never {
    let kind = barrier ? "sync(flags: .barrier)" : "sync"
    var message = "Threading: deadlock: \(kind) onto queue '\(requested.label)'"
    if held !== requested {
        message += " (which targets queue '\(held.label)')"
    }
    message += " from thread \(RuntimeThread.describeCurrent()), which is already executing queue '\(held.label)'"
    if !held.isSerial {
        message += frame.exclusive ? " (inside a barrier)" : " (a barrier sync from inside the same concurrent queue)"
    }
    message += "; this thread's queue stack: \(context.stackDescription)."
    message += " The sync could never start, so the program stops instead of hanging."
    threadingFatal(message)
}

/// Prints the diagnosis of a wait that could never end to stderr and stops the program: the calling thread waits, in
/// `wait` (such as `Job "a".waitUntilFinished()`), for something that needs what this very thread is running to end
/// first (see ``RunningEntry``). `reason` says why it cannot end.
func diagnoseWaitDeadlock(_ wait: String, reason: String, _ context: ThreadContext) -> Never {
    var message = "Threading: deadlock: \(wait) on thread \(RuntimeThread.describeCurrent())"
    if let running = context.runningDescription { message += ", which is running \(running)" }
    message += ": \(reason); this thread's queue stack: \(context.stackDescription)."
    message += " The wait could never end, so the program stops instead of hanging."
    threadingFatal(message)
}

/// The queue-specific value that marks a process-wide queue (see ``QueueCore/markProcessWide(_:)``); its key is the
/// class's own identity, which no ``QueueKey`` instance shares.
final class ProcessWideQueueMark: Sendable {
    static let key = ObjectIdentifier(ProcessWideQueueMark.self)
    /// How users reach the queue: `ConcurrentQueue.global(qos: .default)`.
    let name: String

    init(_ name: String) { self.name = name }
}
