// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import CThreading

/// The pool's side of a `JobQueue`: its members, ready rings, running count and suspension.
///
/// Jobs reference the core (`Job.owner`), never the public handle, so the handle's life is the user's alone:
/// when its last handle goes, `handleReleased()` lifts a suspension nobody could lift any more, and the core —
/// kept alive by its jobs while it holds them — finishes its work and is then freed. (Each member references the
/// core as its `owner` until it ends, and the job's end holds the core until it delivered the end: the core and its
/// members keep each other alive, with no reference of the core to itself to take and give back per job; the core
/// is registered weakly with the fork registry, so each of its retains and releases is the slower kind.)
///
/// Lock order: `lock` may be held while taking `JobGraph.lock`, never the reverse; no user code runs under either.
/// `@unchecked Sendable`: all mutable state is guarded by `lock`, except `idle`, an atomic futex word.
final class JobQueueCore: @unchecked Sendable, CustomStringConvertible, ForkParticipant, PoolMember {
    let name: String
    let qos: QoS
    /// The pool the jobs run on.
    let poolCore: PoolCore

    let lock = RuntimeLock.make()
    // Guarded by `lock`, which is what makes their accesses exclusive: they are not checked again at run time (each
    // check is a call into the runtime, several per job).
    @exclusivity(unchecked) private var maxValue: Int
    @exclusivity(unchecked) private var suspended = false
    @exclusivity(unchecked) private var running = 0
    /// The jobs accepted and not ended, in no order: each member knows its index here (``Job/memberIndex``), so
    /// joining and leaving are an append and a swap with the last one, with no hashing.
    @exclusivity(unchecked) private var members: [Job] = []
    /// Guarded by `lock`, between the fork handlers only: `members`, listed by the prepare handler.
    @exclusivity(unchecked) private var forkMembers: [Job] = []
    /// Ready jobs per priority (index 0 = veryLow). Entries may be stale (a job that was cancelled, or moved back
    /// to waiting by a new dependency): starting checks the job's state.
    private let ready = RuntimeRings<Job>(count: Job.Priority.allCases.count)
    /// The public handle while one is alive, so `Job.queue` gives back the object the user holds.
    private weak var handle: JobQueue?
    /// How many handles are alive (more than one only while a released handle's deinit races `currentHandle()`).
    private var handleCount = 0
    /// A futex flag (``FutexWord/isFlagSet``), set while the queue has no jobs: what `waitUntilAllFinished` sleeps on.
    let idle = FutexWord.allocate(1)

    init(name: String, qos: QoS, maxConcurrentJobs: Int, poolCore: PoolCore = .shared) {
        self.name = name
        self.qos = qos
        self.poolCore = poolCore
        self.maxValue = maxConcurrentJobs
        ForkRegistry.register(self, as: .jobQueue)
    }

    deinit {
    }

    /// Same text as the handle's, so diagnostics read the same whichever one they name.
    var description: String { "JobQueue \"\(name)\"" }

    // MARK: Handles

    /// Registers `handle` (from its initializer) as a live handle of this core.
    func adopt(_ handle: JobQueue) {
        lock.withLock {
            handleCount += 1
            self.handle = handle
        }
    }

    /// The live handle, or a new one when the user released every handle (a running job asking for its queue).
    func currentHandle() -> JobQueue {
        lock.lock()
        defer { lock.unlock() }
        if let handle { return handle }
        let made = JobQueue(core: self)
        handleCount += 1
        handle = made
        return made
    }

    /// A handle was deinitialized. When it was the last one, nobody can call `resume()` any more: lift the
    /// suspension so the held jobs run (and the core, freed of them, goes away).
    func handleReleased() {
        lock.lock()
        handleCount -= 1
        guard handleCount == 0, suspended else {
            lock.unlock()
            return
        }
        suspended = false
        let starting = startLocked()
        lock.unlock()
        schedule(starting)
    }

    // MARK: The handle's operations

    var maxConcurrentJobs: Int { lock.withLock { maxValue } }

    func setMaxConcurrentJobs(_ value: Int) {
        lock.lock()
        maxValue = value
        let starting = startLocked()
        lock.unlock()
        schedule(starting)
    }

    var jobCount: Int { lock.withLock { members.count } }

    /// Jobs accepted and not ended (for the pool's shutdown).
    var pendingTaskCount: Int { jobCount }

    /// Jobs accepted and not started once the pool stopped (a started job that never ran is counted by the pool,
    /// which dropped its unit and ended the job). They never run: each ends cancelled here, on the shutdown's thread,
    /// so that its waiters, dependents and completion handlers are not left waiting for ever.
    func abandonAtStop() -> Int {
        lock.lock()
        let count = members.count - running
        let accepted = members
        lock.unlock()
        for job in accepted { job.endUnrun(started: false) }
        return count
    }

    var jobs: [Job] { lock.withLock { members } }

