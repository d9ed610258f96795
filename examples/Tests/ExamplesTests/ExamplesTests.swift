// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Finds the `examples` binary: `$THREADING_EXAMPLES` if set, else next to the running test bundle (SwiftPM puts
/// both in `.build/<triple>/<configuration>/`), else `.build/debug/examples` under the working directory (the nested
/// `examples` package, or the repository root with `--package-path examples`).
func examplesBinary() -> String? {
    if let path = getenv("THREADING_EXAMPLES").map({ String(cString: $0) }), access(path, X_OK) == 0 { return path }
    var buffer = [CChar](repeating: 0, count: 4096)
    let length = readlink("/proc/self/exe", &buffer, buffer.count - 1)
    if length > 0 {
        let exe = String(decoding: buffer[0..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)
        var directory = exe
        // The bundle may be a directory (`X.xctest/...`) or a file; walk up to the build directory.
        while let slash = directory.lastIndex(of: "/"), !directory.isEmpty {
            directory = String(directory[..<slash])
            let candidate = directory + "/examples"
            if access(candidate, X_OK) == 0 { return candidate }
            if directory.hasSuffix("/.build") { break }
        }
    }
    let candidates = [
        ".build/debug/examples", ".build/release/examples",
        "examples/.build/debug/examples", "examples/.build/release/examples",
    ]
    for candidate in candidates where access(candidate, X_OK) == 0 {
        return candidate
    }
    return nil
}

/// Runs the examples binary with `arguments`; returns its exit status (nil when killed) and its output.
func runExamples(_ arguments: [String], timeoutSeconds: Int = 120) -> (status: Int32?, output: String) {
    guard let binary = examplesBinary() else { return (nil, "examples binary not found") }
    var ends: [Int32] = [0, 0]
    guard pipe(&ends) == 0 else { return (nil, "pipe failed") }
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    posix_spawn_file_actions_adddup2(&actions, ends[1], 1)
    posix_spawn_file_actions_adddup2(&actions, ends[1], 2)
    posix_spawn_file_actions_addclose(&actions, ends[0])
    // The examples race on purpose (tickets, cache-crash): under `--sanitize=thread` those reports are expected.
    var environment = ["TSAN_OPTIONS=report_bugs=0", "ASAN_OPTIONS=detect_leaks=0"]
    var index = 0
    while let entry = environ[index] {
        let text = String(cString: entry)
        if !text.hasPrefix("TSAN_OPTIONS=") && !text.hasPrefix("ASAN_OPTIONS=") { environment.append(text) }
        index += 1
    }
    var cEnvironment = environment.map { strdup($0) } + [nil]
    var cArguments = ([binary] + arguments).map { strdup($0) } + [nil]
    var pid: pid_t = 0
    let code = posix_spawn(&pid, binary, &actions, nil, &cArguments, &cEnvironment)
    for pointer in cArguments + cEnvironment { free(pointer) }
    posix_spawn_file_actions_destroy(&actions)
    close(ends[1])
    guard code == 0 else {
        close(ends[0])
        return (nil, "posix_spawn failed: \(code)")
    }
    // Deadline: poll the pipe; kill the child if it runs past the limit.
    let deadline = ContinuousClock.now + .seconds(timeoutSeconds)
    var bytes: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 4096)
    var poller = pollfd(fd: ends[0], events: Int16(POLLIN), revents: 0)
    while true {
        if ContinuousClock.now >= deadline {
            kill(pid, SIGKILL)
            break
        }
        guard poll(&poller, 1, 100) > 0 else { continue }
        let count = buffer.withUnsafeMutableBytes { read(ends[0], $0.baseAddress, $0.count) }
        if count <= 0 { break }
        bytes += buffer[0..<count]
    }
    close(ends[0])
    var status: Int32 = 0
    waitpid(pid, &status, 0)
    let output = String(decoding: bytes, as: UTF8.self)
    return ((status & 0x7f) == 0 ? (status >> 8) & 0xff : nil, output)
}

/// The line of `output` that starts with `prefix` (after trimming), if any.
func line(_ output: String, _ prefix: String) -> String? {
    output.split(separator: "\n").map(String.init).first { $0.hasPrefix(prefix) }
}

/// The digits after `prefix` on its line (`"serial, async:   2134"` -> `"2134"`).
func order(_ output: String, _ prefix: String) -> String? {
    line(output, prefix).map { String($0.dropFirst(prefix.count).prefix { !$0.isLetter && $0 != "," }) }
        .map { $0.filter(\.isNumber) }
}

