// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

extension RCU {
    /// Suspends the task until a grace period has passed: afterwards no reader can still see a value that an
    /// ``RCUValue`` or ``RCUMap`` replaced before the call.
    ///
    /// No thread waits: the task resumes from a callback that liburcu runs after the grace period
    /// (``callAfterGracePeriod(_:)``, `call_rcu`). A task never runs inside a read section across a suspension
    /// (read sections are synchronous closures), so the synchronous form's read-section trap cannot apply.
    ///
    /// Not cancellable: the grace period ends on its own, soon.
    ///
    /// - Precondition: Not in a read-only forked child (traps, as ``callAfterGracePeriod(_:)``).
    public static func synchronize() async {
        await AsyncResumeOnce<Void>.waitUncancellable { node in
            callAfterGracePeriod { node.deliver(returning: ()) }
        }
    }

    /// Suspends the task until every deferred release scheduled so far has run.
    ///
    /// `rcu_barrier` has no completion callback, so it runs on a thread of ``WorkerPool/blocking`` while the task
    /// is suspended. Not cancellable.
    ///
    /// - Precondition: As for the synchronous ``barrier()``; not in a read-only forked child (traps).
    public static func barrier() async {
        await awaitOnBlockingPool { RCU.barrier() }
    }
}
