// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import Synchronization

extension ConcurrentQueue {
    /// Calls `work(0)`, ..., `work(iterations - 1)` in parallel and returns when all calls returned.
    ///
    /// The calling thread takes part: it claims indices like the pool helpers do (at most `cores - 1` of them are
    /// asked for), so the call completes even when every pool worker is busy or blocked — then the caller simply
    /// does all the work. Helpers that start after the last index was claimed return without touching `work`.
    ///
    /// - Parameters:
    ///   - iterations: How many calls.
    ///   - qos: The lane of the helpers.
    ///   - work: The body, called concurrently with distinct indices.
    public static func concurrentPerform(iterations: Int, qos: QoS = .default, execute work: (Int) -> Void) {
        guard iterations > 0 else { return }
        withoutActuallyEscaping(work) { escapable in
            // The body lives in storage the caller owns and frees after every index finished; late helpers only
            // touch the shared counters, so nothing retains the body past this call.
            let body = UnsafeMutablePointer<(Int) -> Void>.allocate(capacity: 1)
            body.initialize(to: escapable)
            defer {
                body.deinitialize(count: 1)
                body.deallocate()
            }
            let state = PerformState(iterations: iterations, body: body)
            let poolCore = PoolCore.shared
            let helpers = Swift.min(iterations, poolCore.cores) - 1
            for _ in 0..<Swift.max(0, helpers) {
                poolCore.schedule(.job { state.participate() }, lane: qos.rawValue)
            }
            state.participate()
            state.waitAll()
        }
    }
}

/// Shared state of one `concurrentPerform`.
private final class PerformState: @unchecked Sendable {
    let iterations: Int
    /// Valid while the caller waits in `waitAll` (only called for a claimed index, which the caller waits for).
    let body: UnsafeMutablePointer<(Int) -> Void>
    let next = Atomic<Int>(0)
    let finished = Atomic<Int>(0)
    /// A futex flag (``FutexWord/isFlagSet``), set by whoever finishes the last iteration.
    let done = FutexWord.allocate()

    init(iterations: Int, body: UnsafeMutablePointer<(Int) -> Void>) {
        self.iterations = iterations
        self.body = body
    }

    func participate() {
        while true {
            let index = next.add(1, ordering: .relaxed).oldValue
            if index >= iterations { return }
            body.pointee(index)
            if finished.add(1, ordering: .acquiringAndReleasing).newValue == iterations {
                done.setFlag()
            }
        }
    }

    func waitAll() {
        if done.isFlagSet { return }
        _ = done.blockingWaitUntilFlagSet(deadline: .max)
    }
}
