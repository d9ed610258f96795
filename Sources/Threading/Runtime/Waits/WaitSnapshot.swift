// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

/// One thread the library made or runs work on, as a runtime snapshot saw it.
///
/// The threads listed are those that have a record in the library: every thread a ``PosixThread`` or a
/// ``WorkerPool`` started, the timer thread, and every other thread that submitted work to a queue or waited in one
/// of the library's waits (the record is made on first use and removed when the thread exits).
///
/// Exactness: ``threadID`` and ``name`` are exact (the name is read from the kernel, so a name set by any means
/// shows). ``waitingFor`` and ``heldLocks`` are a racy but safe view: each thread's wait is read under that
/// thread's own record lock, so it is a wait the thread was in at that instant, but two threads are not read at the
/// same instant.
public struct ThreadSnapshot: Sendable {
    /// The thread's kernel thread id (what `gettid()`, `ps -L` and debuggers show).
    public let threadID: Int32
    /// The thread's name as the kernel has it (15 bytes at most on Linux), or `""` when it has none.
    public let name: String
    /// The wait the thread is blocked in, or `nil` when it is not blocked in a wait the library sees.
    public let waitingFor: WaitSnapshot?
    /// Descriptions of the named locks this thread holds (`MutexLock "cache"`), and of unnamed locks it holds that
    /// another thread waits for.
    public let heldLocks: [String]
}

/// A wait a thread is blocked in.
///
/// The library records a wait on the slow path only, when the thread is about to block: a lock that was taken
/// without waiting never shows here.
public struct WaitSnapshot: Sendable {
    /// What the thread waits in, one of: `"lock"` (``MutexLock``, ``RecursiveLock``, ``SpinLock``), `"read lock"`
    /// and `"write lock"` (``ReadWriteLock``), `"condition"` (``ConditionVariable``, ``Monitor``), `"semaphore"`,
    /// `"sync"` (a `sync` onto a queue), `"join"` (`PosixThread.join()`), `"job"` (a ``Job`` or ``JobQueue``
    /// wait), `"group"` (`WorkGroup.wait()`), `"work item"` (`WorkItem.wait()`).
    public let kind: String
    /// What it waits for, as diagnostics name it: `MutexLock "cache"`, `SerialQueue 'db'`, `thread "loader"`.
    public let target: String
    /// The thread that must act for the wait to end, when the library knows it: the holder of a lock (the writer
    /// of a read-write lock), the thread running the queue's current work for a `sync`, the joined thread for a
    /// join; `nil` otherwise (a semaphore or condition has no owner). Read when the snapshot is taken.
    public let ownerThreadID: Int32?
    /// How long the thread has been waiting, in nanoseconds on the monotonic clock.
    public let waitedNanoseconds: UInt64
}

/// A lock that is held: a named lock (one created with a `name:`), or any lock another thread waits for.
///
/// Named locks are registered when created and unregistered when destroyed (only named ones: an unnamed lock costs
/// nothing), so every held named lock is listed; the holder is read from the lock word, where it lives anyway.
/// ``ReadWriteLock`` read holds are not listed (readers are not recorded); its writer is.
public struct HeldLockSnapshot: Sendable {
    /// The lock as diagnostics name it (`MutexLock "cache"`, or the type and address when unnamed).
    public let name: String
    /// The kernel thread id of the holder (the writer, for a ``ReadWriteLock``).
    public let holderThreadID: Int32
    /// How long the holder has kept the lock from its waiters, as far as the library can tell: the longest wait of
    /// a thread that found this same holder when it began waiting. `nil` when nobody waits for the lock: an
    /// uncontended acquisition records nothing, so its time is unknown.
    public let heldNanoseconds: UInt64?
    /// How many threads wait for the lock in a wait the library sees.
    public let waiters: Int
}

/// Threads that wait for each other in a cycle, so that none of their waits can end: each waits for a lock the
/// next one holds, in a `sync` on a queue whose running work is the next one's, or to join the next one.
///
/// ```text
/// Wait cycle among 2 threads (none of these waits can end):
///   thread "a" (tid 101) holds MutexLock "x" and waits in sync on queue 'q', whose running work is on
///     thread "b" (tid 102)
///   thread "b" (tid 102) waits to lock MutexLock "x", held by thread "a" (tid 101)
/// ```
public struct WaitCycle: Sendable, CustomStringConvertible {
    /// The kernel thread ids of the threads in the cycle, in the order of the cycle (each waits for the next; the
    /// last for the first), starting at the smallest id.
    public let threadIDs: [Int32]
    /// One line per thread: what it holds that the previous thread waits for, what it waits for and who holds that.
    public let lines: [String]
    /// The threads and the start of each one's wait: the same cycle of the same waits has the same key (reported
    /// once).
    let key: String

    /// The cycle as a heading line and one indented line per thread (no trailing newline), printable as is.
    public var description: String {
        (["Wait cycle among \(threadIDs.count) threads (none of these waits can end):"] + lines.map { "  " + $0 })
            .joined(separator: "\n")
    }
}
