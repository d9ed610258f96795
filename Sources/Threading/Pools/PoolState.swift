// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import CThreading
import Synchronization

/// A pool's life: which submissions it takes, and what its stopping threads do.
enum PoolLife {
    /// It takes work from every thread.
    case running
    /// A shutdown began: only threads of the pool may still submit (see ``PoolCore/isAccepting(_:)``).
    case draining
    /// Every run queue is closed and every thread exits. `exited` holds the threads that exited, for the
    /// shutting-down thread to join; once `joinerGone`, it no longer joins and late exits detach themselves.
    case stopped(exited: [pthread_t], joinerGone: Bool)

    /// The value of ``PoolHints/life``.
    var hint: Int {
        switch self {
        case .running: PoolHints.lifeRunning
        case .draining: PoolHints.lifeDraining
        case .stopped: PoolHints.lifeStopped
        }
    }

    var isStopped: Bool {
        if case .stopped = self { return true }
        return false
    }
}

/// The pool's monitor thread (extra slots for blocking the pool cannot see, saturation).
enum MonitorState {
    /// Not started: the next submission starts it.
    case notStarted
    /// It ticks (every ``PoolCore/monitorTickNanoseconds``).
    case running
    /// It sleeps on ``PoolCore/monitorWord`` until a submission wakes it (no work was pending), or until the
    /// longest-idle worker comes due to retire (``PoolState/monitorDue``).
    case sleeping

    /// The value of ``PoolHints/monitor``.
    var hint: Int {
        switch self {
        case .notStarted: 0
        case .running: 1
        case .sleeping: 2
        }
    }
}

/// Whether work waits while every thread the pool may have is busy (the monitor's view; see
/// ``PoolCore/checkSaturation(_:pending:)``).
enum SaturationState {
    /// Not saturated.
    case clear
    /// Saturated since this `CLOCK_MONOTONIC` time, not yet for the grace period.
    case since(UInt64)
    /// Saturated for longer than the grace period: counted in ``PoolState/saturations``.
    case counted
}

/// Everything of a pool that its lock guards: reached only through ``PoolLock/withLock(_:)`` (or, across
/// `fork()`, through the fork handlers that hold the lock), so no field of it is ever read or written without the
/// lock, and the hints the lock-free paths read are derived from it in one place (``PoolHints/publish(from:)``).
struct PoolState {
    /// The pool's thread count without extra slots (`cores` of ``PoolCore``).
    let cores: Int
    /// Pool threads alive.
    var threads = 0
    /// Active workers: running a unit or searching for one.
    var running = 0
    /// Workers inside a blocking hook (out of ``running``).
    var blocked = 0
    /// Slots the monitor added above `cores` for blocking the pool cannot see.
    var extraSlots = 0
    /// The most threads alive at once since the last reset.
    var peakThreads = 0
    /// Parked workers: a CPU pool's most recently parked last, a blocking pool's first (wakers take the last entry:
    /// see ``PoolCore/park(_:_:counted:)``).
    var idle: [PoolWorker] = []
    /// Workers the monitor took off the idle list to exit (``WorkerWake/retire``) that have not left yet: still
    /// counted in ``threads``.
    var retiring = 0
    /// A CPU pool's workers woken for work (``WorkerWake/forWork``) that have not yet left their park: each will look
    /// for work, so it covers one queued unit, as a searching worker does, and the monitor's tick and later
    /// submissions wake no second worker for it however long the scheduler keeps it from running. A blocking pool
    /// counts its woken workers in ``PoolSearchers`` instead (see `PoolIdle.swift`).
    var wokenForWork = 0
    /// Slots a thread held and gave back; a thread takes one of these first, else the next slot never made
    /// (``PoolCore/slotBound``), so the made slots stay the prefix `0..<slotBound`.
    var freeSlots: [Int] = []
    var life = PoolLife.running
    var monitor = MonitorState.notStarted
    /// While the monitor sleeps: when it wakes to retire the longest-idle worker (`UInt64.max`: it does not).
    var monitorDue = UInt64.max
    var saturation = SaturationState.clear
    /// When the last saturation warning was reported (0: never).
    var lastSaturationWarning: UInt64 = 0
    /// Saturation episodes that outlasted the grace period, and warnings reported for them.
    var saturations = 0
    var saturationWarnings = 0
    /// Between the fork handlers only: the forking thread's slot if it is a worker of this pool (else -1), and the
    /// free slots the child starts with, made by the prepare handler (see ``PoolCore/forkChild(_:)``).
    var forkSlot = -1
    var forkFreeSlots: [Int] = []

    /// Storage for the `exited` list of ``PoolLife/stopped(exited:joinerGone:)``, made with the pool: the array type
    /// exists before any `fork()` (a forked child that shuts a pool down must not ask the runtime for a new type).
    var exitedReserve: [pthread_t] = []

    /// The state of a new pool of `cores` threads, with room for `reserving` idle workers and exits.
    init(cores: Int, reserving: Int) {
        self.cores = cores
        idle.reserveCapacity(reserving)
        exitedReserve.reserveCapacity(reserving)
    }

