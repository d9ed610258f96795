// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import CThreading
import Synchronization

/// The one lock behind every ``Job``'s state and the dependency graph between jobs.
///
/// A single lock keeps cycle detection exact: an edge is checked and added while no other thread can add or remove
/// an edge or finish a job. Jobs are coarse units of work (each one runs a closure on the worker pool), so one short
/// critical section per transition costs nothing measurable next to the work itself. Lock order: a ``JobQueue``'s
/// lock may be held while taking this one, never the reverse; no user code runs while it is held.
enum JobGraph {
    static let lock = RuntimeLock.make()

    /// Numbers unnamed jobs (`job-1`, `job-2`, ...).
    static let counter = Atomic<Int>(0)
}

/// A weak reference to a dependent job (dependencies do not keep their dependents alive).
struct WeakJob {
    weak var job: Job?
}
