// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

/// A serial queue is an actor executor (SE-0392): an actor whose `unownedExecutor` is a queue's runs its jobs as
/// tasks of that queue.
///
/// ```swift
/// actor Connection {
///     let queue = SerialQueue(label: "connection")
///     nonisolated var unownedExecutor: UnownedSerialExecutor { queue.asUnownedSerialExecutor() }
/// }
/// ```
///
/// Actor jobs and closures submitted with ``SerialQueue/async(execute:)`` share one FIFO order, and code running
/// on the queue — its async closures, and a ``SerialQueue/sync(execute:)`` closure on the caller's thread — is
/// isolated to the actor: `assumeIsolated` and `preconditionIsolated` succeed there (see <doc:Concurrency>).
extension SerialQueue: SerialExecutor {
    /// Runs `job` after the queue's earlier work, as one task of the queue.
    ///
    /// Called by the Swift runtime for jobs of actors whose executor is this queue.
    ///
    /// - Parameter job: The job; it runs on a worker of the queue's pool (or on a thread in `sync` behind it).
    /// - Complexity: O(1): as ``async(execute:)`` (one closure allocation for the job).
    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let executor = asUnownedSerialExecutor()
        core.submit(.task { job.runSynchronously(on: executor) }, "an actor job")
    }

    /// This queue as an unowned executor, for an actor's `unownedExecutor`.
    ///
    /// The executor does not retain the queue: the actor must (a stored property).
    ///
    /// - Returns: The unowned executor.
    public func asUnownedSerialExecutor() -> UnownedSerialExecutor {
        UnownedSerialExecutor(ordinary: self)
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
        if !core.isCurrent {
            threadingFatal(
                "Threading: isolation check failed: the calling code (thread \(currentThreadID)) is not running on "
                    + "SerialQueue '\(label)', the executor of the actor it assumed isolation to"
            )
        }
    }
}
