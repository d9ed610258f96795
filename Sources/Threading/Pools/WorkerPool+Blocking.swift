// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import Synchronization

/// Runs `body`, a call that blocks, on a thread of ``WorkerPool/blocking`` and suspends the calling task until it
/// returned: the waits that have no completion callback (`pthread_join`, `rcu_barrier`, a ``Once`` body run by
/// another thread) block a blocking-pool thread instead of a cooperative one.
func awaitOnBlockingPool<Result>(_ body: @escaping @Sendable () -> sending Result) async -> sending Result {
    let ordering = ResumeOrdering()
    defer { ordering.observe() }
    return await withUnsafeContinuation { (continuation: UnsafeContinuation<Result, Never>) in
        PoolCore.sharedBlocking.schedule(
            .job {
                let result = body()
                ordering.publish()
                continuation.resume(returning: result)
            },
            lane: QoS.default.rawValue
        )
    }
}

/// Makes the order between a continuation's resumer and the resumed task visible to ThreadSanitizer. The Swift
/// runtime orders them with atomics inside libswift_Concurrency, which is not instrumented (swiftlang/swift#57803),
/// so without this TSan reports what the resumer wrote (a result built on a pool thread) against what the task reads
/// after its `await`. The resumer calls ``publish()`` right before `resume`, the task ``observe()`` right after its
/// `await` returns: a release store and an acquire load of one atomic. The async waits whose state object already
/// holds an atomic that the resumer writes use that one instead.
final class ResumeOrdering: Sendable {
    private let flag = Atomic<Bool>(false)

    init() {}

    func publish() { flag.store(true, ordering: .releasing) }

    func observe() { _ = flag.load(ordering: .acquiring) }
}
