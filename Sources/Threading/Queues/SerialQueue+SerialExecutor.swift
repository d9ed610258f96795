// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import Synchronization

/// A serial queue is an actor executor (SE-0392): an actor whose `unownedExecutor` is a queue's runs its jobs as
/// tasks of that queue.
///
/// ```swift
/// actor Connection {
///     nonisolated let queue = SerialQueue(label: "connection")
///     nonisolated var unownedExecutor: UnownedSerialExecutor { queue.asUnownedSerialExecutor() }
/// }
/// ```
///
/// Actor jobs and closures submitted with ``SerialQueue/async(execute:)`` share one FIFO order, and code running
/// on the queue — its async closures, and a ``SerialQueue/sync(execute:)`` closure on the caller's thread — is
/// isolated to the actor: `assumeIsolated` and `preconditionIsolated` succeed there (see <doc:Concurrency>).
///
/// The actor must keep its queue (a stored property, as above): an `unownedExecutor` that makes a new queue at each
/// call gives the actor a different executor every time (its jobs would not even be serialised) and hands the
/// runtime a queue nobody keeps. Such a job stops the program with a message naming the queue (see
/// ``asUnownedSerialExecutor()``) instead of touching freed memory.
extension SerialQueue: SerialExecutor {
    /// Runs `job` after the queue's earlier work, as one task of the queue.
    ///
    /// Called by the Swift runtime for jobs of actors whose executor is this queue.
    ///
    /// - Parameter job: The job; it runs on a worker of the queue's pool (or on a thread in `sync` behind it).
    /// - Complexity: O(1): as ``async(execute:)``, without its closure: the job is queued as it is, so an actor hop
    ///   onto the queue allocates nothing.
    public func enqueue(_ job: consuming ExecutorJob) {
        core.enqueue(job)
    }

    /// This queue as an unowned executor, for an actor's `unownedExecutor`.
    ///
    /// The executor is the queue's pool core, which the queue and every queued task keep alive; it does not keep
    /// the queue. The actor must keep the queue (`nonisolated let queue = SerialQueue(...)`). When a queue that
    /// was handed out here is released, its core stays alive a while longer (among the last 256 such cores), so
    /// an actor job the runtime sends to it afterwards — an `unownedExecutor` that returned the executor of a
    /// queue nobody kept — stops the program with a message naming the queue and the fix, instead of using freed
    /// memory. A queue released long after its last actor job (the actor died with it) costs nothing but that
    /// delay in freeing its core.
    ///
    /// - Returns: The unowned executor.
    /// - Complexity: O(1); one relaxed atomic load (a store the first time).
    public func asUnownedSerialExecutor() -> UnownedSerialExecutor {
        core.asUnownedSerialExecutor()
    }

    /// Whether the calling code runs on this queue: in one of its tasks or actor jobs, inside its
    /// ``sync(execute:)`` (on whatever thread called it), or on a queue that targets it.
    ///
    /// The Swift runtime asks this for `assumeIsolated`, `preconditionIsolated` and other isolation checks of an
    /// actor on this queue; when it answers false, those checks stop the program with the runtime's message
    /// ("Incorrect actor executor assumption; Expected same executor as …").
    ///
    /// - Returns: `true` on this queue, `false` elsewhere (never nil: the queue always knows).
    public func isIsolatingCurrentContext() -> Bool? {
        core.isCurrent
    }

    /// Stops the program unless the calling code runs on this queue (see ``isIsolatingCurrentContext()``).
    ///
    /// Runtimes that do not ask ``isIsolatingCurrentContext()`` call this instead. Traps with a message naming the
    /// queue and the calling thread.
    public func checkIsolated() {
        core.checkIsolated()
    }
}

extension QueueCore {
    /// Runs an actor job that ``SerialCore/enqueue(_:)`` queued here, with this core as its executor (only a
    /// ``SerialCore`` queues actor jobs).
    @inline(__always)
    func runActorJob(_ job: UnownedJob) {
        guard let core = self as? SerialCore else {
            threadingFatal("internal error: an actor job reached queue '\(label)', which is no serial executor")
        }
        job.runSynchronously(on: UnownedSerialExecutor(ordinary: core))
    }
}

