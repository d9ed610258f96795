// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import Synchronization

/// A trampoline that runs actions on the calling thread, one after another, never recursively: RxSwift's
/// `CurrentThreadScheduler`.
///
/// The first ``schedule(_:)`` on a thread runs its action at once. A `schedule` made while an action is running on
/// that thread does not run (and cannot recurse): its action is queued on the thread and runs after the running
/// action returned, in FIFO order, before the outermost `schedule` returns. So
///
/// ```swift
/// let scheduler = CurrentThreadScheduler.instance
/// var messages: [Int] = []
/// scheduler.schedule {
///     messages.append(1)
///     scheduler.schedule {
///         messages.append(3)
///         scheduler.schedule { messages.append(5) }
///         messages.append(4)
///     }
///     messages.append(2)
/// }
/// // messages == [1, 2, 3, 4, 5]
/// ```
///
/// Whether an action is running on the thread lives in thread-specific data — a ``ThreadLocal`` (a pthread key),
/// as RxSwift's `isScheduleRequiredKey` — so each thread has its own trampoline and threads never wait for each
/// other. ``isScheduleRequired`` reads it: true outside any action (a `schedule` would run at once), false inside.
///
/// `schedule` returns a ``ScheduledAction``: disposing it before a queued action ran skips that action.
///
/// Every instance shares the calling thread's trampoline (like RxSwift's `instance`). A reference type and
/// `Sendable`: it has no state of its own; the per-thread state is only touched by its thread.
public final class CurrentThreadScheduler: Sendable {
    /// The scheduler (all instances behave the same).
    public static let instance = CurrentThreadScheduler()

    /// Creates a scheduler; it shares the calling thread's trampoline with every other instance.
    public init() {}

    /// The per-thread trampoline, on one pthread key.
    private static let trampoline: ThreadLocal<Trampoline> = {
        do {
            return try ThreadLocal { Trampoline() }
        } catch {
            threadingFatal("CurrentThreadScheduler: pthread_key_create failed: \(error)")
        }
    }()

    /// Whether a `schedule` on the calling thread would run its action at once: true outside any action of this
    /// scheduler, false inside one (a `schedule` there is queued).
    ///
    /// The corresponding C function is `pthread_getspecific`.
    public static var isScheduleRequired: Bool {
        !trampoline.value.isRunning
    }

    /// Runs `action` now if no action is running on this thread; otherwise queues it to run after the running
    /// action (and the actions queued before it) returned.
    ///
    /// - Parameter action: The work; it runs on the calling thread.
    /// - Returns: A handle; disposing it before a queued action ran skips the action.
    @discardableResult
    public func schedule(_ action: @escaping () -> Void) -> ScheduledAction {
        schedule((), action: { _ in action() })
    }

    /// Runs `action(state)` now if no action is running on this thread; otherwise queues it to run after the
    /// running action (and the actions queued before it) returned — RxSwift's `schedule(_:action:)`.
    ///
    /// - Parameters:
    ///   - state: The value passed to `action`.
    ///   - action: The work; it runs on the calling thread.
    /// - Returns: A handle; disposing it before a queued action ran skips the action.
    @discardableResult
    public func schedule<State>(_ state: State, action: @escaping (State) -> Void) -> ScheduledAction {
        let trampoline = Self.trampoline.value
        let item = ScheduledAction { action(state) }
        if trampoline.isRunning {
            trampoline.pending.append(item)
            return item
        }
        trampoline.isRunning = true
        defer { trampoline.isRunning = false }
        item.run()
        while let next = trampoline.pending.popFirst() {
            next.run()
        }
        return item
    }

    /// A scheduled action: dispose it to skip it if it has not run yet.
    ///
    /// Reference semantics; `Sendable`: only the disposed flag may be touched from other threads (atomically);
    /// the action itself is only run and released on the thread that scheduled it.
    public final class ScheduledAction: @unchecked Sendable {
        private var action: (() -> Void)?
        private let disposed = Atomic<Bool>(false)

        init(_ action: @escaping () -> Void) {
            self.action = action
        }

        /// Marks the action disposed: if it has not run yet, it never will. Safe from any thread.
        public func dispose() {
            disposed.store(true, ordering: .releasing)
        }

        /// Whether ``dispose()`` was called.
        public var isDisposed: Bool { disposed.load(ordering: .acquiring) }

        /// Runs the action unless it was disposed, then releases it. Called on the scheduling thread only.
        func run() {
            let work = action
            action = nil
            if !isDisposed { work?() }
        }
    }
}

/// The trampoline state of one thread.
final class Trampoline {
    var isRunning = false
    /// Empty whenever no trampoline runs; its buffer is kept for the next one and freed with the thread's state.
    var pending = RuntimeRing<CurrentThreadScheduler.ScheduledAction>()
}
