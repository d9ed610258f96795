// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import CThreading
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A runtime object with state that a forked child must not inherit: queue cores, job queue cores and pools.
///
/// The three calls happen inside `pthread_atfork` handlers, in the order ``ForkRegistry`` gives them. `forkPrepare`
/// takes the object's lock (so the child's copy is consistent), `forkParent` gives it back, and `forkChild` runs in
/// the child with nothing else running: it drops every piece of work the parent accepted, makes the object usable
/// again, and gives the lock back. No user code may run in any of them.
protocol ForkParticipant: AnyObject {
    func forkPrepare()
    func forkParent()
    func forkChild(_ forking: ThreadContext)
}

/// The clean-child rule of the worker pools: after `fork()`, the child holds no work its parent accepted.
///
/// Every queue core, job queue core and worker pool registers here while it lives. The `pthread_atfork` handlers
/// (installed once, when the first pool object is made) take the registry lock, every queue's and job queue's
/// lock, the job graph's, the timer's and every live pool's (oldest first), in that order, so that nothing is
/// half-changed at the fork. In the child they drop every pool's pending units, the timers, every queue's pending
/// items and every job queue's jobs, then release the locks.
///
/// What is dropped is never released in the child: releasing a closure runs the deinitializers of the values it
/// captured, which are the parent's (a buffered writer would flush twice). The memory stays allocated, as a copy of
/// the parent's pages, until the child exits or `exec`s.
///
/// The child handler runs while the parent's other threads are gone, possibly in the middle of something that held
/// a lock of the Swift runtime or of a library: it allocates nothing it can avoid, boxes nothing into existentials,
/// runs no deinitializer, and asks the runtime for no type it may not have made yet. The runtime makes the metadata
/// of a generic type (`IndexingIterator<[Job]>`, `ReversedCollection<…>`, a tuple) the first time code asks for it,
/// under a lock of its own; a thread of the parent that held that lock at the fork never releases it in the child,
/// so a child handler that asks for a new one hangs for ever (a fork-and-exec child too: the handlers run before
/// `exec`). So the child handlers use index loops over arrays of plain element types and stored properties only,
/// and what needs more (a dictionary's values, the forking thread's state, a lazy global) is prepared by the prepare
/// handler, in the parent, where asking is safe. Unoptimized builds, which call every generic function through its
/// unspecialized entry point, are where this shows: `scripts/fork-handlers-check.sh` runs the fork tests under a
/// debugger and fails if a child handler asks the runtime for a new type.
///
/// ``epoch`` counts the forks this process descends from; objects that outlive a fork compare it to tell the
/// parent's work from the child's (``WorkGroup``, ``Job``).
///
/// Lock order (the prepare handler's): registry, then queue cores newest first (a queue's target is older than the
/// queue, and a queue may take its target's lock while holding its own), then job queue cores, then `JobGraph.lock`,
/// the timer lock and the pools' locks, oldest pool first, then the leaf locks of the layers above that runtime
/// threads take on their own (``holdAcrossFork(_:)``: the runtime registry's, the event ring's). The registry holds
/// its objects weakly and a deinitializer never takes the registry lock (dead entries are swept when objects
/// register), so a thread that frees a queue while holding one of those locks cannot deadlock with a fork; only
/// creation takes the registry lock, and nothing is created under a pool lock.
enum ForkRegistry {
    /// What a registered object is, which decides where its lock comes in the prepare handler's order.
    enum Kind {
        /// A queue core: locked first, newest first.
        case queue
        /// A job queue core: locked after the queues.
        case jobQueue
        /// A worker pool: locked last, after the job graph and the timer, oldest first.
        case pool
    }

    /// A registered object, held weakly: one that is being deinitialized reads as nil and is skipped.
    private struct Entry {
        let kind: Kind
        weak var participant: (any ForkParticipant)?
    }

    private static let lock = RuntimeLock.make()
    /// Guarded by `lock`: the registered objects, oldest first (dead ones until the next sweep).
    nonisolated(unsafe) private static var entries: [Entry] = []
    /// Guarded by `lock`: `entries.count` after the last sweep.
    nonisolated(unsafe) private static var sweptCount = 0
    /// Guarded by `lock` between prepare and parent/child: the live queues and job queues in lock order, retained.
    nonisolated(unsafe) private static var prepared: [any ForkParticipant] = []
    /// Guarded by `lock` between prepare and parent/child: the live pools, oldest first, retained.
    nonisolated(unsafe) private static var preparedPools: [any ForkParticipant] = []
    /// Guarded by `lock`: the leaf locks of the layers above (see ``holdAcrossFork(_:)``), in registration order.
    nonisolated(unsafe) private static var leafLocks: [RuntimeLock] = []

