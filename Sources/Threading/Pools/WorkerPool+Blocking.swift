// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

/// Runs `body`, a call that blocks, on a thread of ``WorkerPool/blocking`` and suspends the calling task until it
/// returned: the waits that have no completion callback (`pthread_join`, `rcu_barrier`, a ``Once`` body run by
/// another thread) block a blocking-pool thread instead of a cooperative one. Not cancellable.
func awaitOnBlockingPool<Result>(_ body: @escaping @Sendable () -> sending Result) async -> sending Result {
    await AsyncResumeOnce<Result>.waitUncancellable { node in
        PoolCore.sharedBlocking.schedule(.job { node.deliver(returning: body()) }, lane: QoS.default.rawValue)
    }
}
