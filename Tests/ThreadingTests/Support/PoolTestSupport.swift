// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import CThreading
import Glibc

@testable import Threading

/// The calling thread's name.
func poolTestThreadName() -> String {
    var buffer = [CChar](repeating: 0, count: Int(CTHR_THREAD_NAME_MAX) + 1)
    _ = buffer.withUnsafeMutableBufferPointer { cthr_thread_get_name($0.baseAddress, $0.count) }
    return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
}

/// How many threads of this process carry `name` (`/proc/self/task/*/comm`).
func poolTestThreadCount(named name: String) -> Int {
    guard let directory = opendir("/proc/self/task") else { return -1 }
    defer { closedir(directory) }
    var count = 0
    while let entry = readdir(directory) {
        let task = withUnsafeBytes(of: entry.pointee.d_name) { raw in
            String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
        }
        guard task.first?.isNumber == true, let file = fopen("/proc/self/task/\(task)/comm", "r") else { continue }
        var line = [CChar](repeating: 0, count: 64)
        if fgets(&line, Int32(line.count), file) != nil {
            let comm = String(
                decoding: line.prefix { $0 != 0 && $0 != 10 }.map { UInt8(bitPattern: $0) },
                as: UTF8.self
            )
            if comm == name { count += 1 }
        }
        fclose(file)
    }
    return count
}

/// Shuts `pool` down with a deadline (30 s, so a stuck task fails the test instead of hanging it); returns whether
/// the shutdown completed. Callable from exit-test bodies, which are asynchronous (`shutdown` is `noasync`).
@discardableResult
func poolTestShutDown(_ pool: WorkerPool) -> Bool {
    pool.shutdown(timeout: .seconds(30)).isComplete
}

/// A one-thread blocking pool whose thread is blocked until `gate` opens (at most `seconds`), so that work submitted
/// to it waits; nil if the blocking task did not start.
func poolTestBlockedPool(label: String, seconds: Double = 30) -> (pool: WorkerPool, gate: QueueGate)? {
    let pool = WorkerPool(label: label, threads: 1, kind: .blocking)
    let gate = QueueGate()
    let started = QueueGate()
    SerialQueue(label: "\(label).blocker", pool: pool).async {
        started.open()
        _ = gate.wait(seconds: seconds)
    }
    return started.wait() ? (pool, gate) : nil
}
