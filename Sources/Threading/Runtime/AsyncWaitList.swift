// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import Synchronization

/// Tasks suspended in an async wait for a unit of something (a ``Semaphore`` unit), in FIFO order, each removable
/// by its task's cancellation in O(1).
///
/// A waiter is a node of an intrusive doubly linked list guarded by `lock`. `count` mirrors the list's length
/// (sequentially consistent), so that the releasing side can see "nobody waits" without taking the lock: the waiter
/// raises `count` *before* it retries the resource, the releaser publishes the resource *before* it reads `count`
/// (a Dekker pair, see ``Semaphore/signal()``), so one of the two always sees the other.
final class AsyncWaitList: @unchecked Sendable {
    /// One suspended task. `@unchecked Sendable`: every field is guarded by the list's lock.
    final class Node: @unchecked Sendable {
        var continuation: UnsafeContinuation<Void, any Error>?
        var cancelled = false
        var linked = false
        /// Unretained: a node is linked only while its task is suspended in ``AsyncWaitList/wait(acquire:)``, whose
        /// frame holds it, and whoever ends that wait unlinks it first (under the lock). No reference counting on
        /// the list's links.
        var previous: Unmanaged<Node>?
        var next: Unmanaged<Node>?
        /// Set (release) by whoever resumes the task, read (acquire) by the task after its `await`: the order
        /// ThreadSanitizer cannot see through the runtime (see ``ResumeOrdering``).
        let handedOff = Atomic<Bool>(false)
    }

    let lock = RuntimeLock()
    /// The number of linked nodes (changed under `lock`, read anywhere).
    let count = Atomic<Int>(0)
    /// Called under `lock` when a waiter is counted, and when it is no longer: the resource registers the task as a
    /// waiter of its own (a ``Semaphore`` in its C word, so that a post takes the path that resumes tasks).
    private let registered: () -> Void
    private let unregistered: () -> Void

    init(registered: @escaping () -> Void, unregistered: @escaping () -> Void) {
        self.registered = registered
        self.unregistered = unregistered
    }
    /// Guarded by `lock` (unretained, see ``Node/previous``).
    private var head: Unmanaged<Node>?
    /// Guarded by `lock`.
    private var tail: Unmanaged<Node>?

    /// Suspends the calling task until `resumeFirst`/`resume` hands it a unit, or its cancellation.
    ///
    /// `acquire` runs under the lock after the waiter was counted: when it returns true the task got the unit
    /// without suspending for long (it is resumed at once).
    ///
    /// - Throws: `CancellationError` when the task was (or is) cancelled before a unit was handed to it; the unit
    ///   is then not taken.
    func wait(acquire: () -> Bool) async throws {
        let node = Node()
        defer { _ = node.handedOff.load(ordering: .acquiring) }
        try await withTaskCancellationHandler {
            try await withUnsafeThrowingContinuation { (continuation: UnsafeContinuation<Void, any Error>) in
                lock.lock()
                if node.cancelled {
                    lock.unlock()
                    continuation.resume(throwing: CancellationError())
                    return
                }
                count.wrappingAdd(1, ordering: .sequentiallyConsistent)
                registered()
                atomicMemoryFence(ordering: .sequentiallyConsistent)
                if acquire() {
                    count.wrappingSubtract(1, ordering: .sequentiallyConsistent)
                    unregistered()
                    lock.unlock()
                    continuation.resume()
                    return
                }
                node.continuation = continuation
                link(node)
                lock.unlock()
            }
        } onCancel: {
            lock.lock()
            node.cancelled = true
            let continuation = node.linked ? node.continuation : nil
            if node.linked {
                unlink(node)
                count.wrappingSubtract(1, ordering: .sequentiallyConsistent)
                unregistered()
            }
            node.continuation = nil
            node.handedOff.store(true, ordering: .releasing)
            lock.unlock()
            continuation?.resume(throwing: CancellationError())
        }
    }

    /// Hands units to the longest-waiting tasks while `acquire` (called under the lock) takes one for them.
    ///
    /// Each task is resumed outside the lock, one lock round trip per task: nothing is allocated.
    func resumeWhile(_ acquire: () -> Bool) {
        while let continuation = takeFirst(acquire) { continuation.resume() }
    }

    /// Hands a unit that the caller holds (and did not publish) straight to the longest-waiting task.
    ///
    /// - Returns: false, with the unit still the caller's, when no task is linked.
    func resumeFirst() -> Bool {
        guard let continuation = takeFirst({ true }) else { return false }
        continuation.resume()
        return true
    }

