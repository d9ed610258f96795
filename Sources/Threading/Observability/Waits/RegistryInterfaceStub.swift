// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

// A stand-in for the pools-and-queues registry of the other half of the observability work, deleted when that
// half is merged: until then no `sync` wait names the thread running its queue, so no cycle goes through a `sync`.

/// The registry of pools, queues and job queues (stand-in).
enum RuntimeRegistry {
    /// The kernel thread id of the thread running an item or drain of `queue` (a queue core) now, or nil.
    static func runningThread(ofQueue queue: AnyObject) -> Int32? { nil }
}
