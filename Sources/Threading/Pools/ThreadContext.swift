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
/// below). Entries live on the running thread's stack, for as long as the unit runs (``RuntimeThread/running(_:_:)``).
///
/// A wait that would block looks at this list (and at the queue frames) first: a unit cannot end while its own
/// thread waits inside it, so waiting for it, or for anything that needs it to end, could never return. That is how
/// a job, an item or a group waited on from its own body is diagnosed at the wait, in the manner of `sync` onto the
/// current queue. The list is read only on that slow path; recording costs a store on the way in and out.
struct RunningEntry {
    let unit: RunningUnit
    let outer: UnsafeMutablePointer<RunningEntry>?
}

/// Per-thread state of the pool, reached through one pthread TSD key (`cthr_tsd_*`): the stack of queues the
/// thread is executing (for deadlock diagnosis, ``QueueCore`` "is current" and specifics), the jobs, items and group
/// tasks it is running (``RunningEntry``, for the diagnosis of waits that could never end), a futex word the thread
/// parks on when it waits for a queue, and the pool worker it is, if any.
///
/// Heap-allocated and only touched by its own thread (other threads only store to and wake ``parker``), so it is
/// accessed through a pointer without exclusivity checks.
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
    /// Whether this is the process's main thread (or the thread tests designated as such).
    var isMainThread: Bool
    /// The innermost unit (job, item, group task) this thread is running, or nil; see ``RunningEntry``.
    var running: UnsafeMutablePointer<RunningEntry>?
    /// The thread's number, handed out in creation order: it picks the shared shard the thread submits to
    /// (``PoolCore``), so producers spread over the shards round-robin.
    let shard: Int
    /// The thread's wait record (what it is blocked in, for snapshots), registered while the thread lives.
    let waitRecord: ThreadWaitRecord
    /// Whether the thread is inside ``RuntimeSnapshot/capture()``: a capture that finds it set was entered again on
    /// this thread, from a signal handler that interrupted the first, and traps instead of deadlocking.
    var isCapturingSnapshot = false
    /// Whether the runtime started this thread (a pool's worker or monitor, the watchdog, the timer, dump and
    /// event-delivery threads): its reports are handed off to the observer's thread (``RuntimeEventDelivery``).
    var isRuntimeThread = false
}

typealias ThreadContext = UnsafeMutablePointer<ThreadState>

enum RuntimeThread {
    /// The TSD key; its destructor frees a thread's state at thread exit.
    static let key: pthread_key_t = {
        var key = pthread_key_t()
        let code = cthr_tsd_create(&key) { raw in
            let state = raw.assumingMemoryBound(to: ThreadState.self)
            ThreadRegistry.unregister(state.pointee.waitRecord)
            state.pointee.frames.deallocate()
            state.deinitialize(count: 1)
            state.deallocate()
        }
        require(code == 0, "cthr_tsd_create failed for the worker pools: \(code)")
        return key
    }()

    /// The calling thread's state, created on first use.
    @inline(__always)
    static var current: ThreadContext {
        if let raw = cthr_tsd_get(key) {
            return raw.assumingMemoryBound(to: ThreadState.self)
        }
        return makeCurrent()
    }

    /// The next thread's ``ThreadState/shard``.
    private static let nextShard = Atomic<Int>(0)

