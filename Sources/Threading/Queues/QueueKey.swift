// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

/// A key for values attached to queues (`setSpecific`/`getSpecific`), compared by identity.
///
/// ``current`` answers "what does the current execution context say": it looks the key up on the queue the running
/// code was submitted to, then along that queue's target chain, as `dispatch_get_specific` does. Marking a queue
/// with a key and testing ``current`` is the reliable "am I on that queue" test (RxSwift's
/// `DispatchQueue.isMain` and FMDB's guard against `sync` onto its own queue both work this way).
///
/// Values are released when replaced, cleared (set to nil) or when their queue is deallocated.
///
/// A reference type without mutable state, so it is `Sendable`.
public final class QueueKey<Value: Sendable>: Sendable {
    /// Creates a new key, distinct from every other key.
    public init() {}

    /// The value for this key in the current execution context: on the current queue, else on its targets;
    /// nil outside any queue or when no queue on the chain has a value.
    public var current: Value? {
        guard let queue = SchedulerThread.current.currentQueue else { return nil }
        return (queue.lookupSpecific(ObjectIdentifier(self)) as? QueueSpecificBox<Value>)?.value
    }
}
