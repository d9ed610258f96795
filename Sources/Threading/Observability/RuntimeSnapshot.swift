// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import CThreading

/// The state of the whole runtime at one moment, taken from any thread without stopping it: every pool, queue and
/// job queue, every thread the library made or runs work on, every named lock that is held, and the wait cycles
/// found among them.
///
/// ```swift
/// let snapshot = RuntimeSnapshot.capture()
/// for pool in snapshot.pools where pool.isSaturated { print(pool.label, pool.runners.first?.work ?? "") }
/// print(snapshot)  // the dump: one block per pool and per thread, the longest runner first
/// ```
///
/// What is exact and what is a view: each pool's counts are read under the pool's lock, so they are consistent
/// with each other (as ``WorkerPoolStatistics`` is); each queue's depth is read under that queue's lock. Between two
/// pools, two queues, or a queue and its pool, time passes: the snapshot as a whole is a racy but safe view, never
/// a consistent cut. What a worker runs and for how long comes from the stall watchdog's last sample: durations
/// are "at least", to one watchdog tick (10 to 100 ms), and work that started since is shown without a duration.
/// A closure run by `sync` runs on the caller's thread, not on a pool worker: a queue shows as running then, without a
/// thread (the caller's wait, if it blocks, is in ``threads``).
///
/// No lock is held across the capture: each pool's and each queue's lock is held only while its own counts are
/// read, so a submission waits at most for that read; creating a queue or a pool may wait for the list of them to
/// be copied. A value type, so it is `Sendable`.
public struct RuntimeSnapshot: Sendable, CustomStringConvertible {
    /// When the snapshot was taken, in nanoseconds of `CLOCK_MONOTONIC`.
    public let monotonicNanoseconds: UInt64
    /// Every live worker pool, oldest first.
    public let pools: [PoolSnapshot]
    /// Every live queue, oldest first.
    public let queues: [QueueSnapshot]
    /// Every live job queue, oldest first.
    public let jobQueues: [JobQueueSnapshot]
    /// Every thread the library made or runs work on, with what it waits for.
    public let threads: [ThreadSnapshot]
    /// Every named lock that is held.
    public let heldLocks: [HeldLockSnapshot]
    /// Threads that wait for each other in a cycle (none of their waits can end).
    public let cycles: [WaitCycle]
    /// The runtime's events dropped so far because the observer did not keep up
    /// (``RuntimeObservation/droppedEvents``).
    public let droppedEvents: UInt64

    /// Takes a snapshot of the runtime now.
    ///
    /// Not async-signal-safe: it allocates and takes the runtime's locks, so a call from a signal handler can
    /// deadlock (in `malloc`, or on a lock the interrupted code holds). To dump the runtime on a signal, use
    /// ``RuntimeDump/install(on:to:)``: its handler only writes a byte to a pipe, and a thread of the library takes
    /// the snapshot. A call from a handler that interrupted a capture on the same thread traps with a message
    /// saying so (on a thread that has used the library before: a queue, a wait, a pool); other calls from a
    /// handler cannot be detected cheaply and may hang.
    ///
    /// - Returns: The snapshot; ``description`` is its dump as text.
    /// - Complexity: O(pools × threads + queues + jobs); about a microsecond per queue.
    public static func capture() -> RuntimeSnapshot {
        // The thread's state if it has one (a thread that never used the library has none, and a capture makes
        // none: it would list the thread in every later snapshot). Without it, a re-entered capture goes undetected.
        let context = RuntimeThread.existing
        require(
            context?.pointee.isCapturingSnapshot != true,
            "Threading: RuntimeSnapshot.capture() on thread \(cthr_thread_id()), which is already inside capture(): "
                + "it was called from a signal handler that interrupted a capture. capture() is not "
                + "async-signal-safe (it allocates and takes the runtime's locks); to dump the runtime on a signal, "
                + "use RuntimeDump.install(on:to:), whose handler only writes a byte and whose thread takes the "
                + "snapshot"
        )
        context?.pointee.isCapturingSnapshot = true
        defer { context?.pointee.isCapturingSnapshot = false }
        let now = cthr_clock_now_ns()
        let poolCores = RuntimeRegistry.pools()
        let queueCores = RuntimeRegistry.queues()
        var runnersByPool: [ObjectIdentifier: [PoolObservation.Runner]] = [:]
        var pools: [PoolSnapshot] = []
        for core in poolCores {
            let runners = core.observation.runners(now: now)
            runnersByPool[ObjectIdentifier(core)] = runners
            pools.append(PoolSnapshot(core, runners: runners, queues: queueCores))
        }
        var queues: [QueueSnapshot] = []
        queues.reserveCapacity(queueCores.count)
        for core in queueCores {
            let address = objectAddress(core)
            let runner = runnersByPool[ObjectIdentifier(core.poolCore)]?.first { $0.subject == address }
            queues.append(QueueSnapshot(core, runner: runner))
        }
        let jobQueues = RuntimeRegistry.jobQueues().map(JobQueueSnapshot.init)
        let waits = WaitRegistry.capture()
        return RuntimeSnapshot(
            monotonicNanoseconds: now,
            pools: pools,
            queues: queues,
            jobQueues: jobQueues,
            threads: waits.threads,
            heldLocks: waits.heldLocks,
            cycles: waits.cycles,
            droppedEvents: RuntimeObservation.droppedEvents
        )
    }

