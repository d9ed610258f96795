// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import CThreading

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The non-generic face of a thread's box, so one C entry point serves every result type.
class PosixThreadRunnable: @unchecked Sendable {
    func run() {}
}

/// What a ``PosixThread`` runs and what it leaves behind: the body, and its result once it has returned.
///
/// Retained once for the new thread (released when the body has run) and once for the handle (released by `join`
/// or `detach`). `result` is written by the thread before it exits and read by the joiner after
/// `pthread_join`, which orders the two, so the box is `@unchecked Sendable`.
final class PosixThreadBox<Result>: PosixThreadRunnable, @unchecked Sendable {
    let body: @Sendable () -> sending Result
    nonisolated(unsafe) var result: Result?

    init(_ body: @escaping @Sendable () -> sending Result) {
        self.body = body
    }

    override func run() {
        result = body()
    }
}

/// The entry point of every ``PosixThread``: runs the box's body and drops the thread's reference to the box.
let posixThreadEntry: cthr_thread_body_t = { context in
    let box = Unmanaged<PosixThreadRunnable>.fromOpaque(context!).takeRetainedValue()
    box.run()
    return nil
}
