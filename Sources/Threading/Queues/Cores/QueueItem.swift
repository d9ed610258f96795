// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import Synchronization

/// Something waiting in a queue.
enum QueueItem {
    /// An `async` closure.
    case task(() -> Void)
    /// An `async(flags: .barrier)` closure (concurrent queues).
    case barrier(() -> Void)
    /// A job of an actor whose executor is this serial queue: run on the queue's core as executor. The job itself
    /// is the payload (a pointer), so an actor hop allocates nothing.
    case actorJob(UnownedJob)
    /// A thread blocked in `sync`, to be granted the queue (it then runs its closure on its own thread).
    case syncWaiter(ThreadContext, barrier: Bool)
    /// A serial queue that targets this queue and has work: drain it while holding this queue (unless the child's
    /// shutdown count claimed the drain first, see ``SerialCore/drainClaim``).
    case childDrain(SerialCore)
    /// A started item of a concurrent queue that targets this queue.
    indirect case childTask(ConcurrentCore, QueueItem, barrier: Bool)

    var isBarrier: Bool {
        switch self {
        case .barrier: true
        case .syncWaiter(_, let barrier): barrier
        default: false
        }
    }

    /// Whether the item is a thread waiting in `sync` (the one kind of item that a stopped pool's queue still grants).
    var isSyncWaiter: Bool {
        if case .syncWaiter = self { true } else { false }
    }

    /// Whether the item is a task the user submitted (what a shutdown counts): not a thread waiting in `sync`, not
    /// a child queue's drain (its tasks are the child's own).
    var isTask: Bool {
        switch self {
        case .task, .barrier, .actorJob, .childTask: true
        case .syncWaiter, .childDrain: false
        }
    }
}

/// A started item that either a pool worker or a thread waiting for it runs: whoever claims it first.
/// Only the winner of `claim()` touches `item`, so the closure is released as soon as it ran.
final class ItemClaim: @unchecked Sendable {
    private var item: QueueItem?
    private let claimed = Atomic<Bool>(false)

    init(_ item: QueueItem) { self.item = item }

    /// The item, for the one caller that claims it first; nil for everybody else.
    func claim() -> QueueItem? {
        guard claimed.compareExchange(expected: false, desired: true, ordering: .acquiringAndReleasing).exchanged
        else { return nil }
        defer { item = nil }
        return item
    }
}