    /// The dump: the snapshot as text a person reads (see the Observing article).
    public var description: String { RuntimeDump.format(self) }
}

/// A worker running a unit of a pool, in a ``RuntimeSnapshot``.
public struct RunnerSnapshot: Sendable, Hashable {
    /// The kernel thread id of the worker.
    public let threadID: Int32
    /// What it runs: `serial queue 'db'`, `concurrent queue 'io'` (with `(WorkItem created at File.swift:12)` while it
    /// runs a ``WorkItem``), `WorkerPool.run from Handlers/Search.swift:42` (the caller of ``WorkerPool/run(fileID:line:_:)``),
    /// `a task preferring this pool as its executor …`, or `a job (no queue)` when nothing more is known.
    public let work: String
    /// The label of the queue whose work it runs, or nil for a plain job.
    public let queueLabel: String?
    /// How long it has run the same unit or item, at least (to one watchdog tick; zero when it started since the
    /// last tick).
    public let runningFor: Duration
}

/// A worker pool in a ``RuntimeSnapshot``.
public struct PoolSnapshot: Sendable {
    /// The pool's label.
    public let label: String
    /// A CPU or a blocking pool.
    public let kind: WorkerPool.Kind
    /// The pool's counters, read together under its lock.
    public let statistics: WorkerPoolStatistics
    /// The units waiting in each lane that has some (workers' next slots included). Each run queue is read under its
    /// own lock, one after the other: exact per queue, a racy view across them, so the sum can differ from
    /// ``WorkerPoolStatistics/pending`` (read from the counters) by the units that moved meanwhile.
    public let queuedByLane: [QoS: Int]
    /// The lanes that have units waiting (the keys of ``queuedByLane``), highest first.
    public var queuedLanes: [QoS] { QoS.allCases.filter { queuedByLane[$0] != nil } }
    /// Whether every thread the pool may have is busy while work waits.
    public let isSaturated: Bool
    /// The pool's stall threshold, or nil when stall reports are off (``WorkerPool/stallThreshold``).
    public let stallThreshold: Duration?
    /// The workers running a unit, the longest-running first.
    public let runners: [RunnerSnapshot]

