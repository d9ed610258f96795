// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import Synchronization

// The pool's idle protocol: which workers will look for work without being woken, and which must be woken.
//
// Four counts carry it. Three change only under the pool lock (``PoolLock``) and are fields of the lock-guarded
// ``PoolState``: `running` (workers holding a running slot), `idle` (the parked workers, a list) and `wokenForWork` (a
// CPU pool's workers woken for work that have not yet left their park). The lock-free paths read `running` and the
// idle count only through the hints ``PoolHints/publish(from:)`` derives from that state. The fourth,
// ``PoolSearchers``, is read by submitters without the lock, so it is an atomic with named transitions.
//
// A worker's own word (``WorkerParker``) says why it was woken (``WorkerWake``): a waker takes the worker off the idle
// list, gives it a running slot and counts it (in `wokenForWork` or ``PoolSearchers``) under the pool lock, then
// stores the reason (a release store, read with an acquire load by the worker) and wakes it after the lock.
//
// A CPU pool's worker counts as searching only while it spins; a blocking pool's worker whenever it searches, and a
// blocking pool makes a thread only for a unit no searcher covers: its rules are in `PoolCore+Blocking.swift`.

/// Why a parked pool worker's word (``WorkerParker``) changed: the value a waker stores before it wakes the worker.
enum WorkerWake: UInt32 {
    /// Parked or about to park: nobody woke the worker (a timed-out park reads this).
    case parked = 0
    /// Woken with a running slot and no count to leave (shutdown's wake-up of every idle worker).
    case woken = 1
    /// A blocking pool's worker woken as a searcher: its waker counted it in ``PoolSearchers``.
    case searching = 2
    /// A CPU pool's worker woken for queued work: its waker counted it in ``PoolState/wokenForWork``, which the
    /// worker leaves under the pool lock once it is out of its park.
    case forWork = 3
    /// Taken off the idle list by the monitor after ``PoolCore/idleTimeoutNanoseconds`` idle, while the pool had more
    /// threads than it keeps: the worker exits (counted in ``PoolState/retiring`` until it has left the pool).
    case retire = 4
}

/// A pool worker's park word: a futex word whose values are the cases of ``WorkerWake``. It owns its word
/// (``FutexWord``, fixed heap storage that never moves), so it is `~Copyable`; `@unchecked Sendable`: every access
/// is atomic.
struct WorkerParker: ~Copyable, @unchecked Sendable {
    private let word = FutexWord.allocate(WorkerWake.parked.rawValue)

    /// Why the worker was woken, or ``WorkerWake/parked`` (acquire).
    @inline(__always)
    func load() -> WorkerWake { WorkerWake(rawValue: word.load())! }

    /// Stores why the worker is woken (release); ``WorkerWake/parked`` by the worker itself before it parks.
    @inline(__always)
    func store(_ wake: WorkerWake) { word.store(wake.rawValue) }

    /// Sleeps while the word says ``WorkerWake/parked``, until `deadline` (CLOCK_MONOTONIC ns); false when the
    /// deadline passed.
    @inline(__always)
    func waitWhileParked(deadline: UInt64) -> Bool {
        word.wait(expected: WorkerWake.parked.rawValue, deadline: deadline)
    }

    /// Wakes the worker sleeping on the word.
    @inline(__always)
    func wake() { word.wake() }
}

/// The pool's searching workers: those that will look for work without being woken (a CPU pool's spinners, a
/// blocking pool's searchers; see the protocol above). Changed with or without the pool lock and read by submitters
/// without it, so every transition is sequentially consistent: a submitter pushes its unit, then reads the count; a
/// searcher that stops decrements, then looks for work. Either the submitter sees the searcher and leaves the unit to
/// it, or the searcher sees the unit.
struct PoolSearchers: ~Copyable {
    private let count = Atomic<Int>(0)

    /// A worker starts searching (a spinner starts, a blocking pool's worker starts, is woken or ends a unit).
    @inline(__always)
    func start() { count.add(1, ordering: .sequentiallyConsistent) }

    /// A searching worker stops (it took a unit, gave up its spin, is back on the idle list, or its thread was
    /// refused).
    @inline(__always)
    func stop() { count.subtract(1, ordering: .sequentiallyConsistent) }

    /// The workers searching now.
    @inline(__always)
    var current: Int { count.load(ordering: .sequentiallyConsistent) }

    /// In a forked child: the parent's searchers are not there.
    func resetInForkChild() { count.store(0, ordering: .relaxed) }
}

/// The idle protocol's transitions under the pool lock (inside a ``PoolLock/withLock(_:)`` section).
extension PoolState {
    /// Takes the most recently parked worker off the idle list, gives it a running slot and stores `reason` in its
    /// word (``WorkerWake/forWork`` is counted in ``wokenForWork`` here; a blocking pool's caller counts a
    /// ``WorkerWake/searching`` worker in ``PoolSearchers``); nil when no worker is idle. The caller wakes it
    /// (``WorkerParker/wake()``).
    mutating func wakeIdleWorker(_ reason: WorkerWake) -> PoolWorker? {
        guard let worker = idle.popLast() else { return nil }
        worker.parker.store(reason)
        if reason == .forWork { wokenForWork += 1 }
        running += 1
        return worker
    }

    /// Shutdown's wake-up: every idle worker gets a running slot and ``WorkerWake/woken``; returns them, for the
    /// caller to wake after the lock.
    mutating func wakeEveryIdleWorker() -> [PoolWorker] {
        let woken = idle
        idle.removeAll()
        for worker in woken {
            worker.parker.store(.woken)
            running += 1
        }
        return woken
    }

    /// A worker blocks in a wait the runtime sees (``BlockingHook``): it gives its running slot up meanwhile.
    mutating func workerBlocks(_ worker: PoolWorker) {
        worker.blocked = true
        running -= 1
        blocked += 1
    }

    /// The wait ``workerBlocks(_:)`` announced returned: the worker takes a running slot again.
    mutating func workerUnblocks(_ worker: PoolWorker) {
        worker.blocked = false
        running += 1
        blocked -= 1
    }
}
