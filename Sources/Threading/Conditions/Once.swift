// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import CThreading

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Runs a body exactly once, however many threads call ``run(_:)-7nlk2``: the first caller runs it, concurrent callers
/// block until it has finished, and later callers return at once.
///
/// Built on CThreading's futex once flag (`cthr_once_t`), which, unlike `pthread_once`, passes a context, so the
/// body can be a Swift closure. Completion happens-before every return from ``run(_:)-7nlk2``: what the body wrote is
/// visible to all callers.
///
/// <!-- sample-context
/// func loadConfiguration() {}
/// -->
/// ```swift
/// let setup = Once()
/// setup.run { loadConfiguration() }
/// ```
///
/// Traps: calling ``run(_:)-7nlk2`` on the same `Once` from inside its body (it would wait for itself).
///
/// A reference type and `Sendable`: its state is the C once flag, changed only by atomic operations.
public final class Once: @unchecked Sendable {
    @usableFromInline
    let flag: UnsafeMutablePointer<cthr_once_t>

    /// Creates a flag whose body has not run.
    public init() {
        flag = .allocate(capacity: 1)
        flag.initialize(to: cthr_once_t())  // zeroed: not run
    }

    deinit {
        flag.deallocate()
    }

    /// Whether a body has finished running.
    public var hasRun: Bool { cthr_once_done(flag) }

    // The noasync advice below is one string literal (an attribute takes no concatenation).
    // swift-format-ignore
    /// Runs `body` if no call has run a body on this flag yet; otherwise waits until that run has finished.
    ///
    /// - Parameter body: The one-time work; it runs on the calling thread.
    ///
    /// - Complexity: One inlined acquire load once a body has run.
    ///
    /// The corresponding C function is `pthread_once` (here `cthr_once_fast_done`/`cthr_once_run`).
    @available(*, noasync, message: "run(_:) may block the thread; use `await once.run { }` (top-level code, where the blocking overload wins: `await { await once.run { } }()`)")
    @inlinable
    public func run(_ body: () -> Void) {
        if _fastPath(cthr_once_fast_done(flag)) { return }
        runSlow(body)
    }

    @usableFromInline
    func runSlow(_ body: () -> Void) {
        let code = withoutActuallyEscaping(body) { body in
            var closure = body
            return withUnsafeMutablePointer(to: &closure) { pointer in
                cthr_once_run(
                    flag,
                    { context in
                        context!.assumingMemoryBound(to: (() -> Void).self).pointee()
                    },
                    pointer
                )
            }
        }
        require(
            code != EDEADLK,
            "Once.run(_:): called again from inside its own body on thread \(currentThreadID) (this would deadlock)"
        )
        require(code == 0, "Once.run(_:): cthr_once_run failed with \(errnoName(code))")
    }
}
