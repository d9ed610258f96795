// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Runs Dispatch's main queue — where the Swift runtime sends `@MainActor` jobs on Linux — from the ``MainQueue``,
/// so that a main thread sitting in `MainQueue.run()` (or `drain(until:)`, `runUntilIdle()`) runs `@MainActor`
/// code too, on the main thread.
///
/// Linux has no run loop: the Swift runtime enqueues main-actor jobs on Dispatch's main queue, which only
/// `dispatch_main()` or a run loop drains. libdispatch offers run loops two entry points (the ones
/// swift-corelibs-foundation's `RunLoop` uses): `_dispatch_get_main_queue_handle_4CF()`, an `eventfd` that becomes
/// readable when the main queue has work, and `_dispatch_main_queue_callback_4CF()`, which runs that work and must
/// be called on the main thread. The bridge is one thread that sleeps in `poll` on the `eventfd`; when it fires, it
/// resets it and submits one main-queue task that calls the callback. So both queues are drained by the one main
/// thread, each in its own FIFO order, interleaved by when their work arrived.
///
/// Both entry points are looked up with `dlsym` (libdispatch is loaded with the Swift concurrency runtime): if a
/// libdispatch ever lacks them, the bridge stays off and says so once on stderr.
enum DispatchMainBridge {
    private typealias HandleFunction = @convention(c) () -> Int32
    private typealias CallbackFunction = @convention(c) (UnsafeMutableRawPointer?) -> Void

    /// Whether a main-queue task that runs the callback is queued and not yet started.
    private static let scheduled = Atomic<Bool>(false)

    private static let entryPoints: (handle: HandleFunction, callback: CallbackFunction)? = {
        guard let handle = dlsym(nil, "_dispatch_get_main_queue_handle_4CF"),
            let callback = dlsym(nil, "_dispatch_main_queue_callback_4CF")
        else {
            RuntimeObservation.report(
                .warning,
                .warning,
                "Threading: this libdispatch has no main-queue run-loop entry points; @MainActor work does not run "
                    + "inside MainQueue.run()"
            )
            return nil
        }
        return (unsafeBitCast(handle, to: HandleFunction.self), unsafeBitCast(callback, to: CallbackFunction.self))
    }()

    /// Starts the bridge thread (once per process).
    static func start() { _ = started }

    private static let started: Bool = {
        guard let entryPoints else { return false }
        let fd = entryPoints.handle()
        guard fd >= 0 else { return false }
        do {
            let thread = try PosixThread(name: "threading.dmain") {
                while true { waitAndSchedule(fd) }
            }
            thread.detach()
            return true
        } catch {
            RuntimeObservation.report(
                .resourceRefused,
                .warning,
                "Threading: could not start the Dispatch main-queue bridge thread (\(error))"
            )
            return false
        }
    }()

    /// Runs the Dispatch main queue's pending work now. Main thread only.
    static func drainNow() {
        guard started, let entryPoints else { return }
        entryPoints.callback(nil)
    }

    private static func waitAndSchedule(_ fd: Int32) {
        var request = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        guard poll(&request, 1, -1) > 0 else { return }
        var counter: UInt64 = 0
        _ = read(fd, &counter, MemoryLayout<UInt64>.size)  // resets the eventfd (non-blocking)
        if scheduled.exchange(true, ordering: .acquiringAndReleasing) { return }
        MainQueue.shared.async {
            scheduled.store(false, ordering: .releasing)
            drainNow()
        }
    }
}
