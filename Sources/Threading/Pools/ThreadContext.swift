// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import CThreading
import Synchronization

/// One entry of a thread's execution stack: a queue the thread is executing on behalf of.
///
/// `exclusive` is true for a serial queue or a barrier (nobody else may run on that queue meanwhile); `entry` is
/// true for the queue a closure was submitted to (false for target queues acquired on its behalf).
/// `queue` is not retained: the thread holds the queue (it runs its work) for as long as the frame is on its stack.
struct QueueFrame {
    unowned(unsafe) var queue: QueueCore
    var exclusive: Bool
    var entry: Bool
}

/// A unit of work whose end a thread can wait for, while a thread runs it: a job's body, a work item's closure, a task of
/// a group (see ``RunningEntry``).
enum RunningUnit {
    /// The body of a synchronous ``Job`` (an asynchronous one may be finished by another thread while its body runs,
    /// so it is not recorded).
    case job(Unmanaged<Job>)
    /// The closure of a ``WorkItem``.
    case item(Unmanaged<WorkItem>)
    /// A task submitted with `async(group:)`: the group counts it until the task returns.
    case group(Unmanaged<WorkGroup>)

    /// The unit's object address (for identity checks without retaining it).
    var address: UnsafeRawPointer {
        switch self {
        case .job(let job): UnsafeRawPointer(job.toOpaque())
        case .item(let item): UnsafeRawPointer(item.toOpaque())
        case .group(let group): UnsafeRawPointer(group.toOpaque())
        }
    }
}

/// One entry of a thread's running list: a unit the thread is running, and the one it runs it inside (the entry
/// below). Entries live on the running thread's stack, for as long as the unit runs (``SchedulerThread/running(_:_:)``).
///
/// A wait that would block looks at this list (and at the queue frames) first: a unit cannot end while its own
/// thread waits inside it, so waiting for it, or for anything that needs it to end, could never return. That is how
/// a job, an item or a group waited on from its own body is diagnosed at the wait, in the manner of `sync` onto the
/// current queue. The list is read only on that slow path; recording costs a store on the way in and out.
struct RunningEntry {
    let unit: RunningUnit
    let outer: UnsafeMutablePointer<RunningEntry>?
}

/// The pools' and queues' part of a thread's record (``ThreadRecord``, the substrate's, which holds it in its one
/// slot, ``ThreadRecordSlot``): the stack of queues the thread is executing (for deadlock diagnosis, ``QueueCore``
/// "is current" and specifics), the jobs, items and group tasks it is running (``RunningEntry``, for the diagnosis
/// of waits that could never end), the parker the thread waits on in a queue's `sync` (``Parker``), the pool worker
/// it is, if any, and its shard.
///
/// Heap-allocated on the thread's first use of a queue or pool and only touched by its own thread (other threads
/// only store to and wake ``parker``), so it is accessed through a pointer without exclusivity checks; freed with
/// the record at thread exit.
struct ThreadState: ~Copyable {
    var depth: Int
    var capacity: Int
    var frames: UnsafeMutablePointer<QueueFrame>
    /// The thread's parker for `sync` waits (see ``Parker``). Other threads grant and offer help through it.
    let parker: Parker
    /// A started item of a concurrent queue offered to this thread while it waits in that queue (parker `helpOffered`), as
    /// a claim: the queue may also leave it to the next `sync` caller, and whoever claims first runs it.
    var helpItem: (core: ConcurrentCore, claim: ItemClaim, barrier: Bool)?
    /// The pool worker running on this thread, or nil.
    var worker: Unmanaged<PoolWorker>?
    /// The innermost unit (job, item, group task) this thread is running, or nil; see ``RunningEntry``.
    var running: UnsafeMutablePointer<RunningEntry>?
    /// The thread's number, handed out in creation order: it picks the shared shard the thread submits to
    /// (``PoolCore``), so producers spread over the shards round-robin.
    let shard: Int
    /// The thread's record, which holds this part.
    let record: RuntimeThreadRecord

    /// Whether this is the process's main thread (or the thread tests designated as such): the record's.
    var isMainThread: Bool { record.pointee.isMainThread }
    /// The thread's wait record: the record's.
    var waitRecord: ThreadWaitRecord { record.pointee.waitRecord }
}

typealias ThreadContext = UnsafeMutablePointer<ThreadState>

/// The calling thread's ``ThreadState``, in the slot of its record.
enum SchedulerThread {
    /// The calling thread's state, created on first use (with its record, if the thread has none yet).
    @inline(__always)
    static var current: ThreadContext {
        let record = RuntimeThread.current
        if let upper = record.pointee.upper { return upper.part.assumingMemoryBound(to: ThreadState.self) }
        return makeCurrent(record)
    }

    /// The next thread's ``ThreadState/shard``.
    private static let nextShard = Atomic<Int>(0)

    @inline(never)
    private static func makeCurrent(_ record: RuntimeThreadRecord) -> ThreadContext {
        let state = ThreadContext.allocate(capacity: 1)
        let capacity = 16
        state.initialize(
            to: ThreadState(
                depth: 0,
                capacity: capacity,
                frames: .allocate(capacity: capacity),
                parker: .allocate(),
                helpItem: nil,
                worker: nil,
                running: nil,
                shard: nextShard.add(1, ordering: .relaxed).oldValue,
                record: record
            )
        )
        record.pointee.upper = ThreadRecordSlot(
            part: UnsafeMutableRawPointer(state),
            heldQueues: { HeldQueues($0.assumingMemoryBound(to: ThreadState.self)) },
            release: { raw in
                let state = raw.assumingMemoryBound(to: ThreadState.self)
                state.pointee.frames.deallocate()
                state.deinitialize(count: 1)
                state.deallocate()
            }
        )
        return state
    }

