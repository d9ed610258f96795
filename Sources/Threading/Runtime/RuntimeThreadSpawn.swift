// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import CThreading
import Synchronization

/// Starts a detached pool thread (pool worker, monitor, timer) named `name` that runs `body(context)`.
///
/// - Returns: 0, or the error code of `cthr_thread_create` (`EAGAIN` when the system refuses a thread); the body
///   never runs then, and the caller still owns whatever `context` points to.
func spawnDetachedRuntimeThread(
    named name: String,
    context: UnsafeMutableRawPointer? = nil,
    _ body: cthr_thread_body_t
) -> CInt {
    spawnRuntimeThread(named: name, context: context, detached: true, body)
}

/// Starts a runtime thread as ``spawnDetachedRuntimeThread(named:context:_:)`` does, joinable unless `detached`: a
/// pool's worker and monitor threads are joined by `shutdown` or detach themselves when they exit otherwise.
func spawnRuntimeThread(
    named name: String,
    context: UnsafeMutableRawPointer? = nil,
    detached: Bool = false,
    _ body: cthr_thread_body_t
) -> CInt {
    var attributes = cthr_thread_attr_t()
    attributes.detached = detached ? 1 : 0
    let start = Unmanaged.passRetained(RuntimeThreadStart(body: body, context: context))
    let code = name.withCString { cName in
        attributes.name = cName
        var handle = pthread_t()
        return cthr_thread_create(&handle, &attributes, runtimeThreadEntry, start.toOpaque())
    }
    if code != 0 { start.release() }
    return code
}

/// What a runtime thread runs: its body and the body's context.
private final class RuntimeThreadStart {
    let body: cthr_thread_body_t
    let context: UnsafeMutableRawPointer?

    init(body: cthr_thread_body_t, context: UnsafeMutableRawPointer?) {
        self.body = body
        self.context = context
    }
}

/// The entry point of every runtime thread: makes the thread's context first, which registers the thread for
/// snapshots (``ThreadRegistry``) at its start rather than on a wait's path, marks it as the runtime's (its reports
/// are handed off, see ``RuntimeEventDelivery``), then runs the body.
private let runtimeThreadEntry: cthr_thread_body_t = { raw in
    let start = Unmanaged<RuntimeThreadStart>.fromOpaque(raw!).takeRetainedValue()
    RuntimeThread.current.pointee.isRuntimeThread = true
    return start.body(start.context)
}

/// Whether a refused thread was reported (once per process).
private let threadRefusalReported = Atomic<Bool>(false)

/// Reports the first runtime thread the system refuses (a pool's worker or monitor, the timer thread), once per
/// process: the runtime keeps serving with the threads it has and retries later, so this is a warning, not an error.
/// `threads`: the pool threads still serving, when a pool was refused one.
func reportThreadRefusal(of what: String, code: CInt, threads: Int?) {
    if threadRefusalReported.exchange(true, ordering: .relaxed) { return }
    let serving = threads.map { "the pool keeps serving with its \($0) thread(s)" } ?? "the runtime keeps serving"
    let message =
        "Threading: the system refused a new \(what) thread (pthread_create: \(errnoName(code))); \(serving) and "
        + "retries later (reported once)"
    var metadata = ["thread_kind": what]
    if let threads { metadata["threads"] = "\(threads)" }
    RuntimeObservation.report(.resourceRefused, .warning, message, metadata)
}

/// Starts the runtime's one thread of a kind (the stall watchdog, the event delivery) unless this process already
/// has it: the first caller of each fork epoch claims `startedEpoch` (a thread of the parent does not exist in a
/// forked child, so the child starts its own), runs `claimed` with whether an earlier epoch had the thread (a forked
/// child), and spawns it; if the system refuses the thread, the claim is given back so that a later caller tries
/// again.
///
/// - Returns: 0 when the thread runs (started now or before), or the refusal's error code.
func startRuntimeThreadOncePerEpoch(
    _ startedEpoch: borrowing Atomic<UInt32>,
    named name: String,
    claimed: (_ forked: Bool) -> Void = { _ in },
    _ body: cthr_thread_body_t
) -> CInt {
    let epoch = ForkRegistry.epoch.load(ordering: .relaxed)
    var seen = startedEpoch.load(ordering: .relaxed)
    while seen != epoch {
        let (exchanged, original) = startedEpoch.compareExchange(expected: seen, desired: epoch, ordering: .relaxed)
        if exchanged {
            claimed(seen != .max)
            let code = spawnDetachedRuntimeThread(named: name, body)
            if code != 0 { startedEpoch.store(seen, ordering: .relaxed) }
            return code
        }
        seen = original
    }
    return 0
}
