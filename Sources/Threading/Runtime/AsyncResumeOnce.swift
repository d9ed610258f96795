// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import CThreading
import Synchronization

/// A suspended task's continuation, resumed exactly once by whichever party claims it first: the event the task
/// waits for, its cancellation, or a pool that refuses or drops the work the task offloaded. The library's one
/// resume-once helper: every async wait and every offload suspends through it.
///
/// Two ways to arbitrate the claim, one state:
/// - **A wait in a list** (``wait(guardedBy:register:unregister:)``: a ``Semaphore``'s, a ``WorkGroup``'s, a
///   ``WorkItem``'s or a ``Job``'s waiters) is claimed under the lock of the list's owner, which every party takes
///   anyway: whoever unlinks the node claims it, and the node itself costs no atomic operation. The cancellation
///   handler unlinks its node (so a cancelled wait leaves nothing behind) or, when it comes before the node was
///   linked, marks it, and the task then resumes itself without linking it.
/// - **A wait for a callback** (``wait(_:)``, ``run(_:)``: `WorkQueue.run`, `WorkerPool.run`) has no lock: the
///   claim is one atomic or-operation, and a claimer that comes before the task installed its continuation leaves
///   its error for the task, decided by the task's own or-operation when it installs the continuation.
///
/// Waits that cannot be cancelled (``waitUncancellable(_:)``) have a single resumer and no claim.
///
/// ThreadSanitizer: the Swift runtime tells it that a resume happens before the resumed task goes on (a release on
/// the task in the resume, an acquire when the task runs again), except when the resume comes before the task
/// suspended: the task then goes on at once, ordered by atomics inside libswift_Concurrency, which is not
/// instrumented (swiftlang/swift#57803), and TSan reports what the resumer wrote or read (the result, the
/// continuation's own context in the task's frame) against what the task does after its `await`. So the task makes
/// that acquire itself after its `await` (``observe()``), in ThreadSanitizer builds only (elsewhere one load of a
/// constant).
///
/// `@unchecked Sendable`: `continuation`, `early` and the links are written by one party at a time, as the protocol
/// above orders (under the owner's lock for a list wait; before a release and after the matching acquire of
/// `state` for a callback wait).
final class AsyncResumeOnce<Value>: @unchecked Sendable {
    /// ``Bits``. Changed only under the owner's lock (relaxed loads and stores) for a list wait; by atomic
    /// or-operations for a callback wait.
    private let state = Atomic<UInt8>(0)
    private var continuation: UnsafeContinuation<Value, any Error>?
    /// A callback wait's failure that was claimed before the task installed its continuation.
    private var early: (any Error)?

    /// The neighbours in the owner's ``AsyncWaitList`` (guarded by the owner's lock). Unretained: the waiting task's
    /// frame holds the node while it is linked, and whoever ends the wait unlinks it first.
    var previous: Unmanaged<AsyncResumeOnce>?
    var next: Unmanaged<AsyncResumeOnce>?
    /// Whether the node is in its owner's list (guarded by the owner's lock).
    var isLinked = false

    private enum Bits {
        /// The task installed its continuation.
        static var installed: UInt8 { 1 }
        /// A party won the right to resume the task.
        static var claimed: UInt8 { 2 }
        /// The claimer found no continuation and left `early` for the task.
        static var early: UInt8 { 4 }
    }

    init() {}

    // MARK: Waits in a list, claimed under the owner's lock

    /// Suspends the task until a party that unlinks its node from the owner's list resumes it, or its cancellation.
    ///
    /// - Parameters:
    ///   - lock: The owner's lock, which guards its list and the node's claim.
    ///   - register: Called under `lock` with the installed node: links it into the owner's list and returns true,
    ///     or returns false when the task need not wait (the resource is there): it resumes at once.
    ///   - unregister: Called under `lock` by the cancellation handler for a linked node: unlinks it.
    /// - Throws: `CancellationError` when the task is (or was) cancelled before a party took the node out of the
    ///   list.
    @inline(__always)  // into the public wait: one async frame less per wait
    static func wait(
        guardedBy lock: RuntimeLock,
        register: (AsyncResumeOnce) -> Bool,
        unregister: @Sendable (AsyncResumeOnce) -> Void
    ) async throws where Value == Void {
        let node = AsyncResumeOnce()
        defer { node.observe() }
        try await withTaskCancellationHandler {
            try await withUnsafeThrowingContinuation { (continuation: UnsafeContinuation<Void, any Error>) in
                lock.lock()
                if node.isClaimedLocked {  // the cancellation came first
                    lock.unlock()
                    continuation.resume(throwing: CancellationError())
                    return
                }
                node.continuation = continuation
                if register(node) {
                    lock.unlock()
                    return
                }
                node.continuation = nil
                _ = node.claimLocked()  // so that a later cancellation finds nothing to do
                lock.unlock()
                continuation.resume()
            }
        } onCancel: {
            lock.lock()
            guard node.claimLocked() else {
                lock.unlock()
                return
            }
            if node.isLinked { unregister(node) }
            let continuation = node.continuation
            node.continuation = nil
            lock.unlock()
            continuation?.resume(throwing: CancellationError())
        }
    }

