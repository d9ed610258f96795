// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

/// How the server's `/blocking` endpoint runs its blocking call.
///
/// The raw values are the server's `--offload` argument. A value type with no references, so it is `Sendable`.
public enum OffloadMode: String, CaseIterable, Sendable {
    /// Threading's process-wide blocking pool, ``Threading/WorkerPool/blocking``, through `WorkerPool.run`.
    case threadingBlocking = "threading-blocking"
    /// A Threading CPU pool of `threads` threads as the task's executor (`withTaskExecutorPreference`).
    case threadingPool = "threading-pool"
    /// NIO's process-wide thread pool, `NIOThreadPool.singleton.runIfActive` (as many threads as CPUs).
    case nioSingleton = "nio-singleton"
    /// A `NIOThreadPool(numberOfThreads: threads)` of the server's own.
    case nioSized = "nio-sized"
    /// No offload: the handler blocks the thread that runs it.
    case inline
    /// A `Task.detached` on the global concurrent executor (which then blocks a cooperative thread).
    case detached
    /// No offload, with NIO's event loops as Swift Concurrency's global executor
    /// (`NIOSingletons.unsafeTryInstallSingletonPosixEventLoopGroupAsConcurrencyGlobalExecutor()`, installed by
    /// ``installGlobalExecutor(for:)`` at start-up): the handler blocks an event loop.
    case inlineNIOExecutor = "inline-nio-executor"
    /// No offload, with ``Threading/WorkerPool/shared`` as Swift Concurrency's global executor
    /// (`WorkerPool.installAsGlobalConcurrentExecutor()`, installed by ``installGlobalExecutor(for:)`` at start-up):
    /// the handler blocks a pool worker, and the pool compensates.
    case inlineThreadingExecutor = "inline-threading-executor"
}