    @inline(never)
    private static func makeCurrent() -> ThreadContext {
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
                isMainThread: isMainThread,
                running: nil,
                shard: nextShard.add(1, ordering: .relaxed).oldValue,
                waitRecord: ThreadRegistry.registerCurrent()
            )
        )
        let code = cthr_tsd_set(key, state)
        require(code == 0, "cthr_tsd_set failed for the worker pools: \(code)")
        return state
    }

    /// Kernel thread id of a thread tests treat as the main thread (0 = none). Swift Testing parks the real main
    /// thread in `dispatch_main`, so main-queue tests designate a thread of their own; see `designateMainForTesting`.
    static let testMainThreadID = Atomic<Int32>(0)

    /// Whether the calling thread is the main thread (or the designated test main thread).
    static var isMainThread: Bool {
        cthr_thread_is_main() || testMainThreadID.load(ordering: .relaxed) == cthr_thread_id()
    }

    /// Test hook: makes the calling thread count as the main thread for the pool until `undesignate...`.
    static func designateMainForTesting() {
        testMainThreadID.store(cthr_thread_id(), ordering: .relaxed)
        current.pointee.isMainThread = true
    }

    /// Test hook: ends `designateMainForTesting()` on the calling thread.
    static func undesignateMainForTesting() {
        testMainThreadID.store(0, ordering: .relaxed)
        current.pointee.isMainThread = cthr_thread_is_main()
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

    /// A readable name for the calling thread: its name (if any) and kernel thread id.
    static func describeCurrent() -> String {
        var buffer = [CChar](repeating: 0, count: Int(CTHR_THREAD_NAME_MAX) + 1)
        let code = buffer.withUnsafeMutableBufferPointer { cthr_thread_get_name($0.baseAddress, $0.count) }
        let name =
            code == 0 ? String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self) : ""
        let main = isMainThread ? ", main thread" : ""
        return "'\(name)' (tid \(cthr_thread_id())\(main))"
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

    /// Waits until another thread called `grantWaiter` for this thread.
    ///
    /// Parker protocol (``Parker/State``): the waiter spins briefly (yielding the CPU, so the thread it waits
    /// for can run even on few cores), then announces it sleeps (`waiting` → `sleeping`) and sleeps; the granter
    /// exchanges in `granted` and only makes the wake system call when it saw `sleeping`. A concurrent queue may
    /// offer a waiting thread an item queued *ahead of* it (`helpOffered`, see `ConcurrentCore.offerHelp`): the
    /// waiter would wait for that item anyway, so running it itself saves a pool hop; it then keeps waiting.
    ///
    /// `queue` is the queue a `sync` waits on: once the spin is over, the wait is recorded on the
    /// thread's wait record for snapshots (``WaitRecording``), so a wait that ends while spinning records nothing.
    func waitGranted(on queue: QueueCore) {
        for round in 0..<poolSpinRounds {
            switch pointee.parker.load() {
            case .granted: return
            case .grantedWithHelp:
                helpGranted()
                return
            case .helpOffered:
                help()
                continue
            case .waiting, .sleeping: break
            }
            if round >= 4 { _ = cthr_thread_yield() }
        }
        BlockingHook.willBlock()
        let record = WaitRecording.begin(.sync, on: queue, context: self)
        defer { WaitRecording.end(self, restoring: record) }
        while true {
            let state = pointee.parker.load()
            if state == .granted { break }
            if state == .grantedWithHelp {
                helpGranted()
                break
            }
            if state == .helpOffered {
                help()
                continue
            }
            if state == .waiting && !pointee.parker.compareExchange(.waiting, .sleeping) { continue }
            pointee.parker.wait(whileIn: .sleeping)
        }
        BlockingHook.didUnblock()
    }

    /// Runs the offered item (`helpOffered`). The slot is read and cleared before leaving that state: offers write it
    /// only in `waiting` and `sleeping`, so once the state is `waiting` again a new offer may fill it. If the grant
    /// arrived meanwhile (`grantedWithHelp`), the item is still ours to run, and the wait ends after it.
    private func help() {
        let offered = pointee.helpItem!
        pointee.helpItem = nil
        _ = pointee.parker.compareExchange(.helpOffered, .waiting)
        if let item = offered.claim.claim() { offered.core.runStarted(item, barrier: offered.barrier, self) }
    }

    /// Granted while an offered item was pending (`grantedWithHelp`): runs it unless `help()` already took it.
    private func helpGranted() {
        if let offered = pointee.helpItem {
            pointee.helpItem = nil
            if let item = offered.claim.claim() { offered.core.runStarted(item, barrier: offered.barrier, self) }
        }
    }

    /// Prepares ``waitGranted()``: must be called before the grant can be issued.
    @inline(__always)
    func prepareWait() {
        pointee.parker.prepare()
    }
}