    /// Whether a party claimed the node. Under the owner's lock.
    var isClaimedLocked: Bool { state.load(ordering: .relaxed) & Bits.claimed != 0 }

    /// Claims the node under the owner's lock: false when another party did already.
    func claimLocked() -> Bool {
        let bits = state.load(ordering: .relaxed)
        if bits & Bits.claimed != 0 { return false }
        state.store(bits | Bits.claimed, ordering: .relaxed)
        return true
    }

    /// Claims a node that the caller just unlinked from the owner's list, under the owner's lock: resume its task with
    /// ``deliver(returning:)`` once the lock is released. (A linked node is unclaimed: whoever claims it under the
    /// lock unlinks it in the same critical section.)
    func claimUnlinkedLocked() {
        state.store(state.load(ordering: .relaxed) | Bits.claimed, ordering: .relaxed)
    }

    // MARK: Waits for a callback, claimed by an atomic or-operation

    /// Suspends the task until a party resumes it through the node `start` hands out, or its cancellation.
    ///
    /// `start` runs once the continuation is installed, unless the task was cancelled first (then it does not run
    /// and the task throws at once); the callback it registers may resume the node at once.
    ///
    /// - Throws: What the winning party resumed with: `CancellationError` when the cancellation won.
    @inline(__always)  // into the public wait: one async frame less per wait
    static func wait(_ start: (AsyncResumeOnce) -> Void) async throws -> sending Value {
        let node = AsyncResumeOnce()
        defer { node.observe() }
        // The value was handed over by the resumer's `sending` parameter: nothing else refers to it. (The compiler
        // cannot see that through the cancellation handler's generic result.)
        nonisolated(unsafe) let value = try await withTaskCancellationHandler {
            try await withUnsafeThrowingContinuation { (continuation: UnsafeContinuation<Value, any Error>) in
                if node.install(continuation) { start(node) }
            }
        } onCancel: {
            node.fail(with: CancellationError())
        }
        return value
    }

    /// Suspends the task until the one party `start` hands the node to calls ``deliver(returning:)`` (no
    /// cancellation, no claim).
    static func waitUncancellable(_ start: (AsyncResumeOnce) -> Void) async -> sending Value {
        let node = AsyncResumeOnce()
        defer { node.observe() }
        // Nothing but `start`'s callback resumes the task, and only with a value: the `try!` cannot fail.
        return try! await withUnsafeThrowingContinuation { (continuation: UnsafeContinuation<Value, any Error>) in
            node.continuation = continuation
            start(node)
        }
    }

    /// Installs the continuation (one or-operation): false when a failure was claimed first (the task is then
    /// resumed with it here, or by the claimer if it has not left it yet).
    private func install(_ continuation: UnsafeContinuation<Value, any Error>) -> Bool {
        self.continuation = continuation
        let bits = state.bitwiseOr(Bits.installed, ordering: .acquiringAndReleasing).oldValue
        if bits & Bits.claimed == 0 { return true }
        if bits & Bits.early != 0 {  // the claimer left its error: the task resumes itself
            self.continuation = nil
            continuation.resume(throwing: early.unsafelyUnwrapped)
        }
        return false  // else the claimer sees `installed` when it leaves its error, and resumes the task
    }

    /// Claims the right to resume the task (one or-operation): false when another party did already.
    func claim() -> Bool {
        state.bitwiseOr(Bits.claimed, ordering: .acquiringAndReleasing).oldValue & Bits.claimed == 0
    }

    /// Resumes the task with `value`, after the caller won ``claim()`` (a callback that comes only after `start`
    /// ran, so the continuation is installed) or ``claimUnlinkedLocked()``, or as the one party of
    /// ``waitUncancellable(_:)``. The task may free the node as soon as this returns: read what you need from it
    /// (its ``next``) before.
    func deliver(returning value: sending Value) {
        let continuation = self.continuation.unsafelyUnwrapped
        self.continuation = nil
        continuation.resume(returning: value)
    }