    /// Runs `body` with `unit` recorded as what the calling thread runs (innermost), for the diagnosis of waits that
    /// could never end (see ``RunningEntry``). The entry lives on this stack frame; nothing is allocated.
    @inline(__always)
    static func running<R>(_ unit: RunningUnit, _ body: () throws -> R) rethrows -> R {
        let context = current
        let outer = context.pointee.running
        var entry = RunningEntry(unit: unit, outer: outer)
        return try withUnsafeMutablePointer(to: &entry) { pointer in
            context.pointee.running = pointer
            defer { context.pointee.running = outer }
            return try body()
        }
    }
}

extension HeldQueues {
    /// The queues the thread with `context` holds exclusively now (its own thread only).
    init(_ context: ThreadContext) {
        self.init()
        var index = context.pointee.depth
        while index > 0 && outer == 0 {
            index -= 1
            let frame = context.pointee.frames[index]
            guard frame.exclusive else { continue }
            let address = objectAddress(frame.queue)
            if innermost == 0 { innermost = address } else if address != innermost { outer = address }
        }
    }
}

extension UnsafeMutablePointer where Pointee == ThreadState {
    @inline(__always)
    func push(_ queue: QueueCore, exclusive: Bool, entry: Bool) {
        if pointee.depth == pointee.capacity { grow() }
        (pointee.frames + pointee.depth).initialize(
            to: QueueFrame(queue: queue, exclusive: exclusive, entry: entry)
        )
        pointee.depth += 1
    }

    @inline(__always)
    func pop() {
        pointee.depth -= 1
    }

    @inline(never)
    private func grow() {
        let newCapacity = pointee.capacity * 2
        let frames = UnsafeMutablePointer<QueueFrame>.allocate(capacity: newCapacity)
        frames.moveInitialize(from: pointee.frames, count: pointee.depth)
        pointee.frames.deallocate()
        pointee.frames = frames
        pointee.capacity = newCapacity
    }

    /// The innermost queue a running closure was submitted to, or nil outside any queue.
    var currentQueue: QueueCore? {
        var index = pointee.depth - 1
        while index >= 0 {
            let frame = pointee.frames[index]
            if frame.entry { return frame.queue }
            index -= 1
        }
        return nil
    }

    /// The frame holding `queue`, innermost first, or nil.
    func frame(holding queue: QueueCore) -> QueueFrame? {
        let index = frameIndex(holding: queue)
        return index >= 0 ? pointee.frames[index] : nil
    }

    /// The index of the innermost frame holding `queue`, or -1 (the fork handlers' form of ``frame(holding:)``,
    /// with no optional: see ``ForkRegistry`` on the runtime's types in a child).
    /// The queue on `queue`'s path to the pool (itself, then its targets) that this thread holds exclusively (a
    /// serial queue it runs, a barrier), if any: work queued on `queue` cannot start before this thread lets it go.
    func exclusiveHold(onPathOf queue: QueueCore) -> QueueCore? {
        var level: QueueCore? = queue
        while let current = level {
            if let frame = frame(holding: current), frame.exclusive { return current }
            level = current.target
        }
        return nil
    }

    func frameIndex(holding queue: QueueCore) -> Int {
        var index = pointee.depth - 1
        while index >= 0 {
            if pointee.frames[index].queue === queue { return index }
            index -= 1
        }
        return -1
    }

    /// Whether this thread is running `unit` (see ``RunningEntry``): a wait for it from here could never end.
    func isRunning(_ unit: AnyObject) -> Bool {
        let target = UnsafeRawPointer(Unmanaged.passUnretained(unit).toOpaque())
        var entry = pointee.running
        while let current = entry {
            if current.pointee.unit.address == target { return true }
            entry = current.pointee.outer
        }
        return false
    }

    /// The synchronous jobs this thread is running, innermost first (see ``RunningEntry``).
    var runningJobs: [Job] {
        var jobs: [Job] = []
        var entry = pointee.running
        while let current = entry {
            if case .job(let job) = current.pointee.unit { jobs.append(job.takeUnretainedValue()) }
            entry = current.pointee.outer
        }
        return jobs
    }

    /// The group of the innermost `async(group:)` task this thread is running (for ``MainThreadWait``).
    var innermostGroup: WorkGroup? {
        var entry = pointee.running
        while let current = entry {
            if case .group(let group) = current.pointee.unit { return group.takeUnretainedValue() }
            entry = current.pointee.outer
        }
        return nil
    }

    /// What this thread is running, innermost first, for a diagnosis (`the body of Job "a", inside a task of
    /// WorkGroup 0x…`), or nil when it runs none of these.
    var runningDescription: String? {
        var names: [String] = []
        var entry = pointee.running
        while let current = entry {
            switch current.pointee.unit {
            case .job(let job): names.append("the body of \(job.takeUnretainedValue())")
            case .item(let item): names.append("the closure of \(item.takeUnretainedValue().diagnosticName)")
            case .group(let group): names.append("a task of \(group.takeUnretainedValue().diagnosticName)")
            }
            entry = current.pointee.outer
        }
        return names.isEmpty ? nil : names.joined(separator: ", inside ")
    }

    /// Labels of the queues on this thread's stack, outermost first.
    var stackDescription: String {
        var labels: [String] = []
        for index in 0..<pointee.depth {
            let frame = pointee.frames[index]
            let core = frame.queue
            labels.append("'\(core.label)'" + (frame.entry ? "" : " (as target)"))
        }
        return labels.isEmpty ? "(none)" : labels.joined(separator: " -> ")
    }
}
