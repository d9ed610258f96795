// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import CThreading
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The signal option of ``RuntimeDump``: a handler that writes one byte to a pipe, and a thread (`threading.dump`)
/// that reads the pipe and writes the dump. Nothing but `write(2)` happens in the handler (async-signal-safe);
/// the snapshot, its formatting and the output happen on the thread.
enum SignalDump {
    /// The pipe's write end, read by the handler (set once, before the first handler is installed; -1 until then).
    static let writeEnd = Atomic<CInt>(-1)
    /// The destination of each signal's dumps, and the pipe's read end once made (guarded by the lock).
    private static let state = LockedValue<(readEnd: CInt, destinations: [CInt: RuntimeDump.Destination])>(
        (-1, [:])
    )

    /// Guarded by `state`'s lock: each installed signal's disposition before the first ``install(on:to:)`` for it,
    /// restored exactly by ``uninstall(from:)``.
    nonisolated(unsafe) private static var previous: [CInt: sigaction] = [:]

    /// The synchronous fault signals, by name: the kernel raises them on the instruction that faulted (or `abort()`
    /// raises `SIGABRT` on the way out), so a handler that returns runs that instruction again, or lets the process go
    /// on from a point it meant to leave. A dump handler there turns every crash into an endless loop of dumps.
    static let faultSignalNames: [CInt: String] = [
        SIGSEGV: "SIGSEGV", SIGBUS: "SIGBUS", SIGILL: "SIGILL", SIGFPE: "SIGFPE", SIGTRAP: "SIGTRAP",
        SIGABRT: "SIGABRT", SIGSYS: "SIGSYS",
    ]

    static func install(on signal: CInt, to destination: RuntimeDump.Destination) throws(ThreadingError) {
        guard signal > 0 && signal < 65 && signal != SIGKILL && signal != SIGSTOP else {
            throw ThreadingError(code: EINVAL, operation: "RuntimeDump.install(on: \(signal))")
        }
        if let name = faultSignalNames[signal] {
            throw ThreadingError(
                code: EINVAL,
                operation: "RuntimeDump.install(on: \(name))",
                detail: "\(name) is a synchronous fault signal: a handler that returns runs the faulting instruction "
                    + "again, so every crash would loop for ever writing dumps. A crash-time dump is not offered; "
                    + "install the dump on a signal nothing else uses (SIGUSR1, SIGUSR2) and leave crashes to the "
                    + "system's core dump or Swift's backtracer"
            )
        }
        let failure: ThreadingError? = state.withLock { state in
            if state.readEnd < 0 {
                var ends: [CInt] = [-1, -1]
                if pipe(&ends) != 0 { return ThreadingError(code: errno, operation: "RuntimeDump.install: pipe") }
                _ = fcntl(ends[0], F_SETFD, FD_CLOEXEC)
                _ = fcntl(ends[1], F_SETFD, FD_CLOEXEC)
                // The handler must never block: a full pipe already holds a pending dump request.
                _ = fcntl(ends[1], F_SETFL, fcntl(ends[1], F_GETFL) | O_NONBLOCK)
                let readEnd = ends[0]
                let code = spawnDetachedRuntimeThread(
                    named: "threading.dump",
                    context: UnsafeMutableRawPointer(bitPattern: Int(readEnd) + 1)
                ) { raw in
                    SignalDump.readerMain(CInt(Int(bitPattern: raw) - 1))
                    return nil
                }
                if code != 0 {
                    _ = close(ends[0])
                    _ = close(ends[1])
                    return ThreadingError(code: code, operation: "RuntimeDump.install: the dump thread")
                }
                state.readEnd = readEnd
                writeEnd.store(ends[1], ordering: .sequentiallyConsistent)
            }
            // Installed under the lock, so that an uninstall on another thread restores the right disposition.
            var action = sigaction()
            action.__sigaction_handler.sa_handler = { received in
                let saved = errno
                var byte = UInt8(truncatingIfNeeded: received)
                _ = Glibc.write(SignalDump.writeEnd.load(ordering: .relaxed), &byte, 1)
                errno = saved
            }
            sigemptyset(&action.sa_mask)
            action.sa_flags = SA_RESTART
            var before = sigaction()
            if sigaction(signal, &action, &before) != 0 {
                return ThreadingError(code: errno, operation: "RuntimeDump.install(on: \(signal)): sigaction")
            }
            // A second install for the signal changes the destination; the disposition to restore stays the first.
            if previous[signal] == nil { previous[signal] = before }
            state.destinations[signal] = destination
            return nil
        }
        if let failure { throw failure }
    }

    static func uninstall(from signal: CInt) {
        state.withLock { state in
            guard state.destinations.removeValue(forKey: signal) != nil,
                var before = previous.removeValue(forKey: signal)
            else { return }
            _ = sigaction(signal, &before, nil)
        }
    }

    /// The dump thread: one dump per batch of bytes read (signals that came meanwhile are folded in).
    private static func readerMain(_ readEnd: CInt) {
        var buffer = [UInt8](repeating: 0, count: 64)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(readEnd, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            if count <= 0 { return }
            var signals = Set<CInt>()
            for index in 0..<count { signals.insert(CInt(buffer[index])) }
            let destinations = state.withLock { state in signals.compactMap { state.destinations[$0] } }
            guard !destinations.isEmpty else { continue }
            let text = RuntimeSnapshot.capture().description
            for destination in Set(destinations) {
                do {
                    try RuntimeDump.emit(text, to: destination)
                } catch {
                    RuntimeObservation.report(
                        .warning,
                        .warning,
                        "Threading: the runtime dump could not be written (\(error)); it goes to standard error",
                        ["operation": "RuntimeDump"]
                    )
                    try? RuntimeDump.emit(text, to: .standardError)
                }
            }
        }
    }
}
