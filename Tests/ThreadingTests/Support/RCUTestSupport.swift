// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import CThreading
import Glibc
import Synchronization
import Testing

/// Raw-pthread helpers for the RCU suites (every wait has a deadline; threads can be started together).
enum RCUTestSupport {
    /// A boolean shared between threads.
    final class Flag: Sendable {
        private let storage = Atomic<Bool>(false)
        func set(_ value: Bool = true) { storage.store(value, ordering: .sequentiallyConsistent) }
        var isSet: Bool { storage.load(ordering: .sequentiallyConsistent) }
    }

    /// A counter shared between threads.
    final class Counter: Sendable {
        private let storage = Atomic<Int>(0)
        @discardableResult
        func add(_ delta: Int = 1) -> Int { storage.add(delta, ordering: .sequentiallyConsistent).newValue }
        var value: Int { storage.load(ordering: .sequentiallyConsistent) }
    }

    /// Lets racing threads start together: each calls ``arriveAndWait()``; the test calls ``go(expecting:)``.
    final class StartLine: Sendable {
        private let arrived = Counter()
        private let started = Flag()

        func arriveAndWait() {
            arrived.add()
            RCUTestSupport.waitUntil { started.isSet }
        }

        func go(expecting count: Int) {
            RCUTestSupport.waitUntil { arrived.value == count }
            started.set()
        }
    }

    final class ThreadBody: Sendable {
        let body: @Sendable () -> Void
        let finished = Flag()
        init(_ body: @escaping @Sendable () -> Void) { self.body = body }
    }

    /// A started raw pthread.
    typealias Started = (thread: pthread_t, finished: Flag)

    /// Starts a raw pthread running `body`.
    static func start(_ body: @escaping @Sendable () -> Void) -> Started {
        let threadBody = ThreadBody(body)
        let context = Unmanaged.passRetained(threadBody).toOpaque()
        var thread = pthread_t()
        let code = pthread_create(
            &thread,
            nil,
            { raw in
                let threadBody = Unmanaged<ThreadBody>.fromOpaque(raw!).takeRetainedValue()
                threadBody.body()
                threadBody.finished.set()
                return nil
            },
            context
        )
        precondition(code == 0, "pthread_create failed: \(code)")
        return (thread, threadBody.finished)
    }

    /// Joins a thread, failing the test (and leaving the thread) if it has not finished within `seconds`.
    static func join(_ started: Started, within seconds: Double = 60) {
        if waitUntil(within: seconds, { started.finished.isSet }) {
            pthread_join(started.thread, nil)
        }
    }

    /// Waits until `condition` holds, recording an issue after `seconds`.
    @discardableResult
    static func waitUntil(within seconds: Double = 60, _ condition: () -> Bool) -> Bool {
        let deadline = cthr_clock_deadline_after(UInt64(seconds * 1e9))
        while !condition() {
            if cthr_clock_now_ns() > deadline {
                Issue.record("condition not reached within \(seconds) s")
                return false
            }
            _ = cthr_sleep_ns(50_000)
        }
        return true
    }
}
