// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

/// The `fork()` handlers (see ``ForkRegistry``) every queue kind shares; a kind resets its own state in
/// ``QueueCore/resetForChild(heldByForkingThread:)``.
extension QueueCore {
    /// `fork()` prepare handler (see ``ForkRegistry``): holds the queue lock across the fork.
    func forkPrepare() { lock.lock() }

    /// `fork()` handler in the parent.
    func forkParent() { lock.unlock() }

    /// `fork()` handler in the child (one thread; the queue lock held by `forkPrepare`): drops the items the parent
    /// queued (abandoned, never released) and the claims of the parent's dead threads on the queue, so the queue
    /// is idle and usable. A suspension stays (it is the user's). Kept only when the forking thread itself is
    /// running the queue (it goes on and releases it): its drain lock, barrier or reader counts.
    func forkChild(_ forking: ThreadContext) {
        let held = forking.frameIndex(holding: self) >= 0
        items.abandon()
        var kept: UInt32 = suspendCount > 0 ? QueueState.suspended : 0
        if held {
            let transient = QueueState.hasItems | QueueState.parked | QueueState.draining | QueueState.suspended
            kept |= word.loadRelaxed() & ~transient
        }
        word.storeRelaxed(kept)
        resetForChild(heldByForkingThread: held)
        lock.unlock()
    }

}
