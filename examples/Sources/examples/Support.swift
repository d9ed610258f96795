// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

// Shared helpers of the examples: the example table, child processes, and small utilities.

import Synchronization
import Threading

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// One runnable lesson.
struct Example: Sendable {
    let name: String
    let summary: String
    let run: @Sendable () -> Void
}

/// Writes a line to stdout unbuffered, so a child process that crashes right after still shows it.
func say(_ text: Any) {
    let line = "\(text)\n"
    line.utf8CString.withUnsafeBufferPointer { bytes in
        _ = write(STDOUT_FILENO, bytes.baseAddress, bytes.count - 1)
    }
}

/// Cases run in a child process (`examples --child <name>`), because they crash or deadlock on purpose.
let childCases: [String: @Sendable () -> Void] = [
    "serial-sync-in-async": serialSyncInAsyncChild,
    "unsynchronized-cache": unsynchronizedCacheChild,
    "stall-lock-sync-cycle": stallLockSyncCycleChild,
]

/// How a child process ended, and what it printed (stdout and stderr together).
struct ChildOutcome {
    var output: String
    /// The exit status, when it exited.
    var exitStatus: Int32?
    /// The signal that killed it, when one did.
    var signal: Int32?
    /// Whether it was killed for running past its deadline (it hung).
    var timedOut: Bool

    var summary: String {
        if timedOut { return "hung and was killed after its deadline" }
        if let status = exitStatus, status != 0, output.contains("Sanitizer") {
            return "stopped by the sanitizer (exit status \(status))"
        }
        if let signal { return "crashed (signal \(signal), \(signalName(signal)))" }
        return "exited with status \(exitStatus ?? -1)"
    }
}

func signalName(_ signal: Int32) -> String {
    switch signal {
    case SIGILL: "SIGILL"
    case SIGTRAP: "SIGTRAP"
    case SIGABRT: "SIGABRT"
    case SIGBUS: "SIGBUS"
    case SIGSEGV: "SIGSEGV"
    case SIGKILL: "SIGKILL"
    default: "signal \(signal)"
    }
}

/// Runs this executable again with `--child <name>`, killing it after `timeoutSeconds`.
func runChild(_ name: String, timeoutSeconds: Int = 20) -> ChildOutcome {
    var pipeEnds: [Int32] = [0, 0]
    guard pipe(&pipeEnds) == 0 else {
        return ChildOutcome(output: "pipe failed", exitStatus: nil, signal: nil, timedOut: false)
    }
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    posix_spawn_file_actions_adddup2(&actions, pipeEnds[1], 1)
    posix_spawn_file_actions_adddup2(&actions, pipeEnds[1], 2)
    posix_spawn_file_actions_addclose(&actions, pipeEnds[0])
    let path = "/proc/self/exe"
    let argv = [path, "--child", name]
    var cArgs = argv.map { strdup($0) } + [nil]
    // A child crashes on purpose: in a sanitizer build, let it die by its signal instead of the sanitizer's
    // handler turning the crash into an exit status.
    let letSignalsThrough = "handle_segv=0:handle_sigbus=0:handle_sigill=0:handle_abort=0:handle_sigfpe=0"
    var environment: [String] = []
    var sawSanitizer = (tsan: false, asan: false)
    var index = 0
    while let entry = environ[index] {
        var text = String(cString: entry)
        if text.hasPrefix("TSAN_OPTIONS=") {
            text += ":" + letSignalsThrough
            sawSanitizer.tsan = true
        } else if text.hasPrefix("ASAN_OPTIONS=") {
            text += ":abort_on_error=1:" + letSignalsThrough
            sawSanitizer.asan = true
        }
        environment.append(text)
        index += 1
    }
    if !sawSanitizer.tsan { environment.append("TSAN_OPTIONS=" + letSignalsThrough) }
    if !sawSanitizer.asan { environment.append("ASAN_OPTIONS=abort_on_error=1:" + letSignalsThrough) }
    // No Swift crash reporter in the child: it only needs to die, and the reporter is slow and keeps the pipe.
    environment.removeAll { $0.hasPrefix("SWIFT_BACKTRACE=") }
    environment.append("SWIFT_BACKTRACE=enable=no")
    var cEnvironment = environment.map { strdup($0) } + [nil]
    var spawned: pid_t = 0
    let code = posix_spawn(&spawned, path, &actions, nil, &cArgs, &cEnvironment)
    let pid = spawned
    for pointer in cArgs + cEnvironment { free(pointer) }
    posix_spawn_file_actions_destroy(&actions)
    close(pipeEnds[1])
    guard code == 0 else {
        close(pipeEnds[0])
        return ChildOutcome(output: "posix_spawn failed: \(code)", exitStatus: nil, signal: nil, timedOut: false)
    }
    // Read until the child exited (its crash reporter or a grandchild may keep the pipe open); kill it when it
    // runs past the deadline (an unsynchronized dictionary can also corrupt itself into an endless probe loop).
    let deadline = ContinuousClock.now + .seconds(timeoutSeconds)
    var bytes: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 4096)
    var poller = pollfd(fd: pipeEnds[0], events: Int16(POLLIN), revents: 0)
    var status: Int32 = 0
    var exited = false
    var timedOut = false
    while true {
        while poll(&poller, 1, exited ? 0 : 20) > 0 {
            let count = buffer.withUnsafeMutableBytes { read(pipeEnds[0], $0.baseAddress, $0.count) }
            if count <= 0 { break }
            bytes += buffer[0..<count]
        }
        if exited { break }
        if waitpid(pid, &status, WNOHANG) == pid {
            exited = true
        } else if ContinuousClock.now >= deadline {
            kill(pid, SIGKILL)
            timedOut = true
        }
    }
    close(pipeEnds[0])
    let output = String(decoding: bytes, as: UTF8.self)
    let signal = status & 0x7f
    if signal != 0 {
        return ChildOutcome(output: output, exitStatus: nil, signal: signal, timedOut: timedOut)
    }
    return ChildOutcome(output: output, exitStatus: (status >> 8) & 0xff, signal: nil, timedOut: false)
}

/// A thread-safe log of what the lessons' code `print`s, read back in order.
final class PrintLog: Sendable {
    private let entries = Mutex<[String]>([])

    func print(_ value: Any) {
        let text = "\(value)"
        entries.withLock { $0.append(text) }
    }

    var joined: String { entries.withLock { $0.joined() } }
}

/// Milliseconds between two instants.
func milliseconds(_ duration: Duration) -> String {
    let ms = Double(duration.components.seconds) * 1000 + Double(duration.components.attoseconds) / 1e15
    return String(Int(ms.rounded()))
}

extension String {
    func padding(_ width: Int) -> String {
        count >= width ? self + " " : self + String(repeating: " ", count: width - count)
    }
}

/// Starts `count` threads that all begin `body` together (each signals "arrived", then waits for "go").
func runTogether(_ count: Int, name: String, _ body: @escaping @Sendable (Int) -> Void) {
    let arrived = Semaphore()
    let go = Semaphore()
    let done = Semaphore()
    for index in 0..<count {
        let thread = try! PosixThread(name: "\(name)\(index)") {
            arrived.signal()
            go.wait()
            body(index)
            done.signal()
        }
        thread.detach()
    }
    for _ in 0..<count { arrived.wait() }
    for _ in 0..<count { go.signal() }
    for _ in 0..<count { done.wait() }
}
