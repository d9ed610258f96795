// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import CThreading

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Converts a timeout into an absolute deadline in nanoseconds on `CLOCK_MONOTONIC`, the form every CThreading
/// timed call takes.
///
/// A zero or negative timeout is a deadline that has already passed (`now`): the call still makes one attempt, so a
/// free lock is taken. A timeout too large to represent saturates at `UInt64.max`, which the C layer treats as "no
/// deadline".
@usableFromInline
func monotonicDeadline(after timeout: Duration) -> UInt64 {
    let (seconds, attoseconds) = timeout.components
    if seconds < 0 || (seconds == 0 && attoseconds <= 0) { return cthr_clock_now_ns() }
    let (whole, overflow) = UInt64(seconds).multipliedReportingOverflow(by: 1_000_000_000)
    if overflow { return .max }
    let fraction = attoseconds > 0 ? UInt64(attoseconds / 1_000_000_000) : 0
    let (nanoseconds, overflow2) = whole.addingReportingOverflow(fraction)
    if overflow2 { return .max }
    return cthr_clock_deadline_after(nanoseconds)
}

/// The calling thread's kernel thread id, cached per thread (used in diagnostics and owner checks).
@usableFromInline
var currentThreadID: UInt32 { cthr_lock_self() }

/// Describes a lock for diagnostics: its type and name, or its address when unnamed.
func lockDescription(_ type: String, _ name: String?, _ object: AnyObject) -> String {
    if let name { return "\(type) \"\(name)\"" }
    return "\(type) at \(ObjectIdentifier(object))"
}

/// The C name of an errno value for trap messages.
func errnoName(_ code: CInt) -> String {
    ThreadingError.cName(of: code)
}

/// Writes `text` to standard error (file descriptor 2, a server's log) in one `write` call where it can, without
/// touching the C `stderr` stream: for warnings and for the lines printed right before the process stops.
func writeStandardError(_ text: String) {
    text.utf8CString.withUnsafeBufferPointer { bytes in
        _ = write(2, bytes.baseAddress, bytes.count - 1)
    }
}

/// Stops the process with `message` on standard error, in every build configuration (unlike `precondition`,
/// whose message `-O` builds drop): misuse diagnostics must name the lock and thread in production too.
@usableFromInline
func threadingFatal(_ message: String, file: StaticString = #fileID, line: UInt = #line) -> Never {
    fatalError(message, file: file, line: line)
}

/// Traps with `message` (see `threadingFatal`) unless `condition` holds.
@inline(__always)
@usableFromInline
func require(
    _ condition: Bool,
    _ message: @autoclosure () -> String,
    file: StaticString = #fileID,
    line: UInt = #line
) {
    if _slowPath(!condition) { threadingFatal(message(), file: file, line: line) }
}

/// The address of `object`, as an identity that is never dereferenced (what a worker runs, ``WorkerActivity/subject``;
/// the queues a waiting thread holds, ``HeldQueues``).
@inline(__always)
func objectAddress(_ object: AnyObject) -> UInt {
    UInt(bitPattern: Unmanaged.passUnretained(object).toOpaque())
}

/// `1.5 s`, `250 ms`, `40 µs`, `300 ns`: a duration for a report.
func formatDuration(_ nanoseconds: UInt64) -> String {
    if nanoseconds >= 10_000_000_000 { return "\(nanoseconds / 1_000_000_000) s" }
    if nanoseconds >= 1_000_000_000 {
        let tenths = nanoseconds / 100_000_000
        return "\(tenths / 10).\(tenths % 10) s"
    }
    if nanoseconds >= 1_000_000 { return "\(nanoseconds / 1_000_000) ms" }
    if nanoseconds >= 1_000 { return "\(nanoseconds / 1_000) µs" }
    return "\(nanoseconds) ns"
}
