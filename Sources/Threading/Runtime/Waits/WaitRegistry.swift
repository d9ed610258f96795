// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import CThreading

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The thread, wait and held-lock part of a runtime snapshot, and the wait cycles among them.
///
/// A capture takes the thread registry's lock (no thread starts or exits meanwhile), then each thread's record lock
/// for an instant, then the named-lock registry's lock; no wait and no submission waits for it longer than one
/// record read. Everything is resolved (descriptions, owners, names) outside those locks.
enum WaitRegistry {
    /// The threads with a record, the locks held, and the wait cycles found, as of now.
    ///
    /// Threads come sorted by thread id; held locks by holder, then name; cycles by their smallest thread id. A cycle
    /// is listed only when a second reading confirms it (see the comment at the confirmation), so a wait that ends
    /// while the snapshot is taken never shows as a cycle.
    static func capture() -> (threads: [ThreadSnapshot], heldLocks: [HeldLockSnapshot], cycles: [WaitCycle]) {
        let observed = ThreadRegistry.withRecords { records in records.map { ($0, $0.observe()) } }
        let named = NamedLockRegistry.held()
        let now = cthr_clock_now_ns()

        struct Resolved {
            let record: ThreadWaitRecord
            let threadID: Int32
            let name: String
            let wait: WaitObservation?
            let target: String
            let owner: Int32?
        }
        let threads = observed.sorted { $0.0.threadID < $1.0.threadID }.map { record, wait in
            Resolved(
                record: record,
                threadID: record.threadID,
                name: threadName(record.threadID),
                wait: wait,
                target: wait?.target.waitTargetDescription ?? "",
                owner: wait.flatMap { owner(of: $0, waitedBy: record.threadID, among: observed) }
            )
        }

        // Held locks: the named ones, then the unnamed ones some thread waits for.
        var held: [(id: ObjectIdentifier, name: String, holder: Int32)] = named.map {
            ($0.id, $0.description, $0.holder)
        }
        for thread in threads {
            guard let wait = thread.wait, wait.kind.isLock, let owner = thread.owner, owner != 0 else { continue }
            let id = ObjectIdentifier(wait.target)
            if !held.contains(where: { $0.id == id }) { held.append((id, thread.target, owner)) }
        }
        let heldLocks = held.map { lock in
            let waiters = threads.filter { thread in
                guard let wait = thread.wait, wait.kind.isLock else { return false }
                return ObjectIdentifier(wait.target) == lock.id
            }
            let keptOut = waiters.compactMap { thread -> UInt64? in
                guard let wait = thread.wait, wait.ownerAtStart == lock.holder else { return nil }
                return now &- min(now, wait.since)
            }
            return HeldLockSnapshot(
                name: lock.name,
                holderThreadID: lock.holder,
                heldNanoseconds: keptOut.max(),
                waiters: waiters.count
            )
        }
        .sorted { ($0.holderThreadID, $0.name) < ($1.holderThreadID, $1.name) }

        let snapshots = threads.map { thread in
            ThreadSnapshot(
                threadID: thread.threadID,
                name: thread.name,
                waitingFor: thread.wait.map { wait in
                    WaitSnapshot(
                        kind: wait.kind.name,
                        target: thread.target,
                        ownerThreadID: thread.owner,
                        waitedNanoseconds: now &- min(now, wait.since)
                    )
                },
                heldLocks: heldLocks.filter { $0.holderThreadID == thread.threadID }.map(\.name)
            )
        }
        let edges = threads.compactMap { thread -> WaitEdge? in
            guard let wait = thread.wait else { return nil }
            return WaitEdge(
                threadID: thread.threadID,
                threadName: thread.name,
                kind: wait.kind,
                target: thread.target,
                owner: thread.owner ?? 0,
                since: wait.since
            )
        }
        // Each thread's wait and its owner were read at different instants, so a cycle may be an artefact (a waiter
        // that got its lock meanwhile names itself as the owner). Confirm it: read the owners again, then the waits;
        // if every wait is still the same one (same target, same start) and every owner the same, then at the
        // latest start of those waits every thread was blocked in its wait holding what the previous one waits for
        // (a blocked thread releases nothing), so the cycle was real.
        let byThread = Dictionary(uniqueKeysWithValues: threads.map { ($0.threadID, $0) })
        let cycles = WaitCycleFinder.cycles(edges).filter { cycle in
            let members = cycle.threadIDs.compactMap { byThread[$0] }
            let owners = members.allSatisfy { member in
                member.wait.flatMap { owner(of: $0, waitedBy: member.threadID, among: observed) } == member.owner
            }
            return owners
                && members.allSatisfy { thread in
                    guard let before = thread.wait, let now = thread.record.observe() else { return false }
                    return now.since == before.since && now.target === before.target
                }
        }
        return (snapshots, heldLocks, cycles)
    }