    /// Workers that may be active at once.
    var limit: Int { cores + extraSlots }

    /// Counts a thread about to be created, as active.
    mutating func addThread() {
        threads += 1
        peakThreads = Swift.max(peakThreads, threads)
        running += 1
    }

    /// Stops the pool (no-op when it stopped already).
    mutating func stop() {
        if life.isStopped { return }
        life = .stopped(exited: exitedReserve, joinerGone: false)
        exitedReserve = []
    }

    /// The calling pool thread exits: a stopped pool's shutting-down thread joins it; otherwise nobody does, so it
    /// detaches itself.
    mutating func leave() {
        guard case .stopped(var exited, false) = life else {
            _ = cthr_thread_detach(cthr_thread_self())
            return
        }
        life = .stopped(exited: [], joinerGone: false)  // unshared, so the append below does not copy
        exited.append(cthr_thread_self())
        life = .stopped(exited: exited, joinerGone: false)
    }

    /// The exited threads to join now; with `done`, the joiner goes (late exits detach themselves).
    mutating func takeExited(done: Bool) -> [pthread_t] {
        guard case .stopped(let exited, let gone) = life else { return [] }
        life = .stopped(exited: [], joinerGone: gone || done)
        return exited
    }
}

/// The hints the pool's lock-free paths read (submission, parking, shutdown checks): each one a function of
/// ``PoolState``, stored by ``publish(from:)`` only. Sequentially consistent: a submitter pushes, then reads them;
/// a worker that parks publishes, then looks for work (see ``PoolCore/park(_:_:)``).
final class PoolHints: Sendable {
    static let lifeRunning = 0
    static let lifeDraining = 1
    static let lifeStopped = 2

    /// ``PoolState/running``.
    let running = Atomic<Int>(0)
    /// ``PoolState/limit``.
    let limit: Atomic<Int>
    /// The number of parked workers.
    let idle = Atomic<Int>(0)
    /// ``MonitorState/hint``.
    let monitor = Atomic<Int>(0)
    /// ``PoolLife/hint``.
    let life = Atomic<Int>(PoolHints.lifeRunning)

    init(limit: Int) { self.limit = Atomic(limit) }

    /// Stores every hint that differs from `synced` (lock held). Called when a lock section ends, and inside one
    /// where a check must see its own change published first (a parking worker, the monitor going to sleep: they pass
    /// `&synced`). Each field is read through the pointer: a `PoolState` passed by value would be copied first, a
    /// retain and a release of each of its arrays per lock section.
    @inline(__always)
    func publish(from synced: UnsafeMutablePointer<PoolState>) {
        store(running, synced.pointee.running)
        store(idle, synced.pointee.idle.count)
        store(limit, synced.pointee.limit)
        store(monitor, synced.pointee.monitor.hint)
        store(life, synced.pointee.life.hint)
    }

    @inline(__always)
    private func store(_ hint: borrowing Atomic<Int>, _ value: Int) {
        if hint.load(ordering: .relaxed) != value { hint.store(value, ordering: .sequentiallyConsistent) }
    }
}

/// A pool's lock with the state it guards (``PoolState``) in the same object, and the hints derived from it:
/// the only way to the state is ``withLock(_:)``.
final class PoolLock: @unchecked Sendable {
    private let lock = RuntimeLock.make()
    /// The guarded state, in memory of its own (the fork handlers reach it through a pointer while they hold the
    /// lock across `fork()`; see ``PoolCore/forkChild(_:)``).
    private let synced: UnsafeMutablePointer<PoolState>
    let hints: PoolHints
    /// Times the lock was taken (statistics: the task path takes it only to wake or park).
    let acquisitions = Atomic<UInt64>(0)

    init(cores: Int, reserving: Int) {
        synced = .allocate(capacity: 1)
        synced.initialize(to: PoolState(cores: cores, reserving: reserving))
        hints = PoolHints(limit: cores)
    }

    deinit {
        synced.deinitialize(count: 1)
        synced.deallocate()
    }

    /// Runs `body` with the state, under the lock; then publishes the hints and unlocks.
    @inline(__always)
    func withLock<Result>(_ body: (inout PoolState) throws -> Result) rethrows -> Result {
        lock.lock()
        acquisitions.wrappingAdd(1, ordering: .relaxed)
        defer {
            hints.publish(from: synced)
            lock.unlock()
        }
        return try body(&synced.pointee)
    }

    // MARK: fork()

    /// The prepare handler takes the lock and keeps it across `fork()` (see ``PoolCore/forkPrepare()``); the state,
    /// for the fork handlers only, while they hold it.
    func lockForFork() -> UnsafeMutablePointer<PoolState> {
        lock.lock()
        return synced
    }

    /// The state, for the parent and child fork handlers, which hold the lock the prepare handler took.
    var heldAcrossFork: UnsafeMutablePointer<PoolState> { synced }

    /// Publishes the hints and releases the lock the prepare handler took (parent and child handlers).
    func unlockAfterFork() {
        hints.publish(from: synced)
        lock.unlock()
    }
}
