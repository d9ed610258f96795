// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

/// Suspension: counted `suspend()` and `resume()`, the resumption when a suspended queue's last handle goes, and the
/// process-wide queues that refuse to be suspended.
extension QueueCore {
    /// Marks a process-wide queue (``ConcurrentQueue/global(qos:)``, the queues of ``QueuePool/shared(for:)``):
    /// ``suspend()`` refuses it. `name` is how its users reach it, for the message. Kept as a queue-specific value
    /// under a key no ``QueueKey`` can have, so the queue kinds need no field for it.
    func markProcessWide(_ name: String) {
        setSpecific(ProcessWideQueueMark.key, ProcessWideQueueMark(name))
    }

    /// Suspends: no new work starts until a matching `resume`. Traps on a process-wide queue (see
    /// ``markProcessWide(_:)``): every other user of it would stall.
    func suspend() {
        lock.lock()
        if let mark = specifics[ProcessWideQueueMark.key] as? ProcessWideQueueMark {
            lock.unlock()
            threadingFatal(
                "Threading: suspend() of queue '\(label)' (\(mark.name)) refused: it is a process-wide queue, and "
                    + "suspending it would stall every other user of it in the process; suspend a queue of your own "
                    + "that targets it instead"
            )
        }
        suspendCount += 1
        if suspendCount == 1 { word.bitOr(QueueState.suspended) }
        lock.unlock()
    }

    /// Resumes; traps on over-resume.
    func resume() {
        lock.lock()
        guard suspendCount > 0 else {
            lock.unlock()
            threadingFatal("resume() of queue '\(label)' that is not suspended (more resume() than suspend() calls)")
        }
        suspendCount -= 1
        let restart = suspendCount == 0
        if restart { word.bitAnd(~QueueState.suspended) }
        lock.unlock()
        if restart { didResume() }
    }

    /// Lifts every outstanding `suspend()` because the queue's last public handle is gone: nobody can call
    /// `resume()` any more, so the held work (and any child queue targeting this one) would otherwise never run.
    func releaseSuspension() {
        lock.lock()
        let restart = suspendCount > 0
        if restart {
            suspendCount = 0
            word.bitAnd(~QueueState.suspended)
        }
        lock.unlock()
        if restart { didResume() }
    }
}

/// The queue-specific value that marks a process-wide queue (see ``QueueCore/markProcessWide(_:)``); its key is the
/// class's own identity, which no ``QueueKey`` instance shares.
final class ProcessWideQueueMark: Sendable {
    static let key = ObjectIdentifier(ProcessWideQueueMark.self)
    /// How users reach the queue: `ConcurrentQueue.global(qos: .default)`.
    let name: String

    init(_ name: String) { self.name = name }
}
