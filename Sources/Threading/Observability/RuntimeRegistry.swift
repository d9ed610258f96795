// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import CThreading

/// The live pools, queues and job queues, for the stall watchdog and the runtime snapshot.
///
/// Pools register here when they are made (held weakly, swept as ``ForkRegistry`` sweeps); queue cores and job
/// queue cores are already registered with ``ForkRegistry`` at their creation, and are listed from there. So
/// registration costs happen at create and destroy only, never per unit.
///
/// Lock order: nothing else of the runtime is taken while `lock` is held.
enum RuntimeRegistry {
    private struct Entry {
        weak var pool: PoolCore?
    }

    /// Held across `fork()` (``ForkRegistry/holdAcrossFork(_:)``): the watchdog walks the pools under it every tick,
    /// and a child that inherited it held could never make a pool or take a snapshot.
    static let lock: RuntimeLock = {
        let lock = RuntimeLock.make()
        ForkRegistry.holdAcrossFork(lock)
        return lock
    }()
    /// Guarded by `lock`: the registered pools, oldest first (dead ones until the next sweep).
    nonisolated(unsafe) private static var entries: [Entry] = []
    /// Guarded by `lock`: `entries.count` after the last sweep.
    nonisolated(unsafe) private static var sweptCount = 0

    /// Registers a pool (at the end of its initializer).
    static func register(_ pool: PoolCore) {
        lock.lock()
        if entries.count >= 2 * sweptCount + 16 {
            entries.removeAll { $0.pool == nil }
            sweptCount = entries.count
        }
        entries.append(Entry(pool: pool))
        lock.unlock()
    }

    /// The live pools, oldest first.
    static func pools() -> [PoolCore] {
        lock.lock()
        defer { lock.unlock() }
        return entries.compactMap { $0.pool }
    }

    /// How many pool entries there are (live or dead; for ``pool(at:)``).
    static var poolEntryCount: Int {
        lock.lock()
        defer { lock.unlock() }
        return entries.count
    }

    /// The pool of entry `index`, or nil when it is gone (or `index` is past the end). With ``poolEntryCount``, the
    /// watchdog's allocation-free walk over the pools (a process that counts its allocations sees none from a tick).
    static func pool(at index: Int) -> PoolCore? {
        lock.lock()
        defer { lock.unlock() }
        return index < entries.count ? entries[index].pool : nil
    }

    /// The live queue cores, oldest first.
    static func queues() -> [QueueCore] {
        ForkRegistry.poolMembers().compactMap { $0 as? QueueCore }
    }

    /// The live job queue cores, oldest first.
    static func jobQueues() -> [JobQueueCore] {
        ForkRegistry.poolMembers().compactMap { $0 as? JobQueueCore }
    }

    /// The kernel thread id of the pool worker running an item or a drain of `queue` (a queue core) now, or nil
    /// (none runs one, or the thread running it is not a pool worker: a `sync` caller runs its closure on its own
    /// thread). A racy but safe view: the worker may have finished the item since.
    static func runningThread(ofQueue queue: AnyObject) -> Int32? {
        let address = objectAddress(queue)
        for pool in pools() {
            for runner in pool.observation.runners(now: cthr_clock_now_ns()) where runner.subject == address {
                return runner.threadID
            }
        }
        return nil
    }

    /// A readable name for the work a worker runs: `serial queue 'label'`, with where a work item running on it was
    /// created (`serial queue 'db' (WorkItem created at Handlers/Search.swift:42)`), `WorkerPool.run from
    /// Handlers/Search.swift:42`, or `a job (no queue)` when nothing is known (by the queue core's address, looked
    /// up among the live queues; call it outside every lock of the runtime).
    static func describeSubject(
        _ subject: UInt,
        origin: UnitOrigin = .none,
        in queues: [QueueCore]? = nil
    ) -> String {
        guard subject != 0 else { return origin.description ?? "a job (no queue)" }
        let item = origin.kind == .workItem ? origin.description.map { " (\($0))" } ?? "" : ""
        for queue in queues ?? RuntimeRegistry.queues()
        where objectAddress(queue) == subject {
            return (queue.isSerial ? "serial queue '" : "concurrent queue '") + queue.label + "'" + item
        }
        return "a queue that is gone" + item
    }
}
