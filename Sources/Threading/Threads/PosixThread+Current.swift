// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import CThreading

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

extension PosixThread where Result == Void {
    /// Whether the calling thread is the process's main thread.
    ///
    /// This answers "which thread", not "which queue": work synced onto a queue runs on the caller's thread.
    ///
    /// The corresponding C function is `pthread_main_np` on Darwin; on Linux the thread id equals the process id.
    public static var isMainThread: Bool { cthr_thread_is_main() }

    /// The calling thread's kernel thread id (`gettid`), as `ps -L` and debuggers show it.
    ///
    /// The corresponding C function is `gettid`.
    public static var currentID: Int32 { Int32(bitPattern: currentThreadID) }

    /// The calling thread's name, or `nil` when it cannot be read.
    ///
    /// Setting it renames the calling thread (truncated to 15 bytes, Linux's limit).
    ///
    /// The corresponding C functions are `pthread_getname_np` and `pthread_setname_np`.
    public static var currentName: String? {
        get {
            var buffer = [CChar](repeating: 0, count: Int(CTHR_THREAD_NAME_MAX) + 1)
            guard cthr_thread_get_name(&buffer, buffer.count) == 0 else { return nil }
            return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        }
        set {
            _ = (newValue ?? "").withCString { cthr_thread_set_name($0) }
        }
    }

    /// The calling thread's actual stack size in bytes.
    ///
    /// - Throws: The error of `pthread_getattr_np`.
    ///
    /// The corresponding C function is `pthread_getattr_np` + `pthread_attr_getstacksize`.
    public static func currentStackSize() throws(ThreadingError) -> Int {
        var size = 0
        try ThreadingError.check(cthr_thread_current_stack_size(&size), "pthread_getattr_np")
        return size
    }

    /// The smallest stack a ``PosixThread`` gets: 64 KiB, or the system's minimum (`PTHREAD_STACK_MIN`) where that is
    /// larger. Smaller positive requests are raised to it; 0 asks for the system default, as `nil` does.
    ///
    /// The system's minimum (16 KiB on Linux x86-64, of which glibc takes the thread-local storage) is sized for C.
    /// A Swift thread needs more before its body does anything: the library registers the thread with the
    /// runtime, and the Swift runtime builds a generic type's metadata on the first thread that uses it, a
    /// recursive demangling that was measured more than 10 KiB deep. On the bare minimum that first use overflowed
    /// the stack (a SIGSEGV that depended on which thread happened to use the type first).
    public static var minimumStackSize: Int { max(cthr_thread_stack_min(), 64 * 1024) }

    /// Suspends the calling thread for `duration` on the monotonic clock (zero or negative: returns at once).
    ///
    /// - Parameter duration: How long to sleep.
    ///
    /// The corresponding C function is `clock_nanosleep`.
    public static func sleep(for duration: Duration) {
        let deadline = monotonicDeadline(after: duration)
        let now = cthr_clock_now_ns()
        if deadline > now { _ = cthr_sleep_ns(deadline - now) }
    }

    /// Offers the processor to other runnable threads.
    ///
    /// The corresponding C function is `sched_yield`.
    public static func yield() {
        _ = cthr_thread_yield()
    }
}
