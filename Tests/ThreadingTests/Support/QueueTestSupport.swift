// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import CThreading
import Glibc
import Synchronization
import Testing

@testable import Threading

/// An append-only log shared by threads ("print" of the ordering scenarios).
final class QueueLog: Sendable {
    private let entries = QueueTestLocked<[Int]>([])

    func append(_ value: Int) { entries.withLock { $0.append(value) } }

    var values: [Int] { entries.withLock { $0 } }

    var count: Int { entries.withLock { $0.count } }

    /// Waits until `count` entries are logged or `seconds` passed; returns whether they were.
    func wait(for count: Int, seconds: Double = 10) -> Bool {
        queueTestWait(seconds: seconds) { self.count >= count }
    }
}

/// Polls `condition` every `pollNs` (a millisecond by default) until it holds or `seconds` passed.
func queueTestWait(seconds: Double = 10, pollNs: UInt64 = 1_000_000, _ condition: () -> Bool) -> Bool {
    let deadline = cthr_clock_now_ns() + UInt64(seconds * 1_000_000_000)
    while !condition() {
        if cthr_clock_now_ns() >= deadline { return condition() }
        _ = cthr_sleep_ns(pollNs)
    }
    return true
}

/// Counts live instances (to check that closures and specific values are released).
final class QueueLifeCounter: Sendable {
    let live = Atomic<Int>(0)
    let deinits = Atomic<Int>(0)
}

final class QueueTracked: Sendable {
    let counter: QueueLifeCounter
    let id: Int

    init(_ counter: QueueLifeCounter, id: Int = 0) {
        self.counter = counter
        self.id = id
        counter.live.add(1, ordering: .relaxed)
    }

    deinit {
        counter.live.subtract(1, ordering: .relaxed)
        counter.deinits.add(1, ordering: .relaxed)
    }
}

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
    private let lock = RuntimeLock()
    private var value: Value

    init(_ value: Value) { self.value = value }

    func withLock<R>(_ body: (inout Value) -> R) -> R {
        lock.lock()
        defer { lock.unlock() }
        return body(&value)
    }
}