    init(_ core: PoolCore, runners: [PoolObservation.Runner], queues: [QueueCore]) {
        label = core.label
        kind = core.isBlocking ? .blocking : .cpu
        statistics = core.observedStatistics()
        var counts = [Int](repeating: 0, count: QoS.allCases.count)
        for index in 0..<core.shardCount { core.shards[index].addLaneCounts(to: &counts) }
        for index in 0..<core.slotBound.load(ordering: .acquiring) { core.slots[index].addLaneCounts(to: &counts) }
        var byLane: [QoS: Int] = [:]
        for lane in QoS.allCases where counts[lane.rawValue] > 0 { byLane[lane] = counts[lane.rawValue] }
        queuedByLane = byLane
        isSaturated =
            statistics.pending > 0 && statistics.threads >= statistics.maxThreads
            && statistics.running + statistics.blocked >= statistics.threads
        let threshold = core.observation.stallThreshold.load(ordering: .relaxed)
        stallThreshold = threshold == 0 ? nil : .nanoseconds(Int64(clamping: threshold))
        self.runners = runners.map { RunnerSnapshot($0, queues: queues) }
    }
}

extension RunnerSnapshot {
    init(_ runner: PoolObservation.Runner, queues: [QueueCore]) {
        threadID = runner.threadID
        work = RuntimeRegistry.describeSubject(runner.subject, origin: runner.origin, in: queues)
        queueLabel =
            queues.first { objectAddress($0) == runner.subject }?.label
        runningFor = .nanoseconds(Int64(clamping: runner.runningNanoseconds))
    }
}

/// A queue in a ``RuntimeSnapshot``.
public struct QueueSnapshot: Sendable, Hashable {
    /// What kind of queue it is.
    public enum Kind: String, Sendable, Hashable {
        /// A ``SerialQueue``.
        case serial
        /// A ``ConcurrentQueue``.
        case concurrent
        /// The ``MainQueue``.
        case main
    }

    /// The queue's label.
    public let label: String
    /// Serial, concurrent or main.
    public let kind: Kind
    /// The label of the pool its work runs on.
    public let poolLabel: String
    /// The queue's target queue's label, if it has one.
    public let targetLabel: String?
    /// Tasks queued and not started (read under the queue's lock).
    public let depth: Int
    /// Whether the queue is suspended.
    public let isSuspended: Bool
    /// Whether work of the queue runs now (a drain, an item, a barrier or a `sync` closure).
    public let isRunning: Bool
    /// The kernel thread id of the pool worker running its work, or nil (not running, or run by a `sync` caller).
    public let runningThreadID: Int32?
    /// How long that worker has run the same item, at least (nil without a worker).
    public let runningFor: Duration?

    init(_ core: QueueCore, runner: PoolObservation.Runner?) {
        label = core.label
        if let serial = core as? SerialCore {
            kind = serial.isMain ? .main : .serial
        } else {
            kind = .concurrent
        }
        poolLabel = core.poolCore.label
        targetLabel = core.target?.label
        depth = core.pendingTaskCount
        let word = core.word.load()
        isSuspended = word & QueueState.suspended != 0
        isRunning = word & QueueState.owned != 0 || (!core.isSerial && word >= QueueState.reader) || runner != nil
        runningThreadID = runner?.threadID
        runningFor = runner.map { .nanoseconds(Int64(clamping: $0.runningNanoseconds)) }
    }
}

/// A job queue in a ``RuntimeSnapshot``.
public struct JobQueueSnapshot: Sendable, Hashable {
    /// The job queue's name.
    public let name: String
    /// The label of the pool its jobs run on.
    public let poolLabel: String
    /// Jobs whose body runs now.
    public let executing: Int
    /// Jobs ready to start, waiting for a slot (``JobQueue/maxConcurrentJobs``) or a worker.
    public let ready: Int
    /// Jobs waiting for their dependencies.
    public let waitingForDependencies: Int
    /// The most jobs it runs at once.
    public let maxConcurrentJobs: Int
    /// Whether the job queue is suspended.
    public let isSuspended: Bool

    init(_ core: JobQueueCore) {
        name = core.name
        poolLabel = core.poolCore.label
        var executing = 0
        var ready = 0
        var waiting = 0
        for job in core.jobs {
            switch job.state {
            case .executing: executing += 1
            case .ready: ready += 1
            case .waiting: waiting += 1
            case .finished, .failed, .cancelled: break
            }
        }
        self.executing = executing
        self.ready = ready
        waitingForDependencies = waiting
        maxConcurrentJobs = core.maxConcurrentJobs
        isSuspended = core.isSuspended
    }
}
