// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import CThreading

/// The main queue's pool: a ``SerialCore`` whose drains run only on the process's main thread, inside
/// `MainQueue.run()` / `drain(until:)` / `runUntilIdle()`.
///
/// Scheduling a drain stores 1 in `signal` and wakes the main thread, which takes the token (exchange to 0) and
/// drains while holding the main queue's drain lock.
final class MainLoop: @unchecked Sendable {
    static let shared = MainLoop()

    let core = SerialCore(label: "threading.main", qos: .userInteractive, target: nil, main: true)
    private let signalWord = FutexWord.allocate()

    func signal() {
        signalWord.store(1)
        signalWord.wake()
    }

    /// Drains the main queue once if a drain is scheduled; otherwise, with `wait`, sleeps until one is or `deadline`
    /// passes. Returns whether a drain ran. Main thread only.
    @discardableResult
    func drainOnce(_ context: ThreadContext, wait: Bool, deadline: UInt64) -> Bool {
        if signalWord.exchange(0) == 1 {
            core.drain(context)
            return true
        }
        guard wait else { return false }
        signalWord.wait(expected: 0, deadline: deadline)
        if signalWord.exchange(0) == 1 {
            core.drain(context)
            return true
        }
        return false
    }
}