    var isSuspended: Bool { lock.withLock { suspended } }

    /// Runs `body` with the queue's lock held and its slots: how many jobs execute now and `maxConcurrentJobs`
    /// (for the diagnosis of waits that could never end, ``JobWait``).
    func withSlots<R>(_ body: (_ used: Int, _ width: Int) -> R) -> R {
        lock.withLock { body(running, maxValue) }
    }

    /// Adds `job` (see `JobQueue.addJob(_:)`); traps when it belongs to a queue or already started.
    func add(_ job: Job) {
        if !tryAdd(CollectionOfOne(job), operation: "addJob(_:)") { poolCore.refuse("\(self).addJob(_:)") }
    }

    /// Adds `jobs` under one hold of the lock, then starts what may start: none of them can start before the last
    /// one is in, so priority decides among them (see `JobQueue.addJobs(_:waitUntilFinished:)`). Traps like
    /// `add(_:)`, naming `operation` and the first job that cannot be added.
    func add(_ jobs: [Job], operation: StaticString = "addJobs(_:waitUntilFinished:)") {
        if !tryAdd(jobs, operation: operation) { poolCore.refuse("\(self).\(operation)") }
    }

    /// Adds `jobs` as ``add(_:operation:)`` does if the pool takes work from the calling thread, deciding under the
    /// queue's lock (the shutdown counts the queue's jobs under it); false, with nothing added, when it refused.
    /// Misuse (a job of another queue) traps either way.
    func tryAdd(_ jobs: some Collection<Job>, operation: StaticString) -> Bool {
        lock.lock()
        guard poolCore.isAccepting(SchedulerThread.current) else {
            lock.unlock()
            return false
        }
        if jobs.count == 1, let job = jobs.first {
            if let started = addLocked(job, operation, startingIfFree: true) {
                lock.unlock()
                schedule(started)
                return true
            }
        } else {
            for job in jobs { addLocked(job, operation) }
        }
        let starting = startLocked()
        lock.unlock()
        schedule(starting)
        return true
    }

    /// Makes `job` a member (ready ones go to their ring), unless it was cancelled before. `lock` held.
    ///
    /// `startingIfFree`: a ready job that ``startLocked()`` would start at once (a slot is free and no other job is
    /// ready: it would be the only one in the rings) is claimed here instead, in the same hold of `JobGraph.lock`, and
    /// returned to be scheduled: one graph-lock round trip and a ring's append and pop fewer per job added alone.
    @discardableResult
    private func addLocked(
        _ job: Job,
        _ operation: StaticString,
        startingIfFree: Bool = false
    ) -> Starting.Entry? {
        let mayStart = startingIfFree && canStartAtOnceLocked  // before the graph lock (the process's), to hold it less
        JobGraph.lock.lock()
        if job.stateValue.isEnded && job.cancelled {
            JobGraph.lock.unlock()
            return nil
        }
        guard job.owner == nil, job.stateValue == .waiting || job.stateValue == .ready else {
            let why = job.owner.map { "it already belongs to \($0)" } ?? "it is already \(job.stateValue)"
            JobGraph.lock.unlock()
            lock.unlock()
            threadingFatal("\(self).\(operation): cannot add \(job) because \(why)")
        }
        job.owner = self
        let isReady = job.stateValue == .ready
        let priority = job.priorityValue
        var started: Starting.Entry?
        if mayStart && isReady {
            job.stateValue = .executing
            started = (job, job.qosValue ?? qos, job.stateObservers)
        }
        JobGraph.lock.unlock()
        job.memberIndex = members.count
        members.append(job)
        if members.count == 1 { idle.clearFlag() }
        if started != nil {
            running += 1
        } else if isReady {
            ready[priority.index].append(job)
        }
        return started
    }

    /// Whether a job made ready now would be the next to start, at once: the queue runs (not suspended, its pool not
    /// stopped), a slot is free, and no job waits in the rings (stale entries included: they take the usual path).
    /// `lock` held.
    private var canStartAtOnceLocked: Bool {
        guard !suspended, running < maxValue, !poolCore.isStopped else { return false }
        var index = 0
        while index < ready.count {
            if !ready[index].isEmpty { return false }
            index += 1
        }
        return true
    }

    func suspend() {
        lock.withLock { suspended = true }
    }

    func resume() {
        lock.lock()
        suspended = false
        let starting = startLocked()
        lock.unlock()
        schedule(starting)
    }

    // MARK: fork()

    /// `fork()` prepare handler (see ``ForkRegistry``): holds the queue lock across the fork, and lists the members
    /// for the child handler, which must not iterate a dictionary (see ``ForkRegistry`` on the runtime's types).
    func forkPrepare() {
        lock.lock()
        forkMembers = members
    }

    /// `fork()` handler in the parent.
    func forkParent() {
        forkMembers = []
        lock.unlock()
    }