    /// Has the fork handlers hold `leafLock` across every `fork()`, after every other lock they take: a lock of a
    /// layer above this one that the runtime's own threads take on their own (the watchdog's walk over the pools, the
    /// event delivery thread), under which nothing else is taken. A child that inherited it held by a thread it does
    /// not have would hang on its next use. The lock lives as long as the process (a registry's or a singleton's).
    static func holdAcrossFork(_ leafLock: RuntimeLock) {
        lock.withLock { leafLocks.append(leafLock) }
    }

    /// The number of forks between the process's first ancestor that used Threading and this process (0 there).
    static let epoch = Atomic<UInt32>(0)

    /// Installs the handlers once (the first pool object does it). If `pthread_atfork` fails (ENOMEM), a forked
    /// child keeps the parent's state; the failure is reported on stderr.
    private static let installed: Bool = {
        let code = pthread_atfork(
            { ForkRegistry.prepare() },
            { ForkRegistry.parent() },
            { ForkRegistry.child() }
        )
        if code != 0 {
            let message =
                "Threading: pthread_atfork failed (\(errnoName(code))); a forked child may run work its parent "
                + "accepted"
            RuntimeObservation.report(.warning, .warning, message)
        }
        return code == 0
    }()

    /// Installs the handlers if no pool object did yet (the pool calls it when it starts).
    static func install() { _ = installed }

    /// Registers `object` (at the end of its initializer; it stays registered until it is deinitialized): queue
    /// cores, job queue cores and worker pools, each of which takes part in every fork.
    ///
    /// - Complexity: Amortized O(1): dead entries are swept when the list has doubled since the last sweep.
    static func register(_ object: some ForkParticipant, as kind: Kind) {
        _ = installed
        lock.lock()
        if entries.count >= 2 * sweptCount + 64 {
            entries.removeAll { $0.participant == nil }
            sweptCount = entries.count
        }
        entries.append(Entry(kind: kind, participant: object))
        lock.unlock()
    }

    /// The live queue cores and job queue cores (for a pool's shutdown, which looks for work they still hold).
    static func poolMembers() -> [any PoolMember] {
        lock.lock()
        defer { lock.unlock() }
        return entries.compactMap { $0.participant as? any PoolMember }
    }

    // MARK: The pthread_atfork handlers

    private static func prepare() {
        // What the child handler reads, made here (see above): the lazy globals and the forking thread's state.
        _ = epoch.load(ordering: .relaxed)
        _ = SchedulerThread.current
        lock.lock()
        var queues: [any ForkParticipant] = []
        var jobQueues: [any ForkParticipant] = []
        var pools: [any ForkParticipant] = []
        for entry in entries.reversed() {
            guard let participant = entry.participant else { continue }
            switch entry.kind {
            case .queue: queues.append(participant)
            case .jobQueue: jobQueues.append(participant)
            case .pool: pools.append(participant)
            }
        }
        prepared = queues + jobQueues
        preparedPools = pools.reversed()
        for participant in prepared { participant.forkPrepare() }
        JobGraph.lock.lock()
        TimerThread.shared.forkPrepare()
        for pool in preparedPools { pool.forkPrepare() }
        // Last, the leaf locks that runtime threads take on their own (nothing is taken while one is held).
        for leafLock in leafLocks { leafLock.lock() }
    }

    /// Gives the leaf locks back, in the parent and in the child (an index loop: see above).
    private static func unlockLeafLocks() {
        var index = leafLocks.count
        while index > 0 {
            index -= 1
            leafLocks[index].unlock()
        }
    }

    private static func parent() {
        unlockLeafLocks()
        for pool in preparedPools.reversed() { pool.forkParent() }
        let retainedPools = preparedPools
        preparedPools = []
        TimerThread.shared.forkParent()
        JobGraph.lock.unlock()
        for participant in prepared.reversed() { participant.forkParent() }
        let retained = prepared
        prepared = []
        lock.unlock()
        _ = retained  // a last reference may go here, outside every lock
        _ = retainedPools
    }

    private static func child() {
        unlockLeafLocks()
        epoch.add(1, ordering: .relaxed)
        let forking = SchedulerThread.current
        var index = 0
        while index < preparedPools.count {
            preparedPools[index].forkChild(forking)
            index += 1
        }
        TimerThread.shared.forkChild()
        index = prepared.count
        while index > 0 {
            index -= 1
            prepared[index].forkChild(forking)
        }
        JobGraph.lock.unlock()
        // `prepared` keeps its references: releasing one here could run a deinitializer inside the handler. The next
        // fork's prepare handler replaces them.
        lock.unlock()
    }
}
