// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import Synchronization

/// The slow `sync` (this queue and its target chain acquired on the calling thread), the relayed `sync` (the closure
/// handed to a queue whose work must run on the main thread), and the deadlock checks and diagnoses on the way.
extension QueueCore {
    /// The slow `sync`: acquires this queue and its target chain (diagnosing deadlocks), runs `body` inline, releases.
    func syncSlow<R>(_ context: ThreadContext, barrier: Bool, _ body: () throws -> R) rethrows -> R {
        if needsMainThread && !context.pointee.isMainThread {
            return try relaySync(context, barrier: barrier, body, rescue: { throw $0 })
        }
        if poolCore.isStopped && word.load() & QueueState.hasItems != 0 && lock.withLock({ !items.isEmpty }) {
            // A timed shutdown left tasks in this queue: they never run, so a sync behind them would never start.
            threadingFatal(
                "Threading: sync on queue '\(label)': its worker pool '\(poolCore.label)' was shut down with tasks of "
                    + "this queue left behind (shutdown(timeout:) timed out); they never run, so this sync could "
                    + "never start"
            )
        }
        let stall = SyncStall.watch(self)
        acquireSync(context, barrier: barrier, requestedOn: self)
        context.push(self, exclusive: barrier || isSerial, entry: true)
        var acquired = 1
        var next = target
        while let level = next {
            level.acquireSync(context, barrier: false, requestedOn: self)
            context.push(level, exclusive: level.isSerial, entry: false)
            acquired += 1
            next = level.target
        }
        stall?.started()
        defer {
            // Release deepest first, without allocating: walk down from self for each level (chains are short).
            var remaining = acquired
            while remaining > 0 {
                remaining -= 1
                context.pop()
                let releasesSelf = remaining == 0
                withLevel(remaining) { $0.releaseSync(barrier: releasesSelf ? barrier : false) }
            }
        }
        return try body()
    }

    /// `sync` by handing the closure to the queue and waiting (for queues whose work must run on the main thread).
    func relaySync<R>(
        _ context: ThreadContext,
        barrier: Bool,
        _ body: () throws -> R,
        rescue: (any Error) throws -> R
    ) rethrows -> R {
        _ = checkDeadlock(context, requested: self, barrier: barrier)
        return try MainThreadWait.syncing(context) {
            try relayAndWait(context, barrier: barrier, body, rescue: rescue)
        }
    }

    private func relayAndWait<R>(
        _ context: ThreadContext,
        barrier: Bool,
        _ body: () throws -> R,
        rescue: (any Error) throws -> R
    ) rethrows -> R {
        typealias Slot = (work: (() throws -> R)?, result: Result<R, any Error>?)
        let box = UnsafeMutablePointer<Slot>.allocate(capacity: 1)
        defer { box.deallocate() }
        withoutActuallyEscaping(body) { escapable in
            box.initialize(to: (escapable, nil))
            let slot = UnsafeSendableBox(box)
            let waiter = context
            context.prepareWait()
            let closure: () -> Void = {
                let box = slot.value
                box.pointee.result = Result { try box.pointee.work!() }
                box.pointee.work = nil  // drop the borrowed closure before the caller returns
                if self.needsMainThread { MainThreadWait.served(waiter) }
                grantWaiter(waiter)
            }
            enqueue(barrier ? .barrier(closure) : .task(closure))
            context.waitGranted(on: self)
        }
        let result = box.move().result!
        switch result {
        case .success(let value): return value
        case .failure(let error): return try rescue(error)
        }
    }

    /// Before blocking for `requested` (reached through this queue), traps if the calling thread already holds it.
    func checkDeadlock(_ context: ThreadContext, requested: QueueCore, barrier: Bool) -> QueueFrame? {
        guard let frame = context.frame(holding: self) else { return nil }
        if isSerial || barrier || frame.exclusive {
            diagnoseDeadlock(self, requested: requested, frame: frame, barrier: barrier, context)
        }
        return frame
    }
}