    /// `fork()` handler in the child (one thread; this lock and `JobGraph.lock` held by the prepare handlers): the
    /// parent's jobs never run here. They leave the queue, which is then empty and idle, and are marked so that an
    /// untimed wait for one of them stops with a message instead of hanging; they are abandoned, never released
    /// (see ``ForkRegistry``).
    func forkChild(_ forking: ThreadContext) {
        var index = 0
        while index < forkMembers.count {
            let job = forkMembers[index]
            if !job.stateValue.isEnded { job.abandonedByFork = true }
            _ = Unmanaged.passRetained(job)  // abandoned: the job and its closure are never released here
            index += 1
        }
        members = []
        index = 0
        while index < ready.count {
            ready[index].abandon()
            index += 1
        }
        running = 0
        idle.storeRelaxed(1)
        lock.unlock()
    }

    // MARK: PoolCore hooks

    /// A job of this queue became ready (its last dependency ended).
    func jobBecameReady(_ job: Job) {
        let priority = JobGraph.lock.withLock { job.priorityValue }
        lock.lock()
        guard isMemberLocked(job) else {
            lock.unlock()
            return
        }
        ready[priority.index].append(job)
        let starting = startLocked()
        lock.unlock()
        schedule(starting)
    }

    /// A job of this queue ended (ran, or was cancelled before it started): the first half, before anyone waiting
    /// for the job is woken, so that ``jobCount`` and `waitUntilAllFinished` never count an ended job. It leaves the
    /// members (and frees its slot); the queue goes idle when it was the last. Starting the next jobs waits for
    /// `startAfterJobEnded()`, after the job's dependents became ready, so that they compete by priority for the
    /// freed slot.
    ///
    /// - Returns: Whether ``startAfterJobEnded()`` may find a job to start: false when the queue is idle now (no
    ///   member left, so nothing is ready; a job added or made ready later is started by that call).
    func jobEnded(_ job: Job, wasRunning: Bool) -> Bool {
        lock.lock()
        if wasRunning { running -= 1 }
        removeMemberLocked(job)
        let nowIdle = members.isEmpty
        var wakeIdleWaiters = false
        if nowIdle {
            // Stale ready entries of cancelled jobs would keep them alive; none can start any more.
            for index in ready.indices where !ready[index].isEmpty { _ = ready[index].removeAll() }
            wakeIdleWaiters = idle.setFlagFindingSleepers()
        }
        lock.unlock()
        if wakeIdleWaiters { idle.wake(Int32.max) }
        return !nowIdle
    }

    /// Whether `job` is a member (accepted, not ended). `lock` held.
    private func isMemberLocked(_ job: Job) -> Bool {
        let index = job.memberIndex
        return index < members.count && members[index] === job
    }

    /// Takes `job` out of the members: the last member moves into its place. `lock` held.
    private func removeMemberLocked(_ job: Job) {
        guard isMemberLocked(job) else { return }
        let index = job.memberIndex
        let last = members.removeLast()
        if index < members.count {
            last.memberIndex = index
            members[index] = last
        }
    }

    /// The second half of a job's end: starts the ready jobs the freed slot allows.
    func startAfterJobEnded() {
        lock.lock()
        let starting = startLocked()
        lock.unlock()
        schedule(starting)
    }

    /// The jobs ``startLocked()`` claimed, each with its lane and its state observers (read when the job became
    /// executing, under `JobGraph.lock`, so that running it takes that lock no more). The first is kept inline: a
    /// freed slot starts one job, and that allocates nothing here.
    private struct Starting {
        typealias Entry = (job: Job, lane: QoS, observers: [@Sendable (Job, Job.State) -> Void])
        var first: Entry?
        var more: [Entry] = []

        mutating func append(_ entry: Entry) {
            if first == nil { first = entry } else { more.append(entry) }
        }
    }

    /// Claims ready jobs while slots are free. `lock` held.
    private func startLocked() -> Starting {
        var starting = Starting()
        // A stopped pool refuses the units: the ready jobs stay counted by `abandonAtStop()` instead.
        guard !suspended, !poolCore.isStopped else { return starting }
        var index = ready.count - 1
        while running < maxValue && index >= 0 {
            guard let job = ready[index].popFirst() else {
                index -= 1
                continue
            }
            let claimed: Starting.Entry? = JobGraph.lock.withLock {
                guard job.stateValue == .ready, job.owner === self else { return nil }
                job.stateValue = .executing
                return (job, job.qosValue ?? qos, job.stateObservers)
            }
            if let claimed {
                running += 1
                starting.append(claimed)
            }
        }
        return starting
    }

    private func schedule(_ starting: Starting) {
        guard let first = starting.first else { return }
        schedule(first)
        for entry in starting.more { schedule(entry) }
    }

    private func schedule(_ entry: Starting.Entry) {
        poolCore.schedule(.queuedJob(entry.job, observers: entry.observers), lane: entry.lane.rawValue)
    }
}
