// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import CThreading
import Glibc
import Synchronization
import Testing

@testable import Threading

/// A one-shot gate threads wait on (with a deadline) until it opens.
final class QueueGate: Sendable {
    private let group = WorkGroup()

    init() { group.enter() }

    func open() { group.leave() }

    func wait(seconds: Double = 10) -> Bool { group.wait(timeout: .seconds(seconds)) }
}

/// Runs `body` on a new thread and waits for it (joins).
func queueTestOnNewThread(_ body: @escaping @Sendable () -> Void) {
    final class Box: @unchecked Sendable {
        let body: @Sendable () -> Void
        init(_ body: @escaping @Sendable () -> Void) { self.body = body }
    }
    let context = Unmanaged.passRetained(Box(body)).toOpaque()
    var handle = pthread_t()
    let code = cthr_thread_create(
        &handle,
        nil,
        { raw in
            let box = Unmanaged<Box>.fromOpaque(raw!).takeRetainedValue()
            box.body()
            return nil
        },
        context
    )
    precondition(code == 0, "cthr_thread_create: \(code)")
    _ = cthr_thread_join(handle, nil)
}

/// Runs `body` on a new thread that the pool treats as the process's main thread (Swift Testing parks the real
/// main thread in `dispatch_main`, so no test can run there). Callers must be in a `.serialized` suite.
func queueTestOnDesignatedMainThread(_ body: @escaping @Sendable () -> Void) {
    queueTestOnNewThread {
        RuntimeThread.designateMainForTesting()
        body()
        RuntimeThread.undesignateMainForTesting()
    }
}

/// A value behind the pool's lock. (The tests avoid `Synchronization.Mutex`: on Linux it is a futex driven by
/// uninstrumented standard-library atomics, so ThreadSanitizer reports the data it guards as racing.)
final class QueueTestLocked<Value>: @unchecked Sendable {
    private let lock = RuntimeLock.make()
    private var value: Value

    init(_ value: Value) { self.value = value }

    func withLock<R>(_ body: (inout Value) -> R) -> R {
        lock.lock()
        defer { lock.unlock() }
        return body(&value)
    }
}
