// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The one error type of Threading: a POSIX error code, the operation that failed, and what it was about.
///
/// Modelled on swift-system's `Errno`: errors compare by ``code`` only, so a caller matches them against the named
/// values (`catch ThreadingError.tryAgain`) whatever the operation and detail. Errors are thrown only where the
/// caller can act (thread creation refused, a stack size the system rejects, key exhaustion, a dependency cycle);
/// misuse nobody can recover from traps instead, and expected outcomes (a lock that is busy, a wait that timed out)
/// are return values.
///
/// `ThreadingError` is a value type holding only `Sendable` values, so it is `Sendable`.
public struct ThreadingError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The POSIX error code (`errno` value).
    public let code: CInt

    /// The operation that failed, such as `"pthread_create"`; empty for the named values.
    public let operation: String

    /// What the operation was about (a thread name, a stack size, the jobs of a cycle); may be empty.
    public let detail: String

    /// Creates an error from a POSIX error code.
    ///
    /// - Parameters:
    ///   - code: The `errno` value.
    ///   - operation: The operation that failed.
    ///   - detail: What the operation was about.
    public init(code: CInt, operation: String = "", detail: String = "") {
        self.code = code
        self.operation = operation
        self.detail = detail
    }

    /// Resources are temporarily unavailable: the system refused a thread (`RLIMIT_NPROC`, memory), or thread-specific
    /// data keys are exhausted.
    ///
    /// The corresponding C error is `EAGAIN`.
    public static let tryAgain = ThreadingError(code: EAGAIN)

    /// An argument was rejected, such as a stack size the system cannot map.
    ///
    /// The corresponding C error is `EINVAL`.
    public static let invalidArgument = ThreadingError(code: EINVAL)

    /// Not enough memory.
    ///
    /// The corresponding C error is `ENOMEM`.
    public static let outOfMemory = ThreadingError(code: ENOMEM)

    /// The operation is not permitted, such as raising a thread's priority without the privilege.
    ///
    /// The corresponding C error is `EPERM`.
    public static let notPermitted = ThreadingError(code: EPERM)

    /// The operation would deadlock; also used for a job dependency cycle.
    ///
    /// The corresponding C error is `EDEADLK`.
    public static let deadlock = ThreadingError(code: EDEADLK)

    /// The resource is busy.
    ///
    /// The corresponding C error is `EBUSY`.
    public static let busy = ThreadingError(code: EBUSY)

    /// A deadline passed.
    ///
    /// The corresponding C error is `ETIMEDOUT`.
    public static let timedOut = ThreadingError(code: ETIMEDOUT)

    /// The system does not support the operation, such as a priority-inheriting mutex.
    ///
    /// The corresponding C error is `ENOTSUP`.
    public static let notSupported = ThreadingError(code: ENOTSUP)

    /// The worker pool that would run the work was shut down: it takes no new work (``WorkerPool/run(fileID:line:_:)``,
    /// ``WorkQueue/run(_:)``), or it stopped before the work started (a ``WorkerPool/shutdown(timeout:)`` that gave
    /// up on it).
    ///
    /// The corresponding C error is `ESHUTDOWN`.
    public static let shutDown = ThreadingError(code: ESHUTDOWN)

    /// A human-readable description: operation, the system's message, the C name of the code, and the detail.
    public var description: String {
        var text = operation.isEmpty ? "" : "\(operation): "
        text += String(cString: strerror(code))
        text += " (\(Self.cName(of: code)))"
        if !detail.isEmpty { text += ": \(detail)" }
        return text
    }

    /// Errors are equal when their codes are.
    public static func == (lhs: ThreadingError, rhs: ThreadingError) -> Bool { lhs.code == rhs.code }

    /// Hashes the code only, consistent with `==`.
    public func hash(into hasher: inout Hasher) { hasher.combine(code) }

    /// Lets `catch ThreadingError.tryAgain` match any error with that code.
    public static func ~= (pattern: ThreadingError, value: any Error) -> Bool {
        (value as? ThreadingError)?.code == pattern.code
    }

    static func cName(of code: CInt) -> String {
        switch code {
        case EAGAIN: return "EAGAIN"
        case EINVAL: return "EINVAL"
        case ENOMEM: return "ENOMEM"
        case EPERM: return "EPERM"
        case EDEADLK: return "EDEADLK"
        case EBUSY: return "EBUSY"
        case ETIMEDOUT: return "ETIMEDOUT"
        case ENOTSUP: return "ENOTSUP"
        case ESHUTDOWN: return "ESHUTDOWN"
        case ESRCH: return "ESRCH"
        case EACCES: return "EACCES"
        case ERANGE: return "ERANGE"
        case EOVERFLOW: return "EOVERFLOW"
        default: return "errno \(code)"
        }
    }
}

extension ThreadingError {
    /// Throws a `ThreadingError` when a CThreading call returned a nonzero code.
    @inline(__always)
    static func check(
        _ code: CInt,
        _ operation: @autoclosure () -> String,
        detail: @autoclosure () -> String = ""
    )
        throws(ThreadingError)
    {
        if code != 0 { throw ThreadingError(code: code, operation: operation(), detail: detail()) }
    }
}
