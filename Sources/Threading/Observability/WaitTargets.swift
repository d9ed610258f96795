// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import CThreading

// What each kind of wait target says in a snapshot: its description and, where the library knows it, the thread
// that must act for a wait on it to end. Read only by snapshots, with the target retained.

extension MutexLock: WaitTarget {
    var waitTargetDescription: String { describe() }
    var waitOwnerThreadID: Int32? {
        pthreadMutex == nil ? nonzero(cthr_lock_owner(word)) : nil  // a pthread mutex keeps its owner inside
    }
}

extension RecursiveLock: WaitTarget {
    var waitTargetDescription: String { describe() }
    var waitOwnerThreadID: Int32? { nonzero(cthr_lock_owner(futexLock)) }
}

extension ReadWriteLock: WaitTarget {
    var waitTargetDescription: String { describe() }
    /// The writer; readers are not recorded, so a wait behind readers names nobody.
    var waitOwnerThreadID: Int32? { nonzero(cthr_rwlock_writer(rwlock)) }
}

extension SpinLock: WaitTarget {
    var waitTargetDescription: String { describe() }
    var waitOwnerThreadID: Int32? { nonzero(cthr_spin_owner(spin)) }
}

extension ConditionVariable: WaitTarget {
    var waitTargetDescription: String { "ConditionVariable at \(ObjectIdentifier(self))" }
    var waitOwnerThreadID: Int32? { nil }
}

extension Semaphore: WaitTarget {
    var waitTargetDescription: String { "Semaphore at \(ObjectIdentifier(self)) (value \(value))" }
    var waitOwnerThreadID: Int32? { nil }
}

extension PosixThread: WaitTarget {
    var waitTargetDescription: String {
        WaitCycleFinder.describeThread(box.threadID.load(ordering: .acquiring), name ?? "")
    }
    var waitOwnerThreadID: Int32? { nonzero(UInt32(bitPattern: box.threadID.load(ordering: .acquiring))) }
}

extension Job: WaitTarget {
    var waitTargetDescription: String { description }
}

extension JobQueueCore: WaitTarget {
    var waitTargetDescription: String { description }
}

extension WorkGroup: WaitTarget {
    var waitTargetDescription: String { diagnosticName }
}

extension WorkItem: WaitTarget {
    var waitTargetDescription: String { diagnosticName }
}

extension QueueCore: WaitTarget {
    var waitTargetDescription: String { "queue '\(label)'" }
    /// The thread running the queue's current work (from the pools-and-queues registry).
    var waitOwnerThreadID: Int32? { RuntimeRegistry.runningThread(ofQueue: self) }
}

/// `id` as a thread id, nil when 0 (no owner).
private func nonzero(_ id: UInt32) -> Int32? {
    id == 0 ? nil : Int32(bitPattern: id)
}
