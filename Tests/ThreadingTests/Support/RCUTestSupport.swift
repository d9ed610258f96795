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

    /// Lets racing threads start together: each calls ``arriveAndWait()``; the test calls ``go(expecting:)``.
    final class StartLine: Sendable {
        private let arrived = TestCounter()
        private let started = Flag()

        func arriveAndWait() {
            arrived.add()
            if !waitUntil(seconds: 60, every: 50_000, { started.isSet }) {
                Issue.record("the start line never opened")
            }
        }

        func go(expecting count: Int) {
            if !waitUntil(seconds: 60, every: 50_000, { arrived.value == count }) {
                Issue.record("\(arrived.value) of \(count) threads arrived at the start line")
            }
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
        if waitUntil(seconds: seconds, every: 50_000, { started.finished.isSet }) {
            pthread_join(started.thread, nil)
        } else {
            Issue.record("a thread did not finish within \(seconds) s")
        }
    }
}
