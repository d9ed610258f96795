// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

/// A one-shot or repeating timer that submits its handler to a queue, driven by the engine's single timer thread.
///
/// The timer thread keeps every deadline in one heap and only enqueues the handler when a deadline passes, so a
/// slow handler delays nothing but its own queue. A repeating timer whose handler falls behind coalesces missed
/// firings (it fires at the next multiple of its interval). ``cancel()`` stops future firings (a handler already
/// submitted still runs). Keep a reference while the timer should run: releasing the last reference cancels it
/// (as releasing a `DispatchSourceTimer` does).
///
/// Reference semantics; `Sendable`: its state is the engine's timer entry, which synchronises itself.
public final class QueueTimer: Sendable {
    private let entry: EngineTimerEntry

    /// Starts a timer.
    ///
    /// - Parameters:
    ///   - queue: Where the handler runs.
    ///   - delay: Time until the first firing.
    ///   - interval: Time between firings; nil for a one-shot timer. Must be positive.
    ///   - handler: The closure submitted at each firing.
    ///
    /// Traps when the queue's pool was shut down (except on a thread of that pool while it drains, see
    /// ``WorkerPool``); ``start(queue:delay:repeating:handler:)`` is the form that returns nil instead.
    public init(
        queue: any WorkQueue,
        delay: Duration,
        repeating interval: Duration? = nil,
        handler: @escaping @Sendable () -> Void
    ) {
        let core = queue.engineCore
        let step = QueueTimer.step(interval)
        if !core.engine.requireAccepting("QueueTimer on queue '\(core.label)'") {
            // A task of a pool a timed shutdown gave up on: the timer is counted as dropped and never fires.
            entry = EngineTimerEntry(deadline: .max, interval: 0) {}
            entry.cancelled.store(true, ordering: .releasing)
            return
        }
        entry = QueueTimer.schedule(core, delay, step, handler)
    }

    private init(entry: EngineTimerEntry) {
        self.entry = entry
    }

    /// Starts a timer as ``init(queue:delay:repeating:handler:)`` does, unless the queue's pool no longer takes
    /// work: the recoverable form for code that may run while the pool shuts down.
    ///
    /// A timer whose pool shuts down later stops firing (firings due after the shutdown are counted in
    /// ``QueueEngineStatistics/cancelledFirings``).
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
        let core = queue.engineCore
        let step = QueueTimer.step(interval)
        guard core.engine.isAccepting(EngineThread.current) else { return nil }
        return QueueTimer(entry: schedule(core, delay, step, handler))
    }

    /// The interval in nanoseconds (0: one-shot); traps unless it is positive.
    private static func step(_ interval: Duration?) -> UInt64 {
        let step = interval.map { engineNanoseconds($0) } ?? 0
        require(interval == nil || step > 0, "QueueTimer(repeating: \(interval!)): the interval must be positive")
        return step
    }

    private static func schedule(
        _ core: any QueueCore,
        _ delay: Duration,
        _ step: UInt64,
        _ handler: @escaping @Sendable () -> Void
    ) -> EngineTimerEntry {
        let entry = EngineTimerEntry(deadline: engineDeadline(after: delay), interval: step) {
            core.enqueueFiring(.task(handler))
        }
        EngineTimer.shared.schedule(entry)
        return entry
    }

    deinit {
        // A timer nobody references can never be cancelled: stop it.
        entry.cancelled.store(true, ordering: .releasing)
    }

    /// Stops future firings.
    public func cancel() {
        entry.cancelled.store(true, ordering: .releasing)
    }

    /// Whether ``cancel()`` was called.
    public var isCancelled: Bool {
        entry.cancelled.load(ordering: .acquiring)
    }
}
