// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

/// A one-shot or repeating timer that submits its handler to a queue, driven by the pool's single timer thread.
///
/// The timer thread keeps every deadline in one heap and only enqueues the handler when a deadline passes, so a
/// slow handler delays nothing but its own queue.
///
/// **At most one firing waits.** A repeating timer has at most one firing queued or running at any time: the next
/// deadline is armed only once the handler of the last firing returned, at the next multiple of the interval after
/// that (the deadlines missed meanwhile are coalesced into it, as libdispatch's timer sources merge them). So a
/// handler slower than the interval runs back to back, never overlapping itself (on a concurrent queue too), and an
/// interval shorter than the queue can serve (`.nanoseconds(1)`) costs one queued firing, not a growing backlog.
///
/// **``cancel()`` means no firing starts afterwards.** A firing already queued checks the timer when it starts and
/// does nothing if it was cancelled; only a handler that had already started when ``cancel()`` was called may still
/// be running (call ``cancel()`` from the handler's queue, or `sync` on it after, to be past it).
///
/// Once the queue's ``WorkerPool`` was shut down, a deadline that passes is not queued (it is counted in
/// ``WorkerPoolStatistics/cancelledFirings``, see <doc:Pools>), and a repeating timer stops there.
///
/// **Keep the timer.** The timer runs as long as a reference to it exists: releasing the last reference cancels it,
/// as ``cancel()`` does, so `_ = QueueTimer(...)` makes a timer that is cancelled as the statement ends and never
/// fires (unless its first deadline was already due then). The initializer is deliberately not
/// `@discardableResult`: the compiler warns about an unused timer, and the `_ =` that silences it is the mistake.
/// Store it (`self.timer = QueueTimer(...)`) and call ``cancel()`` or drop it when done. Why this rule rather than a
/// timer that lives on by itself or a trap: a timer that outlived every reference could never be cancelled (a leak
/// with a side effect every interval), and a trap or warning on release could not tell the mistake from an owner
/// torn down before its timer fired, which is correct code. `DispatchSourceTimer` users know the same rule.
///
/// Reference semantics; `Sendable`: its state is the pool's timer entry, which synchronises itself.
public final class QueueTimer: Sendable {
    private let entry: TimerEntry

    /// Starts a timer.
    ///
    /// - Parameters:
    ///   - queue: Where the handler runs.
    ///   - delay: Time until the first firing.
    ///   - interval: Time between firings; nil for a one-shot timer. Must be positive (traps otherwise). A firing
    ///     that comes due while the previous one is still queued or running is skipped (see the type's
    ///     documentation).
    ///   - handler: The closure submitted at each firing.
    ///
    /// The timer fires only while it is referenced: keep the result (see the type's documentation). Traps when the
    /// queue's pool was shut down (except on a thread of that pool while it drains, see ``WorkerPool``);
    /// ``start(queue:delay:repeating:handler:)`` is the form that returns nil instead.
    public init(
        queue: any WorkQueue,
        delay: Duration,
        repeating interval: Duration? = nil,
        handler: @escaping @Sendable () -> Void
    ) {
        let core = queue.queueCore
        let step = QueueTimer.step(interval)
        if !core.poolCore.requireAccepting("QueueTimer on queue '\(core.label)'") {
            // A task of a pool a timed shutdown gave up on: the timer is counted as dropped and never fires.
            entry = TimerEntry(deadline: .max, interval: 0) { _ in }
            entry.cancelled.store(true, ordering: .releasing)
            return
        }
        entry = QueueTimer.schedule(core, delay, step, handler)
    }

    private init(entry: TimerEntry) {
        self.entry = entry
    }

    /// Starts a timer as ``init(queue:delay:repeating:handler:)`` does, unless the queue's pool no longer takes
    /// work: the recoverable form for code that may run while the pool shuts down.
    ///
    /// A timer whose pool shuts down later stops firing (firings due after the shutdown are counted in
    /// ``WorkerPoolStatistics/cancelledFirings``).
    ///
    /// - Parameters:
    ///   - queue: Where the handler runs.
    ///   - delay: Time until the first firing.
    ///   - interval: Time between firings; nil for a one-shot timer. Must be positive.
    ///   - handler: The closure submitted at each firing.
    /// - Returns: The running timer (keep it: releasing it cancels the timer), or nil when the queue's pool was
    ///   shut down.
    public static func start(
        queue: any WorkQueue,
        delay: Duration,
        repeating interval: Duration? = nil,
        handler: @escaping @Sendable () -> Void
    ) -> QueueTimer? {
        let core = queue.queueCore
        let step = QueueTimer.step(interval)
        guard core.poolCore.isAccepting(SchedulerThread.current) else { return nil }
        return QueueTimer(entry: schedule(core, delay, step, handler))
    }

    /// The interval in nanoseconds (0: one-shot); traps unless it is positive.
    private static func step(_ interval: Duration?) -> UInt64 {
        let step = interval.map { monotonicNanoseconds($0) } ?? 0
        require(interval == nil || step > 0, "QueueTimer(repeating: \(interval!)): the interval must be positive")
        return step
    }

    private static func schedule(
        _ core: QueueCore,
        _ delay: Duration,
        _ step: UInt64,
        _ handler: @escaping @Sendable () -> Void
    ) -> TimerEntry {
        let entry = TimerEntry(deadline: monotonicDeadline(after: delay), interval: step) { entry in
            // The timer thread calls this at a deadline; the entry is out of its heap until `rearm`, so this
            // firing is the only one waiting.
            core.enqueueFiring(
                .task {
                    // Checked as the firing starts, not only when it was queued: after cancel() nothing starts.
                    // A firing the parent queued and a fork() left running here belongs to the parent.
                    if entry.isCancelled { return }
                    handler()
                    TimerThread.shared.rearm(entry)
                }
            )
        }
        TimerThread.shared.schedule(entry)
        return entry
    }

    deinit {
        // A timer nobody references can never be cancelled: stop it.
        entry.cancelled.store(true, ordering: .releasing)
    }

    /// Stops the timer: no firing starts after this call returns (one already queued does nothing when its turn
    /// comes); a handler already running finishes.
    public func cancel() {
        entry.cancelled.store(true, ordering: .releasing)
    }

    /// Whether ``cancel()`` was called (or, in a child process, the timer was the parent's; see <doc:Misuse>).
    public var isCancelled: Bool {
        entry.isCancelled
    }
}