/// A `sync` that began while its queue, or a queue in its target chain, was suspended: it cannot start before that
/// queue is resumed. That is not provably a deadlock, even when the syncing thread made the suspension itself: any
/// thread holding the queue may call `resume()`, and releasing the queue's last handle resumes it. So the sync is not
/// stopped; but if it has not started after ``jobStallGraceNanoseconds`` (a second), one line on stderr names the
/// queue, the suspended queue and the waiting thread, instead of a silent hang.
///
/// Costs: on the slow `sync` path, one load of each chain level's state word; only a sync onto a suspended queue arms
/// the one-shot report (a delayed task on the global queue).
final class SyncStall: Sendable {
    private let begun = Atomic<Bool>(false)

    /// Arms the report if `core` or a queue it targets is suspended now; nil otherwise.
    static func watch(_ core: QueueCore) -> SyncStall? {
        var depth = 0
        while let suspended = core.withLevel(depth, { $0.word.load() & QueueState.suspended != 0 }) {
            if suspended {
                let current = core.withLevel(depth) { $0 }!  // retained: the report outlives the walk
                let stall = SyncStall()
                let thread = RuntimeThread.describeCurrent()
                let queue = current === core ? "" : " (which targets queue '\(current.label)')"
                let line =
                    "Threading: stalled wait: sync onto queue '\(core.label)'\(queue) on thread \(thread) has not "
                    + "started after a second: queue '\(current.label)' is suspended (suspend() not yet balanced by "
                    + "resume()); the sync starts only once a thread resumes it or releases its last handle"
                ConcurrentQueue.global().asyncAfter(delay: .nanoseconds(Int64(jobStallGraceNanoseconds))) {
                    if !stall.begun.load(ordering: .acquiring) {
                        RuntimeObservation.report(
                            .waitStalled,
                            .warning,
                            line,
                            ["queue": core.label, "thread": thread]
                        )
                    }
                }
                return stall
            }
            depth += 1
        }
        return nil
    }

    /// The sync acquired its queues: no report.
    func started() { begun.store(true, ordering: .releasing) }
}

/// A value that crosses to the queue's thread while its owner waits for it (used by relayed `sync`).
struct UnsafeSendableBox<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}

/// Prints a deadlock diagnosis to stderr and stops the program.
func diagnoseDeadlock(
    _ held: QueueCore,
    requested: QueueCore,
    frame: QueueFrame,
    barrier: Bool,
    _ context: ThreadContext
) -> Never {
    let kind = barrier ? "sync(flags: .barrier)" : "sync"
    var message = "Threading: deadlock: \(kind) onto queue '\(requested.label)'"
    if held !== requested {
        message += " (which targets queue '\(held.label)')"
    }
    message += " from thread \(RuntimeThread.describeCurrent()), which is already executing queue '\(held.label)'"
    if !held.isSerial {
        message += frame.exclusive ? " (inside a barrier)" : " (a barrier sync from inside the same concurrent queue)"
    }
    message += "; this thread's queue stack: \(context.stackDescription)."
    message += " The sync could never start, so the program stops instead of hanging."
    threadingFatal(message)
}

/// Prints the diagnosis of a wait that could never end to stderr and stops the program: the calling thread waits, in
/// `wait` (such as `Job "a".waitUntilFinished()`), for something that needs what this very thread is running to end
/// first (see ``RunningEntry``). `reason` says why it cannot end.
func diagnoseWaitDeadlock(_ wait: String, reason: String, _ context: ThreadContext) -> Never {
    var message = "Threading: deadlock: \(wait) on thread \(RuntimeThread.describeCurrent())"
    if let running = context.runningDescription { message += ", which is running \(running)" }
    message += ": \(reason); this thread's queue stack: \(context.stackDescription)."
    message += " The wait could never end, so the program stops instead of hanging."
    threadingFatal(message)
}
