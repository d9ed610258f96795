// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import CThreading
import Glibc
import Testing

@testable import Threading

/// The process-wide pools while the process exits (see the Pools article): they are never shut down, so work
/// submitted during `exit()` (from another thread, from an `atexit` handler, from a pool task) is taken as usual; the
/// process exits with the status it was given, never crashes or hangs. Each case runs in a child process with an
/// alarm, so a hang fails the test (SIGALRM) instead of hanging the suite.
@Suite struct ProcessExitTests {
    private func output(of result: ExitTest.Result?) -> String {
        String(decoding: result?.standardOutputContent ?? [], as: UTF8.self)
    }

    /// `exit(0)` from a thread of our own while both process-wide pools run and take work, queues drain and a timer
    /// ticks: the process exits with status 0.
    @Test func exitFromAnotherThreadWhileThePoolsWork() async {
        await #expect(processExitsWith: .exitCode(0)) {
            alarm(20)
            let serial = SerialQueue(label: "exit.serial")
            let concurrent = ConcurrentQueue(label: "exit.concurrent")
            let blocking = SerialQueue(label: "exit.blocking", pool: .blocking)
            let timer = QueueTimer(queue: serial, delay: .zero, repeating: .milliseconds(1)) {}
            for _ in 0..<8 {
                concurrent.async { while true { _ = cthr_sleep_ns(100_000) } }
            }
            let feeder = try? PosixThread {
                while true {
                    serial.async {}
                    concurrent.async {}
                    blocking.async { _ = cthr_sleep_ns(50_000) }
                }
            }
            _ = cthr_sleep_ns(20_000_000)
            let exiter = try? PosixThread { exit(0) }
            _ = (timer, feeder, exiter)
            while true { _ = cthr_sleep_ns(1_000_000_000) }
        }
    }

    /// An `atexit` handler submits work to both process-wide pools and waits for it: it runs, and the process exits
    /// with the status `exit` was given.
    @Test func atexitHandlerSubmitsWorkAndWaitsForIt() async {
        let result = await #expect(processExitsWith: .exitCode(3), observing: [\.standardOutputContent]) {
            alarm(20)
            atexit {
                let group = WorkGroup()
                SerialQueue(label: "atexit.serial").async(group: group) { print("shared pool ran") }
                SerialQueue(label: "atexit.blocking", pool: .blocking).async(group: group) {
                    print("blocking pool ran")
                }
                let answered = group.wait(timeout: .seconds(10))
                print("atexit work done: \(answered)")
                fflush(nil)
            }
            ConcurrentQueue.global().async { _ = cthr_sleep_ns(1_000_000) }
            exit(3)
        }
        let text = output(of: result)
        #expect(text.contains("shared pool ran"), "stdout: \(text)")
        #expect(text.contains("blocking pool ran"), "stdout: \(text)")
        #expect(text.contains("atexit work done: true"), "stdout: \(text)")
    }

    /// `exit` called by a task of the shared pool while more tasks are queued behind it: the process exits.
    @Test func exitFromAPoolTask() async {
        await #expect(processExitsWith: .exitCode(5)) {
            alarm(20)
            let queue = SerialQueue(label: "exit.task")
            for _ in 0..<1_000 { ConcurrentQueue.global().async { _ = cthr_sleep_ns(10_000) } }
            queue.async { exit(5) }
            for _ in 0..<100 { queue.async {} }
            while true { _ = cthr_sleep_ns(1_000_000_000) }
        }
    }
}
