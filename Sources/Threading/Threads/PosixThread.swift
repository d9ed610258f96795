// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import CThreading
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// An operating-system thread running a closure, and the handle to it: ``join()-2oeo2`` waits for the closure and
/// returns its result; ``detach()`` lets the thread finish on its own.
///
/// ```swift
/// let worker = try PosixThread(name: "worker") { (1...100).reduce(0, +) }
/// let sum = worker.join()  // 5050
/// print(sum)
/// ```
///
/// The handle is a class so that handles can be kept in arrays and passed around (a non-copyable handle, which
/// would make a second `join` a compile error, cannot be stored in an `Array` today). POSIX leaves joining twice
/// undefined; here the handle's state (joinable, joined, detached) is an atomic, and joining or detaching a second
/// time traps with a message. A handle released while still joinable detaches the thread.
///
/// The body is `@Sendable` (it runs on another thread) and returns a `sending` result, which `join()` hands to
/// the caller: the result may be a non-`Sendable` value the body created.
///
/// Facts about the calling thread (``isMainThread``, ``currentID``, ``currentName``, ``currentStackSize()``,
/// ``sleep(for:)``, ``yield()``) are static members on `PosixThread` (that is, `PosixThread<Void>`).
///
/// ``join(timeout:)`` waits with a deadline and leaves the thread joinable when the deadline passes first.
///
/// The thread lets go of its body, and of everything the body captured, as soon as the body returned (so a joined
/// or detached thread keeps nothing alive, even while its handle lives on); a detached thread's result is released
/// when the thread finishes.
///
/// Traps: a second `join()` or `detach()` (or one after the other, or a `join(timeout:)` after either, or any of them
/// while a `join(timeout:)` waits on another thread); `join()` or `join(timeout:)` on the thread itself.
///
/// `Sendable`: the pthread handle is immutable, the state is an `Atomic`, and the result is handed over by
/// `pthread_join`, which orders the thread's write before the joiner's read; at most one join gets it.
public final class PosixThread<Result>: @unchecked Sendable {
    /// The pthread handle (internal: the public API never hands out a raw `pthread_t`).
    let handle: pthread_t

    /// The name given at creation, if any (as requested, before Linux's 15-byte truncation).
    public let name: String?

    let box: PosixThreadBox<Result>

    /// 0 = joinable, 1 = joined, 2 = detached, 3 = a `join(timeout:)` is waiting.
    let state = Atomic<UInt8>(0)

    /// Starts a new thread running `body`.
    ///
    /// - Parameters:
    ///   - name: The thread's name as debuggers and `ps -L` show it (truncated to 15 bytes, Linux's limit).
    ///   - stackSize: The stack size in bytes; `nil` or 0 for the system default (the default `pthread_create`
    ///     gives, from `RLIMIT_STACK`: 8 MiB on most Linux systems), as for Foundation's `Thread`. A positive size
    ///     below ``minimumStackSize`` is raised to it, and sizes are rounded up to the page size.
    ///   - body: The work; its result is returned by ``join()-2oeo2``.
    /// - Throws: ``ThreadingError/tryAgain`` when the system refuses a thread (`RLIMIT_NPROC`, memory, or a stack
    ///   it cannot map); ``ThreadingError/invalidArgument`` for a negative or rejected stack size.
    ///
    /// The corresponding C function is `pthread_create`.
    public init(
        name: String? = nil,
        stackSize: Int? = nil,
        _ body: @escaping @Sendable () -> sending Result
    ) throws(ThreadingError) {
        if let stackSize, stackSize < 0 {
            throw ThreadingError(code: EINVAL, operation: "pthread_create", detail: "negative stack size \(stackSize)")
        }
        let box = PosixThreadBox<Result>(body)
        let context = Unmanaged<PosixThreadRunnable>.passRetained(box)  // the thread's reference
        // 0 asks the system for its default (the C layer's convention too), as `nil` does.
        let requested = stackSize.map { $0 == 0 ? 0 : max($0, PosixThread<Void>.minimumStackSize) } ?? 0
        var attributes = cthr_thread_attr_t(stack_size: requested, detached: 0, name: nil)
        var thread = pthread_t()
        let code: CInt
        if let name {
            code = name.withCString { cName in
                attributes.name = cName
                return cthr_thread_create(&thread, &attributes, posixThreadEntry, context.toOpaque())
            }
        } else {
            code = cthr_thread_create(&thread, &attributes, posixThreadEntry, context.toOpaque())
        }
        if code != 0 {
            context.release()
            var detail = name.map { "thread \"\($0)\"" } ?? "thread"
            if let stackSize { detail += ", stack size \(stackSize)" }
            throw ThreadingError(code: code, operation: "pthread_create", detail: detail)
        }
        self.handle = thread
        self.name = name
        self.box = box
    }

    deinit {
        if state.load(ordering: .relaxed) == 0 { _ = cthr_thread_detach(handle) }
    }