/// Bits of ``SerialCore/executorState``.
enum SerialExecutorState {
    /// ``SerialQueue/asUnownedSerialExecutor()`` was called: the runtime may hold an unowned reference to the core.
    static let handedOut: UInt8 = 1
    /// The queue's ``SerialQueue`` was released after it was handed out: no actor may send it jobs any more.
    static let released: UInt8 = 2
}

/// The executor the runtime sees for an actor on a ``SerialQueue``: the queue's core.
///
/// The core, not the public ``SerialQueue``, is the executor object so that a queue that is released while the
/// runtime still holds its unowned executor can be diagnosed: the core outlives the queue in
/// ``ReleasedExecutorQuarantine``, and an actor job that reaches it then traps. No retain is added per job: a
/// queued job is a task of the core, which the queue's scheduled drain keeps alive as it does for any task.
extension SerialCore: SerialExecutor {
    func enqueue(_ job: consuming ExecutorJob) {
        if _slowPath(executorState.load(ordering: .relaxed) & SerialExecutorState.released != 0) {
            threadingFatal(
                "Threading: an actor job was sent to SerialQueue '\(label)' after the queue was released: the "
                    + "actor's unownedExecutor returned the executor of a queue nobody keeps (a computed property "
                    + "that makes a new SerialQueue at each call?). Keep the queue in the actor "
                    + "(nonisolated let queue = SerialQueue(...)) and return queue.asUnownedSerialExecutor()"
            )
        }
        enqueue(.actorJob(UnownedJob(job)), refusing: "an actor job")
    }

    func asUnownedSerialExecutor() -> UnownedSerialExecutor {
        if executorState.load(ordering: .relaxed) & SerialExecutorState.handedOut == 0 {
            executorState.bitwiseOr(SerialExecutorState.handedOut, ordering: .relaxed)
        }
        return UnownedSerialExecutor(ordinary: self)
    }

    func isIsolatingCurrentContext() -> Bool? {
        isCurrent
    }

    func checkIsolated() {
        if !isCurrent {
            threadingFatal(
                "Threading: isolation check failed: the calling code (thread \(currentThreadID)) is not running on "
                    + "SerialQueue '\(label)', the executor of the actor it assumed isolation to"
            )
        }
    }

    /// Called by ``SerialQueue``'s `deinit`: a core that was handed out as an executor is marked released and kept
    /// in ``ReleasedExecutorQuarantine`` a while, so a late actor job finds it and traps with a message.
    func queueReleased() {
        if executorState.load(ordering: .relaxed) & SerialExecutorState.handedOut == 0 { return }
        executorState.bitwiseOr(SerialExecutorState.released, ordering: .relaxed)
        ReleasedExecutorQuarantine.keep(self)
    }
}

/// The cores of the last ``capacity`` released queues that had been handed out as actor executors, kept alive
/// (an `asUnownedSerialExecutor()` reference is unowned: the runtime may still send a job to one).
///
/// Lock-free (an atomic cursor over a ring of atomic slots), so it is safe in a forked child whatever the parent's
/// threads were doing. Bounded: each new core evicts (releases) the oldest, so correct code that releases actors
/// and their queues keeps at most ``capacity`` cores alive a little longer, never a growing set. A released
/// queue's core could be freed before a late job reaches it only if ``capacity`` other such queues were released
/// in between, which the misuse this diagnoses (a job sent right after the queue was made and dropped) never does.
enum ReleasedExecutorQuarantine {
    /// How many cores are kept (a power of two).
    static let capacity = 256
    nonisolated(unsafe) private static let slots: UnsafeMutablePointer<Atomic<UnsafeMutableRawPointer?>> = {
        let slots = UnsafeMutablePointer<Atomic<UnsafeMutableRawPointer?>>.allocate(capacity: capacity)
        for index in 0..<capacity { (slots + index).initialize(to: Atomic(nil)) }
        return slots
    }()
    private static let cursor = Atomic<Int>(0)

    /// Keeps `core` alive until ``capacity`` more cores came in; releases the one it replaces.
    static func keep(_ core: SerialCore) {
        let index = cursor.wrappingAdd(1, ordering: .relaxed).oldValue & (capacity - 1)
        let retained = Unmanaged.passRetained(core).toOpaque()
        if let evicted = slots[index].exchange(retained, ordering: .acquiringAndReleasing) {
            Unmanaged<SerialCore>.fromOpaque(evicted).release()
        }
    }
}
