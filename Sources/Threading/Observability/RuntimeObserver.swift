// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import CThreading

/// Something the runtime noticed and reports while it keeps running: a saturated pool, a unit that runs too long, a
/// wait that cannot end, misuse that does not trap.
///
/// Every report of the runtime is one event, formatted once: ``message`` is the line the default observer writes to
/// standard error, ``metadata`` the same facts as fields (for a structured logger or a metrics backend). Set an
/// observer with ``RuntimeObservation/observer`` to send them elsewhere.
public struct RuntimeEvent: Sendable, CustomStringConvertible {
    /// What happened. The raw values are stable names (`"pool.saturation.began"`), fit for a log's event field.
    public enum Kind: String, Sendable, Hashable, CaseIterable {
        /// A pool's every slot is busy, work is waiting, and nothing finished for a while (see the Pools article).
        case saturationBegan = "pool.saturation.began"
        /// A saturated pool finishes work again.
        case saturationEnded = "pool.saturation.ended"
        /// A worker of a pool has been running the same unit past the pool's stall threshold.
        case stallBegan = "pool.stall.began"
        /// A stalled unit returned.
        case stallEnded = "pool.stall.ended"
        /// A wait that is not provably a deadlock has not ended after its grace period (a `sync` onto a suspended
        /// queue, a job wait behind work that has not started).
        case waitStalled = "wait.stalled"
        /// Threads wait for each other in a cycle: none of the waits can end.
        case waitCycle = "wait.cycle"
        /// A resource the runtime asked the system for was refused (a thread), and the runtime goes on without it.
        case resourceRefused = "runtime.resource.refused"
        /// Misuse or a setup problem that does not stop the process.
        case warning = "runtime.warning"
    }

    /// How much the event matters, for a logger's level.
    public enum Severity: Int, Sendable, Hashable, Comparable, CaseIterable {
        /// Good to know; nothing is wrong (a stall that ended).
        case info
        /// Something is slow or degraded and may recover by itself.
        case warning
        /// Something cannot recover without the program's help (a wait cycle).
        case error

        public static func < (lhs: Severity, rhs: Severity) -> Bool { lhs.rawValue < rhs.rawValue }
    }

    /// What happened.
    public let kind: Kind
    /// How much it matters.
    public let severity: Severity
    /// The report as one human-readable line (no trailing newline), starting with `Threading:`.
    public let message: String
    /// The facts of the report as fields, under the names the Observing article lists (`pool`, `queue`, `thread`,
    /// `duration_ms`, ...). Values are already formatted.
    public let metadata: [String: String]
    /// When it was reported, in nanoseconds of `CLOCK_MONOTONIC`.
    public let monotonicNanoseconds: UInt64

    /// Creates an event (for observers' tests; the runtime makes its own).
    public init(
        kind: Kind,
        severity: Severity,
        message: String,
        metadata: [String: String] = [:],
        monotonicNanoseconds: UInt64 = cthr_clock_now_ns()
    ) {
        self.kind = kind
        self.severity = severity
        self.message = message
        self.metadata = metadata
        self.monotonicNanoseconds = monotonicNanoseconds
    }

    /// The ``message``.
    public var description: String { message }
}

/// Receives the runtime's events (see ``RuntimeEvent``).
///
/// `observe(_:)` is called never while the runtime holds one of its locks, at most a few times a second (every
/// report is rate-limited at its source), on one of two threads:
///
/// - The reports of the runtime's own threads (a pool's monitor and workers, the stall watchdog, the timer and dump
///   threads: saturation, stalls, a refused thread) are delivered **off those threads**, in order, by one thread of
///   the runtime (`threading.events`), through a bounded hand-off: an observer that blocks stops only that thread,
///   never a pool's monitor. When 256 events wait for it, new ones are dropped and counted
///   (``RuntimeObservation/droppedEvents``, ``RuntimeSnapshot/droppedEvents``, the dump), and one warning says how
///   many once the observer returns.
/// - A report a program's thread makes about its own call (its stalled `sync`, a wait cycle it is part of, a misuse
///   warning) is delivered on that thread, before the call goes on.
///
/// It should return promptly and must not wait for the pool that reports (it may submit work to it). Events still
/// waiting in the hand-off when the process exits are not delivered.
public protocol RuntimeObserver: Sendable {
    /// Handles one event.
    func observe(_ event: RuntimeEvent)
}

/// The default observer: writes each event's ``RuntimeEvent/message`` as one line to standard error.
public struct StandardErrorObserver: RuntimeObserver {
    /// Creates the observer.
    public init() {}

    /// Writes the event's message and a newline to standard error, in one `write`.
    public func observe(_ event: RuntimeEvent) {
        writeStandardError(event.message + "\n")
    }
}

/// Where the runtime's events go.
///
/// ```swift
/// struct Collect: RuntimeObserver {
///     let events = LockedValue<[RuntimeEvent]>([])
///     func observe(_ event: RuntimeEvent) { events.withLock { $0.append(event) } }
/// }
/// RuntimeObservation.observer = Collect()
/// RuntimeObservation.observer = StandardErrorObserver()  // the default again
/// ```
public enum RuntimeObservation {
    private static let current = LockedValue<any RuntimeObserver>(StandardErrorObserver())

    /// The observer every event goes to; ``StandardErrorObserver`` until set. Setting it affects the events
    /// reported from then on, from every thread.
    public static var observer: any RuntimeObserver {
        get { current.withLock { $0 } }
        set { current.withLock { $0 = newValue } }
    }

    /// The events dropped so far because the observer did not keep up: the hand-off that carries the reports of
    /// the runtime's own threads to the observer holds 256 events, and an event that finds it full is dropped and
    /// counted here (see ``RuntimeObserver``). Also in ``RuntimeSnapshot/droppedEvents`` and the dump.
    public static var droppedEvents: UInt64 {
        RuntimeEventDelivery.shared.dropped.load(ordering: .relaxed)
    }

    /// Reports an event to the observer (outside every lock of the runtime): handed off when the calling thread is
    /// one of the runtime's (so that the runtime never waits for the observer), delivered here otherwise.
    static func report(
        _ kind: RuntimeEvent.Kind,
        _ severity: RuntimeEvent.Severity,
        _ message: String,
        _ metadata: [String: String] = [:]
    ) {
        let event = RuntimeEvent(kind: kind, severity: severity, message: message, metadata: metadata)
        let state = RuntimeThread.existing
        if state?.pointee.isRuntimeThread == true && RuntimeEventDelivery.shared.handOff(event) { return }
        observer.observe(event)
    }
}
