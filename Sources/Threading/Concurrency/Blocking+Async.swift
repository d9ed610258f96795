// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

/// Runs `body`, a call that blocks, on a thread of ``WorkerPool/blocking`` and suspends the calling task until it
/// returned: the waits that have no completion callback (`pthread_join`, `rcu_barrier`, a ``Once`` body run by
/// another thread) block a blocking-pool thread instead of a cooperative one.
func awaitOnBlockingPool<Result>(_ body: @escaping @Sendable () -> sending Result) async -> sending Result {
    await withUnsafeContinuation { (continuation: UnsafeContinuation<Result, Never>) in
        Engine.sharedBlocking.submit(
            .job { continuation.resume(returning: body()) },
            lane: QoS.default.rawValue
        )
    }
}
