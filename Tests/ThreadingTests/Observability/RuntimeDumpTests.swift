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

    /// The synchronous fault signals are refused with an error that names the signal and says why (a handler that
    /// returns would rerun the faulting instruction for ever), and their disposition is left as it was.
    @Test func aFaultSignalIsRefused() {
        for signal in [SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGTRAP, SIGABRT, SIGSYS] {
            let before = dumpTestDisposition(signal)
            do {
                try RuntimeDump.install(on: signal, to: .standardError)
                RuntimeDump.uninstall(from: signal)
                Issue.record("signal \(signal) was accepted")
            } catch {
                #expect(error == .invalidArgument)
                #expect(error.operation.hasPrefix("RuntimeDump.install(on: SIG"), "\(error)")
                #expect(error.detail.contains("is a synchronous fault signal"), "\(error)")
            }
            #expect(dumpTestDisposition(signal) == before)
        }
        let error = #expect(throws: ThreadingError.self) { try RuntimeDump.install(on: SIGSEGV, to: .standardError) }
        #expect(
            error?.description
                == "RuntimeDump.install(on: SIGSEGV): Invalid argument (EINVAL): SIGSEGV is a synchronous fault "
                + "signal: a handler that returns runs the faulting instruction again, so every crash would loop for "
                + "ever writing dumps. A crash-time dump is not offered; install the dump on a signal nothing else "
                + "uses (SIGUSR1, SIGUSR2) and leave crashes to the system's core dump or Swift's backtracer"
        )
    }

    /// Over a handler the program installed: while the dump is installed, the signal writes a dump and the
    /// program's handler is not called (replaced, as the docs say); a second install (a new destination) keeps what
    /// is restored; `uninstall` brings the program's handler back exactly (handler, flags, mask), and the next
    /// signal reaches it instead of killing the process. A signal that had the default disposition gets it back.
    @Test func uninstallRestoresTheProgramsHandler() async {
        await #expect(processExitsWith: .success) {
            startExitTestWatchdog()
            let path = "/tmp/threading-dump-restore-\(getpid()).txt"
            defer { try? FileManager.default.removeItem(atPath: path) }
            var program = sigaction()
            program.__sigaction_handler.sa_handler = { _ in dumpTestProgramHandlerCalls.add(1, ordering: .relaxed) }
            sigemptyset(&program.sa_mask)
            sigaddset(&program.sa_mask, SIGUSR1)
            program.sa_flags = SA_RESTART | SA_NODEFER
            guard sigaction(SIGUSR2, &program, nil) == 0 else { exit(10) }
            let installed = dumpTestDisposition(SIGUSR2)
            let defaultUSR1 = dumpTestDisposition(SIGUSR1)
            do {
                try RuntimeDump.install(on: SIGUSR2, to: .standardError)
                try RuntimeDump.install(on: SIGUSR2, to: .file(path))
                try RuntimeDump.install(on: SIGUSR1, to: .file(path))
            } catch { exit(11) }
            guard dumpTestDisposition(SIGUSR2) != installed else { exit(12) }
            kill(getpid(), SIGUSR2)
            let written = waitUntil(seconds: 10) {
                (try? String(contentsOfFile: path, encoding: .utf8))?.contains("Threading runtime dump") == true
            }
            guard written, dumpTestProgramHandlerCalls.load(ordering: .relaxed) == 0 else { exit(13) }
            RuntimeDump.uninstall(from: SIGUSR2)
            RuntimeDump.uninstall(from: SIGUSR1)
            RuntimeDump.uninstall(from: SIGUSR1)  // not installed any more: nothing happens
            // Exit 20 + which fields differ (1 handler, 2 flags, 4 mask of SIGUSR2; 8, 16 the same of SIGUSR1). The
            // mask of a default disposition (SIGUSR1's) is not compared: with no handler it blocks nothing, and
            // ThreadSanitizer's sigaction reports it differently once a program has set the signal.
            let restored = [dumpTestDisposition(SIGUSR2), dumpTestDisposition(SIGUSR1)]
            let expected = [installed, defaultUSR1]
            var differs: Int32 = 0
            for signal in 0..<2 {
                for field in 0..<(signal == 0 ? 3 : 2)
                where restored[signal].count != 3 || expected[signal].count != 3
                    || restored[signal][field] != expected[signal][field]
                {
                    differs |= 1 << (3 * signal + field)
                }
            }
            guard differs == 0 else { exit(20 + differs) }
            kill(getpid(), SIGUSR2)
            guard waitUntil(seconds: 10, { dumpTestProgramHandlerCalls.load(ordering: .relaxed) == 1 }) else {
                exit(15)
            }
            exit(0)
        }
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
            let written = waitUntil(seconds: 10) {
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

/// The calls of the program's own handler in `uninstallRestoresTheProgramsHandler` (a C handler captures nothing).
private let dumpTestProgramHandlerCalls = Atomic<Int>(0)

/// A signal's disposition as comparable facts: the handler's address, the flags and the mask's first word. The flags
/// leave out `SA_RESTORER` (0x04000000), which glibc's `sigaction` adds to every disposition it sets (the kernel then
/// reports it for a restored `SIG_DFL` too); it is not the program's choice.
private func dumpTestDisposition(_ signal: CInt) -> [UInt] {
    var action = sigaction()
    guard sigaction(signal, nil, &action) == 0 else { return [] }
    return [
        unsafeBitCast(action.__sigaction_handler.sa_handler, to: UInt.self),
        UInt(bitPattern: Int(action.sa_flags & ~0x0400_0000)),
        action.sa_mask.__val.0,
    ]
}
