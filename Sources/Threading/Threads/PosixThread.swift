// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import CThreading

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// An operating-system thread running a closure, and the unique handle to it: ``join()`` waits for the closure
/// and returns its result; ``detach()`` lets the thread finish on its own.
///
/// `PosixThread` is non-copyable and `join()`/`detach()` consume it, so joining or detaching twice, or joining a
/// detached thread, does not compile (POSIX leaves it undefined). A handle dropped without either is detached.
///
/// ```swift
/// let worker = try PosixThread(name: "worker") { (1...100).reduce(0, +) }
/// let sum = worker.join()  // 5050
/// ```
///
/// The body is `@Sendable` (it runs on another thread) and returns a `sending` result, which `join()` hands to
/// the caller: the result may be a non-`Sendable` value the body created.
///
/// Facts about the calling thread (``isMainThread``, ``currentID``, ``currentName``, ``currentStackSize``,
/// ``sleep(for:)``, ``yield()``) are static members on `PosixThread` (that is, `PosixThread<Void>`).
public struct PosixThread<Result>: ~Copyable {
    @usableFromInline
    let handle: pthread_t

    let box: Unmanaged<PosixThreadBox<Result>>

    /// Starts a new thread running `body`.
    ///
    /// - Parameters:
    ///   - name: The thread's name as debuggers and `ps -L` show it (truncated to 15 bytes, Linux's limit).
    ///   - stackSize: The stack size in bytes; `nil` for the system default. Sizes below the system minimum are
    ///     raised to it and sizes are rounded up to the page size.
    ///   - body: The work; its result is returned by ``join()``.
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
        var attributes = cthr_thread_attr_t(stack_size: stackSize.map { Int($0) } ?? 0, detached: 0, name: nil)
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
        self.box = .passRetained(box)  // the handle's reference
    }

    deinit {
        _ = cthr_thread_detach(handle)
        box.release()
    }

    /// Waits for the thread to finish and returns what its body returned.
    ///
    /// - Returns: The body's result.
    /// - Precondition: Not called on the thread itself (traps: it would wait for itself).
    ///
    /// The corresponding C function is `pthread_join`.
    public consuming func join() -> sending Result {
        let handle = self.handle
        let box = self.box.takeRetainedValue()
        discard self
        let code = cthr_thread_join(handle, nil)
        precondition(
            code != EDEADLK,
            "PosixThread.join(): called on thread \(currentThreadID) for itself (this would deadlock)"
        )
        precondition(code == 0, "PosixThread.join(): pthread_join failed with \(errnoName(code))")
        nonisolated(unsafe) let result = box.result.take()!
        return result
    }

    /// Lets the thread run to completion on its own; its resources are freed when it exits and its result is
    /// discarded.
    ///
    /// The corresponding C function is `pthread_detach`.
    public consuming func detach() {
        let handle = self.handle
        let box = self.box
        discard self
        let code = cthr_thread_detach(handle)
        box.release()
        precondition(code == 0, "PosixThread.detach(): pthread_detach failed with \(errnoName(code))")
    }

    /// Whether this handle names the calling thread.
    public var isCurrent: Bool { cthr_thread_equal(handle, cthr_thread_self()) }
}
