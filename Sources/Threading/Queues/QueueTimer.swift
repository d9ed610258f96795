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
    public init(
        queue: any WorkQueue,
        delay: Duration,
        repeating interval: Duration? = nil,
        handler: @escaping @Sendable () -> Void
    ) {
        let core = queue.engineCore
        let step = interval.map { engineNanoseconds($0) } ?? 0
        require(interval == nil || step > 0, "QueueTimer(repeating: \(interval!)): the interval must be positive")
        core.engine.requireAccepting("QueueTimer on queue '\(core.label)'")
        entry = EngineTimerEntry(deadline: engineDeadline(after: delay), interval: step) {
            core.enqueueFiring(.task(handler))
        }
        EngineTimer.shared.schedule(entry)
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