    // The noasync advice below is one string literal (an attribute takes no concatenation).
    // swift-format-ignore
    /// Waits for the thread to finish and returns what its body returned.
    ///
    /// On the main thread, a join of a thread that is blocked in a `sync` onto the main queue (or that blocks in one
    /// while joined) would never return: the program stops with a message naming both (see <doc:Misuse>).
    ///
    /// - Returns: The body's result.
    /// - Precondition: The handle was neither joined nor detached before, and this is not the thread itself
    ///   (traps).
    ///
    /// The corresponding C function is `pthread_join`.
    @available(*, noasync, message: "join() blocks the thread; use `await thread.join()` (top-level code, where the blocking overload wins: `await { await thread.join() }()`)")
    public func join() -> sending Result {
        claim("join()", as: 1)
        let code = MainThreadWait.recording(.join(handle, name: name)) {
            BlockingHook.around { joinRecorded(deadline: .max) }  // a pool worker gives its slot up meanwhile
        }
        requireJoined(code, "join()", "pthread_join")
        nonisolated(unsafe) let result = box.result.take()!
        return result
    }

    // The noasync advice below is one string literal (an attribute takes no concatenation).
    // swift-format-ignore
    /// Waits at most `timeout` for the thread to finish and returns what its body returned, or `nil` when the
    /// thread is still running at the deadline.
    ///
    /// After a timeout the thread stays joinable: call `join()`, `join(timeout:)` or `detach()` later (or release
    /// the handle, which detaches it). After a successful timed join the handle is joined, as after ``join()-2oeo2``.
    /// The wait is measured on the monotonic clock.
    ///
    /// When `Result` is itself optional, a body that returned `nil` gives `.some(nil)`, which is not a timeout.
    ///
    /// - Parameter timeout: The longest time to wait (zero or negative: one check, no waiting; huge: forever).
    /// - Returns: The body's result, or `nil` when the timeout expired first.
    /// - Precondition: The handle was neither joined nor detached before, no other `join(timeout:)` is waiting on
    ///   it, and this is not the thread itself (traps).
    ///
    /// The corresponding C function is `pthread_timedjoin_np`.
    @available(*, noasync, message: "join(timeout:) blocks the thread; use `await thread.join()` (top-level code, where the blocking overload wins: `await { await thread.join() }()`)")
    public func join(timeout: Duration) -> sending Result? {
        claim("join(timeout:)", as: 3)
        let deadline = monotonicDeadline(after: timeout)
        let code = BlockingHook.around { joinRecorded(deadline: deadline) }
        if code == ETIMEDOUT {
            state.store(0, ordering: .releasing)
            return nil
        }
        requireJoined(code, "join(timeout:)", "pthread_timedjoin_np")
        state.store(1, ordering: .releasing)
        nonisolated(unsafe) let result = box.result.take()!
        return result
    }

    /// Lets the thread run to completion on its own; its resources are freed when it exits and its result is
    /// discarded.
    ///
    /// - Precondition: The handle was neither joined nor detached before (traps).
    ///
    /// The corresponding C function is `pthread_detach`.
    public func detach() {
        claim("detach()", as: 2)
        let code = cthr_thread_detach(handle)
        require(code == 0, "PosixThread\(describeName).detach(): pthread_detach failed with \(errnoName(code))")
        box.detached()
    }

    /// Joins until `deadline` (`.max`: forever) with the wait recorded for snapshots and, past the grace period,
    /// checked for a wait cycle (``WaitRecording``). Returns 0, `ETIMEDOUT` or the join's error.
    private func joinRecorded(deadline: UInt64) -> CInt {
        WaitRecording.recordingCycleChecked(
            .join,
            on: self,
            owner: UInt32(bitPattern: box.threadID.load(ordering: .acquiring)),
            deadline: deadline
        ) { until in
            until == .max ? cthr_thread_join(handle, nil) : cthr_thread_join_until(handle, nil, until)
        }
    }

    /// Whether this handle names the calling thread.
    public var isCurrent: Bool { cthr_thread_equal(handle, cthr_thread_self()) }

    private var describeName: String { name.map { " \"\($0)\"" } ?? "" }

    /// Moves the state from joinable to `next`, trapping if it was already joined or detached, or a timed join
    /// waits on it.
    func claim(_ operation: String, as next: UInt8) {
        let (exchanged, previous) = state.compareExchange(expected: 0, desired: next, ordering: .acquiringAndReleasing)
        if !exchanged {
            let what =
                switch previous {
                case 1: "was already joined"
                case 2: "was already detached"
                default: "is being joined by a join(timeout:) on another thread"
                }
            threadingFatal("PosixThread\(describeName).\(operation): the thread \(what)")
        }
    }

    /// Traps unless a join returned 0: `EDEADLK` (the thread joining itself) gets its own message.
    func requireJoined(_ code: CInt, _ operation: String, _ function: String) {
        require(
            code != EDEADLK,
            "PosixThread\(describeName).\(operation): called on thread \(currentThreadID) for itself (this would "
                + "deadlock)"
        )
        require(code == 0, "PosixThread\(describeName).\(operation): \(function) failed with \(errnoName(code))")
    }
}
