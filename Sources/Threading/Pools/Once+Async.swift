// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

extension Once {
    /// Runs `body` if no call has run a body on this flag yet; otherwise suspends the task until that run has
    /// finished.
    ///
    /// Returns at once when a body has run. Otherwise the call (the body, or the wait for another caller's body)
    /// runs on a thread of ``WorkerPool/blocking`` while the task is suspended, so no cooperative thread blocks.
    ///
    /// Not cancellable: the body runs to its end once started, and what it sets up is what every caller waits
    /// for.
    ///
    /// - Parameter body: The one-time work.
    public func run(_ body: @escaping @Sendable () -> Void) async {
        if hasRun { return }
        await awaitOnBlockingPool { self.run(body) }
    }
}