    /// Resumes the task with `error`, after the caller won ``claim()``, whether or not the continuation is installed
    /// yet (a cancellation may come before).
    func deliver(throwing error: any Error) {
        if state.load(ordering: .acquiring) & Bits.installed == 0 {
            early = error
            let bits = state.bitwiseOr(Bits.early, ordering: .acquiringAndReleasing).oldValue
            if bits & Bits.installed == 0 { return }  // the task resumes itself with `early` when it installs
            early = nil
        }
        let continuation = self.continuation.unsafelyUnwrapped
        self.continuation = nil
        continuation.resume(throwing: error)
    }

    /// Resumes the task with `value` unless another party claimed it first.
    func resume(returning value: sending Value) {
        if claim() { deliver(returning: value) }
    }

    /// Resumes the task with `error` unless another party claimed it first.
    func fail(with error: any Error) {
        if claim() { deliver(throwing: error) }
    }

    /// Called by the task after its `await`: orders what the resumer did before the resume (and the runtime's
    /// release on the task in it) before what follows, for ThreadSanitizer (see the type's documentation).
    @inline(__always)
    private func observe() {
        if cthr_tsan_active { AsyncResumeOnce.acquireCurrentTask() }
    }

    /// The acquire on the current task that the runtime makes when it runs a resumed task again.
    @inline(never)
    private static func acquireCurrentTask() {
        withUnsafeCurrentTask { task in
            if let task { cthr_tsan_acquire(unsafeBitCast(task, to: UnsafeRawPointer.self)) }
        }
    }
}

// MARK: Offloads

extension AsyncResumeOnce {
    /// Runs `body` through `submit` (which queues the closure it is given and returns whether its pool took it)
    /// and suspends the task until `body` ran, the task was cancelled before it started, or the pool refused or
    /// dropped it: the offload of ``WorkQueue/run(_:)`` and ``WorkerPool/run(fileID:line:_:)``.
    ///
    /// The closure claims the node when it starts, so exactly one of "`body` runs", "the cancellation resumes the
    /// task" and "the refusal or drop resumes the task" happens; `body` never runs for a task already resumed.
    /// `finishing` runs on the thread that ran `body`, right before it resumes the task (the closure's last act).
    ///
    /// - Throws: What `body` threw; `CancellationError`; ``ThreadingError/shutDown`` when the pool refused the
    ///   closure, or released it unrun.
    static func run<Failure: Error>(
        _ body: sending @escaping () throws(Failure) -> sending Value,
        finishing: @escaping @Sendable () -> Void = {},
        submit: (@escaping () -> Void) -> Bool
    ) async throws -> sending Value {
        try await wait { node in
            let ticket = AsyncRunTicket(node, body, finishing: finishing)
            // A closure that captures only the ticket has the ticket as its context: no allocation of its own.
            if !submit({ ticket.run() }) { node.fail(with: ThreadingError.shutDown) }
        }
    }
}

/// The work ``AsyncResumeOnce/run(_:finishing:submit:)`` queues, owned by the closure it queues and released with
/// it: a closure that a stopped pool drops unrun resumes its caller with ``ThreadingError/shutDown`` instead of
/// leaving it suspended for ever (after the closure ran, the claim is taken and this does nothing).
///
/// `@unchecked Sendable`: `body` and `finishing` are called once, by the thread that runs the closure (`body` was
/// handed over by the `sending` parameter of ``AsyncResumeOnce/run(_:finishing:submit:)``).
final class AsyncRunTicket<Value, Failure: Error>: @unchecked Sendable {
    let node: AsyncResumeOnce<Value>
    private let body: () throws(Failure) -> sending Value
    private let finishing: @Sendable () -> Void

    init(
        _ node: AsyncResumeOnce<Value>,
        _ body: @escaping () throws(Failure) -> sending Value,
        finishing: @escaping @Sendable () -> Void
    ) {
        self.node = node
        self.body = body
        self.finishing = finishing
    }

    /// Runs `body` unless another party claimed the node first, and resumes the task with its outcome.
    func run() {
        guard node.claim() else { return }
        do throws(Failure) {
            let result = try body()
            finishing()
            node.deliver(returning: result)
        } catch {
            finishing()
            node.deliver(throwing: error)
        }
    }

    // The claim first: the error, an existential box (an allocation), is made only when this release resumes the
    // task, not after every run.
    deinit { if node.claim() { node.deliver(throwing: ThreadingError.shutDown) } }
}
