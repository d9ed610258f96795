// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import CThreading
import Synchronization

/// A suspended task's continuation, resumed exactly once by whichever party takes it first: the event the task
/// waits for, its cancellation, or a pool that refuses or drops the work the task offloaded. The library's one
/// resume-once helper: every async wait and every offload suspends through it.
///
/// Two ways to decide who resumes the task:
/// - **A wait in a list** (``wait(on:guardedBy:mustWait:left:)``: a ``Semaphore``'s, a ``WorkGroup``'s, a
///   ``WorkItem``'s or a ``Job``'s waiters, an ``AsyncWaitList``) is decided under the lock of the list's owner,
///   which every party takes anyway: whoever takes the task out of the list resumes it, and no atomic operation of
///   its own is made. The cancellation handler takes its task out (so a cancelled wait leaves nothing behind); when
///   it comes before the task was appended, it marks the wait, and the task then does not wait. An object of this
///   class is then only the list's node of a task that waits behind another (the first waits with no node).
/// - **A wait for a callback** (``wait(_:)``, ``run(_:)``: `WorkQueue.run`, `WorkerPool.run`) has no lock: the
///   claim is one atomic or-operation on the node's state, and a claimer that comes before the task installed its
///   continuation leaves its error for the task, decided by the task's own or-operation when it installs the
///   continuation.
///
/// Waits that cannot be cancelled (``waitUncancellable(_:)``) have a single resumer and no claim.
///
/// ThreadSanitizer: the Swift runtime tells it that a resume happens before the resumed task goes on (a release on
/// the task in the resume, an acquire when the task runs again), except when the resume comes before the task
/// suspended: the task then goes on at once, ordered by atomics inside libswift_Concurrency, which is not
/// instrumented (swiftlang/swift#57803), and TSan reports what the resumer wrote or read (the result, the
/// continuation's own context in the task's frame) against what the task does after its `await`. So the task makes
/// that acquire itself after its `await` (``observeResume()``), in ThreadSanitizer builds only (elsewhere one load
/// of a constant).
///
/// `@unchecked Sendable`: `continuation`, `early` and the links are written by one party at a time, as the protocol
/// above orders (under the owner's lock for a list wait; before a release and after the matching acquire of
/// `state` for a callback wait).
final class AsyncResumeOnce<Value>: @unchecked Sendable {
    /// ``Bits``, for a callback wait (changed by atomic or-operations); unused by a list's node.
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

    /// A list's node (``AsyncWaitList``) for a task that waits behind another, with its continuation.
    init(listing continuation: UnsafeContinuation<Value, any Error>) { self.continuation = continuation }

    // MARK: Waits in a list, under the owner's lock

    /// Suspends the task until whoever takes it out of `owner`'s list (``AsyncWaitList/takeFirst()``,
    /// ``AsyncWaitList/takeAll()``) resumes it, or its cancellation.
    ///
    /// The cancellation handler and the task's entry into the list are ordered by `lock`, and share what they know
    /// through the wait's own ``AsyncWaitList/Entry``: the handler takes the task out of the list when it is in, or,
    /// when it comes first, marks the wait cancelled, and the task then does not wait. Nothing is allocated when no
    /// other task waits on the owner (see ``AsyncWaitList``).
    ///
    /// - Parameters:
    ///   - owner: The object whose list the task waits in.
    ///   - lock: The owner's lock, which guards its list.
    ///   - mustWait: Called under `lock` before the task is appended: true when it must wait; false when it need not
    ///     (what it waits for is there, and taken if it is taken): it resumes at once.
    ///   - left: Called under `lock` when the task's cancellation took it out of the list.
    /// - Throws: `CancellationError` when the task is (or was) cancelled before it was taken out of the list.
    @inline(__always)  // into the public wait: one async frame less per wait
    static func wait<Owner: AsyncWaitOwner>(
        on owner: Owner,
        guardedBy lock: RuntimeLock,
        mustWait: (Owner) -> Bool,
        left: @Sendable (Owner) -> Void = { _ in }
    ) async throws where Value == Void {
        // Read and written under `lock` only, by the task and by its cancellation handler, which never runs once the
        // wait has returned (the runtime removes it first).
        nonisolated(unsafe) var place = ListPlace.none
        defer { observeResume() }
        try await withTaskCancellationHandler {
            try await withUnsafeThrowingContinuation { (continuation: UnsafeContinuation<Void, any Error>) in
                lock.lock()
                if case .cancelled = place {
                    lock.unlock()
                    continuation.resume(throwing: CancellationError())
                    return
                }
                guard mustWait(owner) else {
                    lock.unlock()
                    continuation.resume()
                    return
                }
                place = .listed(owner.asyncWaiters.append(continuation))
                lock.unlock()
            }
        } onCancel: {
            lock.lock()
            guard case .listed(let entry) = place else {
                place = .cancelled  // before the task's entry: it will not wait
                lock.unlock()
                return
            }
            guard let continuation = owner.asyncWaiters.remove(entry) else {
                lock.unlock()
                return
            }
            left(owner)
            lock.unlock()
            continuation.resume(throwing: CancellationError())
        }
    }

    /// What a list wait's task and its cancellation handler know of the wait (under the owner's lock).
    private enum ListPlace {
        /// Not in the list yet.
        case none
        /// The cancellation came before the task's entry.
        case cancelled
        /// In the list (or taken out of it by whoever ended the wait).
        case listed(AsyncWaitList.Entry)
    }

    /// A list node's continuation, taken out (so that it is resumed once): by whoever took the node out of the list.
    func takeContinuation() -> UnsafeContinuation<Value, any Error>? {
        let continuation = self.continuation
        self.continuation = nil
        return continuation
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
        defer { observeResume() }
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
        defer { observeResume() }
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
    /// ran, so the continuation is installed), or as the one party of ``waitUncancellable(_:)``. The task may free
    /// the node as soon as this returns.
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
    private static func observeResume() {
        if cthr_tsan_active { acquireCurrentTask() }
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
