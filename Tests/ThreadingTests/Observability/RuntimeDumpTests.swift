// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import CThreading
import Foundation
import Synchronization
import Testing

@testable import Threading

@Suite struct RuntimeDumpTests {
    /// `write(to: .file)` appends a dump that names the live pools and queues.
    @Test func aDumpIsAppendedToAFile() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent(
            "dump-\(getpid())-\(UInt64.random(in: 0...UInt64.max)).txt"
        ).path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let pool = WorkerPool(label: "dump.file.pool", threads: 1)
        let queue = SerialQueue(label: "dump.file.queue", pool: pool)
        queue.suspend()
        queue.async {}
        try RuntimeDump.write(to: .file(path))
        try RuntimeDump.write(to: .file(path))
        let text = try String(contentsOfFile: path, encoding: .utf8)
        #expect(text.components(separatedBy: "Threading runtime dump").count == 3)
        #expect(text.contains("pool 'dump.file.pool' (cpu)"))
        #expect(text.contains("serial queue 'dump.file.queue' on pool 'dump.file.pool': depth 1, suspended"))
        queue.resume()
        #expect(poolTestShutDown(pool))
    }

    /// A file that cannot be opened is an error with its errno value, not a crash.
    @Test func anUnwritableFileThrows() {
        #expect(throws: ThreadingError(code: ENOENT)) {
            try RuntimeDump.write(to: .file("/nonexistent-directory/dump.txt"))
        }
    }

    /// A signal that cannot be caught is refused.
    @Test func anUncatchableSignalIsRefused() {
        #expect(throws: ThreadingError.invalidArgument) { try RuntimeDump.install(on: SIGKILL, to: .standardError) }
        #expect(throws: ThreadingError.invalidArgument) { try RuntimeDump.install(on: 0, to: .standardError) }
    }

    /// The signal path, in a child process: `SIGUSR1` makes the dump thread write a dump to standard error.
    @Test func aSignalWritesADump() async {
        let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
            let pool = WorkerPool(label: "dump.signal.pool", threads: 1)
            let path = "/tmp/threading-dump-signal-\(getpid()).txt"
            try? FileManager.default.removeItem(atPath: path)
            do {
                try RuntimeDump.install(on: SIGUSR1, to: .standardError)
                try RuntimeDump.install(on: SIGUSR2, to: .file(path))
            } catch { exit(10) }
            _ = SerialQueue(label: "dump.signal.queue", pool: pool)
            kill(getpid(), SIGUSR1)
            kill(getpid(), SIGUSR2)
            let written = queueTestWait(seconds: 10) {
                (try? String(contentsOfFile: path, encoding: .utf8))?.contains("pool 'dump.signal.pool'") == true
            }
            try? FileManager.default.removeItem(atPath: path)
            _ = cthr_sleep_ns(200_000_000)  // the standard-error dump (the same thread wrote it first or next)
            RuntimeDump.uninstall(from: SIGUSR1)
            exit(written ? 0 : 11)
        }
        let text = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(text.contains("Threading runtime dump"), "\(text)")
        #expect(text.contains("pool 'dump.signal.pool' (cpu)"), "\(text)")
    }
}