@Suite("Examples", .serialized)
struct ExamplesTests {
    @Test("--list names every example")
    func list() {
        let (status, output) = runExamples(["--list"])
        #expect(status == 0, "\(output)")
        for name in [
            "main-queue", "trampoline", "sync-async", "tickets", "cache-crash", "pipeline", "priority-inversion",
            "queue-pool", "threads", "tsd", "async-server",
        ] {
            #expect(output.contains(name), "\(name) missing from --list")
        }
    }

    @Test("async-server: actors on queues serve every request, shut down cleanly, @MainActor runs on main")
    func asyncServer() {
        let (status, output) = runExamples(["async-server"])
        #expect(status == 0, "\(output)")
        #expect(
            line(output, "served")?.hasPrefix(
                "served 200 requests for 16 clients, audited 200, read bytes: true, io pool shut down: true"
            ) == true,
            "\(output)"
        )
        // The process's main thread sits in MainQueue.run(): the @MainActor function ran there.
        #expect(
            line(output, "main actor ran on the main thread:") == "main actor ran on the main thread: true",
            "\(output)"
        )
    }

    @Test("main-queue: serial.sync from main is the main thread but not the main queue")
    func mainQueue() {
        let (status, output) = runExamples(["main-queue"])
        #expect(status == 0, "\(output)")
        #expect(
            line(output, "main thread, outside any queue:")?.contains(
                "isMainThread=true mainQueue.isCurrent=false key=false"
            ) == true,
            "\(output)"
        )
        #expect(
            line(output, "serial.sync called from main:")?.contains(
                "isMainThread=true mainQueue.isCurrent=false key=false"
            ) == true,
            "\(output)"
        )
        #expect(
            line(output, "serial.async (a pool worker):")?.contains("isMainThread=false mainQueue.isCurrent=false")
                == true,
            "\(output)"
        )
        #expect(
            line(output, "queue targeting main (drained):")?.contains(
                "isMainThread=true mainQueue.isCurrent=true key=true"
            ) == true,
            "\(output)"
        )
        #expect(
            line(output, "MainQueue.shared.async (drained):")?.contains(
                "isMainThread=true mainQueue.isCurrent=true key=true"
            ) == true,
            "\(output)"
        )
    }

    @Test("trampoline: [1, 2, 3, 4, 5]")
    func trampoline() {
        let (status, output) = runExamples(["trampoline"])
        #expect(status == 0, "\(output)")
        #expect(output.contains("messages: [1, 2, 3, 4, 5]"), "\(output)")
        #expect(output.contains("isScheduleRequired before/inside/after: [true, false, true]"), "\(output)")
        #expect(output.contains("with the nested action disposed: [1, 2]"), "\(output)")
    }

    @Test("sync-async: the eight cases print the orders the queues allow; the deadlock is diagnosed in a child")
    func syncAsync() {
        let (status, output) = runExamples(["sync-async"])
        #expect(status == 0, "\(output)")
        #expect(order(output, "serial, sync:") == "1234", "\(output)")
        #expect(["1234", "2134", "1243", "2413", "2143"].contains(order(output, "serial, async:") ?? ""), "\(output)")
        let deadlock = line(output, "serial, sync in async:") ?? ""
        #expect(["125", "152", "12"].contains(order(output, "serial, sync in async:") ?? ""), "\(output)")
        #expect(deadlock.contains("crashed (signal"), "\(output)")
        #expect(line(output, "  diagnostic:")?.contains("'serial'") == true, "\(output)")
        #expect(["12345", "12435", "12453"].contains(order(output, "serial, async in sync:") ?? ""), "\(output)")
        #expect(order(output, "concurrent, sync:") == "1234", "\(output)")
        #expect(
            ["2413", "2431", "2143", "2341", "2134", "2314", "1234", "1243", "4213", "4231", "3241", "3214"]
                .filter { $0.firstIndex(of: "2")! < $0.firstIndex(of: "4")! }
                .contains(order(output, "concurrent, async:") ?? ""),
            "\(output)"
        )
        #expect(
            ["12345", "12534", "12354", "15234"].contains(order(output, "concurrent, sync in async:") ?? ""),
            "\(output)"
        )
        #expect(["12345", "12435", "12453"].contains(order(output, "concurrent, async in sync:") ?? ""), "\(output)")
    }

    @Test("tickets: the unlocked run oversells; every lock sells exactly 10")
    func tickets() {
        let (status, output) = runExamples(["tickets"])
        #expect(status == 0, "\(output)")
        #expect(line(output, "no lock:")?.contains("OVERSOLD by") == true, "\(output)")
        for lock in [
            "MutexLock:", "RecursiveLock:", "SpinLock:", "ReadWriteLock:", "Semaphore(1):", "Monitor:",
            "SerialQueue.sync:",
        ] {
            #expect(line(output, lock)?.hasSuffix("sold 10 of 10, remaining 0: correct") == true, "\(lock)\n\(output)")
        }
    }

    @Test("cache-crash: the unsynchronized child crashes or corrupts; the four fixes are consistent")
    func cacheCrash() {
        let (status, output) = runExamples(["cache-crash"], timeoutSeconds: 180)
        #expect(status == 0, "\(output)")
        let unsafe = line(output, "unsynchronized:") ?? ""
        #expect(
            unsafe.contains("crashed (") || unsafe.contains("corrupt"),
            "\(output)"
        )
        for fix in ["serial queue (sync):", "MutexLock:", "Semaphore(1):", "concurrent queue, barrier:"] {
            #expect(line(output, fix)?.hasSuffix("8000 entries of 8000: ok") == true, "\(fix)\n\(output)")
        }
    }

    @Test("pipeline: image 3 is cancelled mid-way, the others are filtered, the cycle is refused")
    func pipeline() {
        let (status, output) = runExamples(["pipeline"])
        #expect(status == 0, "\(output)")
        #expect(output.contains("cancelled decode-3 while it was executing"), "\(output)")
        for image in [1, 2, 4] {
            #expect(line(output, "image \(image):")?.contains("decode finished, filter finished:") == true, "\(output)")
        }
        #expect(line(output, "image 3:") == "image 3: decode cancelled, filter failed: CancellationError", "\(output)")
        let refused = line(output, "refused:") ?? ""
        #expect(
            refused.contains("EDEADLK") && refused.contains("\"operationB\" -> \"operationA\" -> \"operationB\""),
            "\(output)"
        )
        #expect(output.contains("operationA finished, operationB finished"), "\(output)")
    }

    @Test("priority-inversion: both runs are measured")
    func priorityInversion() {
        let (status, output) = runExamples(["priority-inversion"])
        #expect(status == 0, "\(output)")
        #expect(
            line(output, "background holder, normal mutex:")?.contains("high-QoS waiter waited ") == true,
            "\(output)"
        )
        let inheriting = line(output, "background holder, priority-inheriting:") ?? ""
        #expect(inheriting.contains("waited ") || inheriting.contains("not supported"), "\(output)")
        #expect(line(output, "holder at the waiter's QoS")?.contains(" ms") == true, "\(output)")
    }

    @Test("queue-pool: round-robin over three serial queues, in order per queue")
    func queuePool() {
        let (status, output) = runExamples(["queue-pool"])
        #expect(status == 0, "\(output)")
        #expect(output.contains("images.0 (utility): tasks [1, 4, 7]"), "\(output)")
        #expect(output.contains("images.1 (utility): tasks [2, 5, 8]"), "\(output)")
        #expect(output.contains("images.2 (utility): tasks [3, 6, 9]"), "\(output)")
    }

    @Test("threads: exit values, detached, stack sizes")
    func threads() {
        let (status, output) = runExamples(["threads"])
        #expect(status == 0, "\(output)")
        #expect(output.contains("joinable thread returned 5050"), "\(output)")
        #expect(output.contains("detached thread signalled: true"), "\(output)")
        #expect(line(output, "requested 262144 bytes")?.contains("-> actual stack 262144 bytes") == true, "\(output)")
        #expect(line(output, "stack size -1:")?.contains("EINVAL") == true, "\(output)")
    }

    @Test("tsd: a value per thread, released at thread exit")
    func tsd() {
        let (status, output) = runExamples(["tsd"])
        #expect(status == 0, "\(output)")
        #expect(output.contains("thread 1 counted 10 in its own slot"), "\(output)")
        #expect(output.contains("thread 3 counted 30 in its own slot"), "\(output)")
        #expect(output.contains("main thread's slot still holds 1"), "\(output)")
        #expect(output.contains("released at thread exit: [\"thread 1\", \"thread 2\", \"thread 3\"]"), "\(output)")
    }
}