    /// The thread that must act for `wait`, the wait of thread `waiter`, to end, read now.
    ///
    /// A `sync` wait's queue is held by the pool worker running its current work, or else by a thread that runs a
    /// `sync` closure of it (or an item) and is itself blocked in a wait, which recorded the queues it holds
    /// (``HeldQueues``): found among `observed`, the waits of this capture. A thread running a `sync` closure that is
    /// not blocked is not known (it records nothing off the slow path of a wait), and is in no cycle.
    ///
    /// A lock wait that finds the waiter's own id in the lock names nobody: the library's locks refuse to wait for
    /// a lock the caller holds (a relock traps before it waits), so the id is there for one of two passing reasons.
    /// The waiter has just taken the lock and not yet ended its wait record (a thread preempted there stays in that
    /// state as long as the scheduler likes, so a second reading does not tell it apart); or it is a writer that has
    /// claimed a ``ReadWriteLock`` and waits for its readers to leave, whom the lock does not record. Either would
    /// otherwise read as a cycle of one thread.
    private static func owner(
        of wait: WaitObservation,
        waitedBy waiter: Int32,
        among observed: [(ThreadWaitRecord, WaitObservation?)]
    ) -> Int32? {
        var owner = wait.target.waitOwnerThreadID
        if owner == nil && wait.kind == .sync {
            let queue = objectAddress(wait.target)
            owner =
                observed.first { record, other in
                    record.threadID != waiter && other?.holds.contains(queue) == true
                }?.0.threadID
        }
        return wait.kind.isLock && owner == waiter ? nil : owner
    }

    /// The kernel's name of thread `threadID` of this process (`/proc/self/task/<tid>/comm`), `""` when it has
    /// none or has exited.
    static func threadName(_ threadID: Int32) -> String {
        let descriptor = open("/proc/self/task/\(threadID)/comm", O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return "" }
        defer { close(descriptor) }
        var bytes = [UInt8](repeating: 0, count: 32)
        let count = bytes.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
        guard count > 0 else { return "" }
        var name = bytes[..<count]
        while name.last == UInt8(ascii: "\n") || name.last == 0 { name = name.dropLast() }
        return String(decoding: name, as: UTF8.self)
    }
}

/// Looks for wait cycles when a wait has lasted past its grace period, and reports each one once.
///
/// Runs on the waiting thread itself, on the slow path of its wait (a lock or join wait that has not ended after
/// ``WaitRecording/cycleGraceNanoseconds``), like the library's other stalled-wait reports: nothing runs
/// periodically, and nothing runs at all while no wait lasts that long. Every thread of a cycle that waits in a lock
/// or a join checks, so one of them reports it; the others find it reported already.
enum WaitCycleDetector {
    /// Guards `reported`; held across `fork()` (see `ThreadRegistry`). A leaf: nothing else is taken under it.
    static let lock = RuntimeLock.make()
    nonisolated(unsafe) private static var reported: [String] = []
    /// How many cycle keys are kept (the oldest are forgotten first; a cycle's waits never end, so a key that
    /// matters is recent).
    private static let keptKeys = 64

    /// Captures the waits and reports, once each, the cycles that `threadID` is part of.
    static func check(from threadID: Int32) {
        for cycle in WaitRegistry.capture().cycles where cycle.threadIDs.contains(threadID) {
            let isNew = lock.withLock {
                if reported.contains(cycle.key) { return false }
                if reported.count == keptKeys { reported.removeFirst() }
                reported.append(cycle.key)
                return true
            }
            guard isNew else { continue }
            RuntimeObservation.report(
                .waitCycle,
                .error,
                "Threading: wait cycle among threads \(cycle.threadIDs.map(String.init).joined(separator: ", ")): "
                    + cycle.lines.joined(separator: "; "),
                [
                    "threads": cycle.threadIDs.map(String.init).joined(separator: ","),
                    "cycle": cycle.description,
                ]
            )
        }
    }
}
