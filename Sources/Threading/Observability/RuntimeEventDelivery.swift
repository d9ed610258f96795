// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import CThreading
import Synchronization

/// The hand-off between the runtime's own threads and the observer: the runtime never waits for user code.
///
/// A report made on a thread the runtime started (a pool's monitor and workers, the stall watchdog, the timer and
/// dump threads: see ``RuntimeObservation``) is appended to a bounded ring, under a lock held for the append only,
/// and one thread of the runtime (`threading.events`, started by the first such report) takes the events out in order
/// and calls the observer. An observer that does not return stops only that thread: the monitor goes on giving back
/// threads, compensating and counting saturations. When the ring holds ``capacity`` events, a new one is dropped and
/// counted (``dropped``, ``RuntimeObservation/droppedEvents``, the snapshot and the dump); once the observer catches
/// up, the delivery thread reports the drops as one warning.
///
/// The thread is started again in a forked child (its parent's is not there; the events the parent had not
/// delivered are dropped, not delivered twice). If the system refuses the thread, the report is delivered on the
/// reporting thread, as before the hand-off existed, and the next report tries again.
final class RuntimeEventDelivery: @unchecked Sendable {
    /// The events the ring holds at most: a few minutes of reports at the rate their sources allow.
    static let capacity = 256

    static let shared = RuntimeEventDelivery()

    /// Held across `fork()` (``ForkRegistry/holdAcrossFork(_:)``): the delivery thread takes it for every event, and
    /// a child that inherited it held would hang in its first report.
    let lock = RuntimeLock.make()
    /// Guarded by `lock`: the events not yet taken by the delivery thread.
    private var ring = RuntimeRing<RuntimeEvent>()
    /// Bumped after each append; the delivery thread sleeps on it.
    private let sequence = FutexWord()
    /// Events dropped because the ring was full, since the process (or its first ancestor) started.
    let dropped = Atomic<UInt64>(0)
    /// `ForkRegistry.epoch` of the process the delivery thread was started in (`.max`: none).
    private let startedEpoch = Atomic<UInt32>(.max)
    /// The delivery thread's own: the drops it reported so far.
    private var reportedDrops: UInt64 = 0

    private init() {
        ForkRegistry.holdAcrossFork(lock)
    }

    /// Queues `event` for the delivery thread (dropping and counting it when the ring is full); false when the
    /// delivery thread cannot be started, in which case the caller delivers it itself.
    func handOff(_ event: RuntimeEvent) -> Bool {
        guard ensureStarted() else { return false }
        let accepted = lock.withLock { () -> Bool in
            if ring.count >= RuntimeEventDelivery.capacity { return false }
            ring.append(event)
            return true
        }
        if !accepted {
            dropped.add(1, ordering: .relaxed)
            return true
        }
        sequence.add(1)
        sequence.wake()
        return true
    }

    /// Starts the delivery thread unless this process has one; whether it runs.
    private func ensureStarted() -> Bool {
        let dropParentEvents = { (forked: Bool) in
            // A forked child: the parent's pending events are its own, delivered (or not) there.
            if forked { _ = self.lock.withLock { self.ring.removeAll() } }  // dropped once the lock is released
        }
        let code = startRuntimeThreadOncePerEpoch(startedEpoch, named: "threading.events", claimed: dropParentEvents) {
            _ in
            RuntimeEventDelivery.shared.deliveryMain()
            return nil
        }
        return code == 0  // refused: the next report tries again
    }

    /// The delivery thread: takes the events out in order and calls the observer, outside every lock.
    private func deliveryMain() {
        let epoch = ForkRegistry.epoch.load(ordering: .relaxed)
        // The thread of a parent does not exist in a forked child, so this loop ends only with the process.
        while ForkRegistry.epoch.load(ordering: .relaxed) == epoch {
            let seen = sequence.load()
            if let event = lock.withLock({ ring.popFirst() }) {
                RuntimeObservation.observer.observe(event)
                continue
            }
            let drops = dropped.load(ordering: .relaxed)
            if drops > reportedDrops {
                let count = drops - reportedDrops
                reportedDrops = drops
                RuntimeObservation.observer.observe(RuntimeEventDelivery.dropReport(count, total: drops))
                continue
            }
            sequence.wait(expected: seen)
        }
    }

    /// The warning the delivery thread delivers after `count` events were dropped.
    static func dropReport(_ count: UInt64, total: UInt64) -> RuntimeEvent {
        RuntimeEvent(
            kind: .warning,
            severity: .warning,
            message: "Threading: \(count) runtime event(s) were dropped: the observer did not return for a while and "
                + "the \(capacity) events waiting for it filled the hand-off (an observer must return promptly; "
                + "RuntimeObservation.droppedEvents counts every drop, \(total) so far)",
            metadata: ["operation": "RuntimeObservation", "dropped": "\(count)", "dropped_total": "\(total)"]
        )
    }
}