    /// Unlinks the first waiter if `acquire` (under the lock) takes a unit for it; its continuation, to be resumed
    /// by the caller. A waiter whose cancellation won already has no continuation: it is skipped (unlinked by its
    /// handler, so it is never the head here).
    private func takeFirst(_ acquire: () -> Bool) -> UnsafeContinuation<Void, any Error>? {
        lock.lock()
        guard let first = head?.takeUnretainedValue(), acquire() else {
            lock.unlock()
            return nil
        }
        unlink(first)
        count.wrappingSubtract(1, ordering: .sequentiallyConsistent)
        unregistered()
        first.handedOff.store(true, ordering: .releasing)
        let continuation = first.continuation
        first.continuation = nil
        lock.unlock()
        return continuation
    }

    private func link(_ node: Node) {
        let unmanaged = Unmanaged.passUnretained(node)
        node.linked = true
        node.previous = tail
        if let tail { tail._withUnsafeGuaranteedRef { $0.next = unmanaged } } else { head = unmanaged }
        tail = unmanaged
    }

    private func unlink(_ node: Node) {
        node.linked = false
        if let previous = node.previous {
            previous._withUnsafeGuaranteedRef { $0.next = node.next }
        } else {
            head = node.next
        }
        if let next = node.next {
            next._withUnsafeGuaranteedRef { $0.previous = node.previous }
        } else {
            tail = node.previous
        }
        node.previous = nil
        node.next = nil
    }
}

/// A continuation that exactly one of several parties resumes: the event a wait is for, or the task's
/// cancellation. The loser's resume is a no-op.
///
/// Lock-free: the winner of `claimed` either resumes the installed continuation or leaves its result for the task
/// to take while it installs one, decided by one compare-exchange on `state` against the installing task.
final class AsyncResumeOnce<Value: Sendable>: @unchecked Sendable {
    private let claimed = Atomic<Bool>(false)
    /// ``State``: who came second, the continuation or the result, does the resume.
    private let state = Atomic<UInt8>(State.empty)
    /// Written by the task before it publishes `installed`, read by the winner after it saw it.
    private var continuation: UnsafeContinuation<Value, any Error>?
    /// Written by the winner before it publishes `early`, read by the task after it saw it.
    private var early: Result<Value, any Error>?

    private enum State {
        static var empty: UInt8 { 0 }
        /// The task installed its continuation: the winner resumes it.
        static var installed: UInt8 { 1 }
        /// The winner came first and left its result: the task resumes itself with it.
        static var early: UInt8 { 2 }
    }

    /// Waits until ``resume(_:)`` or cancellation; `register` installs the event's callback (it may resume at
    /// once).
    static func wait(
        _ register: (AsyncResumeOnce) -> Void
    ) async throws -> Value {
        let once = AsyncResumeOnce()
        defer { once.observe() }
        return try await withTaskCancellationHandler {
            try await withUnsafeThrowingContinuation { continuation in
                once.install(continuation)
                register(once)
            }
        } onCancel: {
            once.resume(.failure(CancellationError()))
        }
    }

    private func install(_ continuation: UnsafeContinuation<Value, any Error>) {
        self.continuation = continuation
        if arrivesFirst(as: State.installed) { return }
        self.continuation = nil
        continuation.resume(with: early!)
    }

    /// Moves `state` from empty to `arrival`, publishing what the caller wrote before (release); false when the
    /// other side arrived first, whose write is then visible here (acquire) and which leaves the resume to the caller.
    private func arrivesFirst(as arrival: UInt8) -> Bool {
        state.compareExchange(
            expected: State.empty,
            desired: arrival,
            successOrdering: .releasing,
            failureOrdering: .acquiring
        ).exchanged
    }

    /// Called by the task after its `await`: the winner's claim (a release) is ordered before it (see
    /// ``ResumeOrdering``).
    func observe() { _ = claimed.load(ordering: .acquiring) }

    /// Resumes the waiter with `result` unless another party did already.
    func resume(_ result: Result<Value, any Error>) {
        guard !claimed.exchange(true, ordering: .acquiringAndReleasing) else { return }
        early = result
        if arrivesFirst(as: State.early) { return }
        let continuation = self.continuation!
        self.continuation = nil
        continuation.resume(with: result)
    }
}