/// Wakes a thread blocked in `waitGranted()` (a system call only when it is asleep).
@inline(__always)
func grantWaiter(_ waiter: ThreadContext) {
    while true {
        let state = waiter.pointee.parker.load()
        if state == .helpOffered {
            // An offered item is pending: overwriting the offer with `granted` would make the waiter return without
            // running it (a lost task). `grantedWithHelp` tells it to run the item, then return granted.
            if waiter.pointee.parker.compareExchange(.helpOffered, .grantedWithHelp) { return }
            continue  // the waiter took the item meanwhile (helpOffered -> waiting)
        }
        if waiter.pointee.parker.compareExchange(state, .granted) {
            if state == .sleeping { waiter.pointee.parker.wake() }
            return
        }
    }
}

/// Offers `waiter` (waiting in a queue behind `item`) to run `item`; false if it is not waiting now.
/// Called under the queue's lock, which also guards the waiter's presence in the queue.
func offerHelpToWaiter(
    _ waiter: ThreadContext,
    _ offer: (core: ConcurrentCore, claim: ItemClaim, barrier: Bool)
) -> Bool {
    while true {
        let state = waiter.pointee.parker.load()
        // Only while waiting (awake or asleep) is the slot free: with an offer pending the waiter may be reading it
        // (outside the queue lock); granted, it no longer waits.
        if state != .waiting && state != .sleeping { return false }
        waiter.pointee.helpItem = offer
        if waiter.pointee.parker.compareExchange(state, .helpOffered) {
            if state == .sleeping { waiter.pointee.parker.wake() }
            return true
        }
        waiter.pointee.helpItem = nil  // it went to sleep (waiting -> sleeping) meanwhile: try again
    }
}

/// A thread's parker for `sync` waits: a futex word whose values are the cases of ``State``, so the protocol's
/// states have names instead of numbers. It owns its word (``FutexWord``, fixed heap storage that never moves), so it
/// is `~Copyable`; the thread's state owns it and frees it at thread exit.
struct Parker: ~Copyable, @unchecked Sendable {
    /// The parker's states.
    enum State: UInt32 {
        /// Waiting, awake (spinning or about to sleep).
        case waiting = 0
        /// Granted: the wait is over.
        case granted = 1
        /// Waiting, asleep on the futex: a granter must wake it.
        case sleeping = 2
        /// An item queued ahead of the waiter is offered to it (in its `helpItem`): it runs it, then waits on.
        case helpOffered = 3
        /// Granted while an offered item was still pending: the waiter runs it, then returns.
        case grantedWithHelp = 4
    }

    let word: FutexWord

    static func allocate() -> Parker { Parker(word: .allocate(State.waiting.rawValue)) }

    /// The current state (acquire).
    @inline(__always)
    func load() -> State {
        State(rawValue: word.load())!
    }

    /// `from` → `to` if the state is `from` (acquire-release); whether it was.
    @inline(__always)
    func compareExchange(_ from: State, _ to: State) -> Bool {
        word.compareExchange(from.rawValue, to.rawValue).exchanged
    }

    /// Resets to `waiting` before a new wait (by the waiter, before anyone can grant it).
    @inline(__always)
    func prepare() { word.storeRelaxed(State.waiting.rawValue) }

    /// Sleeps while the state is `state`.
    @inline(__always)
    func wait(whileIn state: State) { word.wait(expected: state.rawValue) }

    /// Wakes the waiter sleeping on the parker.
    @inline(__always)
    func wake() { word.wake() }
}

/// Spin rounds (the later ones yielding the CPU) before a waiting thread sleeps on its futex.
let poolSpinRounds = 24
