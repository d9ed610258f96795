// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import CThreading

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The runtime's dump: a ``RuntimeSnapshot`` as text a person reads, written on demand or when a signal comes.
///
/// The dump has one block per pool (its counts, then its running workers, the longest-running first), the queues
/// and job queues that have work, one block per thread (what it runs, what it waits for and for how long, the
/// locks it holds), the held locks, and every wait cycle found, printed as such:
///
/// ```
/// Threading runtime dump (monotonic 1234.567 s)
///
/// pool 'threading.pool' (cpu): 4 threads of 40, 4 running, 0 idle, 0 blocked, 12 queued [default 12], SATURATED,
///   stall threshold 5.0 s, 1 stall(s)
///   schedule delay: 52810 units, p50 6 µs, p99 1 ms
///   thread 4711 running serial queue 'db' for 41 s
/// ...
/// ```
///
/// ```swift
/// import Glibc  // SIGUSR1
/// import Threading
///
/// try RuntimeDump.write(to: .standardError)
/// try RuntimeDump.install(on: SIGUSR1, to: .file("/tmp/threading.dump"))  // then `kill -USR1 <pid>`
/// ```
public enum RuntimeDump {
    /// Where a dump goes.
    public enum Destination: Sendable, Hashable {
        /// Standard error (file descriptor 2), in one `write`.
        case standardError
        /// A file, created if needed; each dump is appended.
        case file(String)
    }

    /// Takes a snapshot now and writes its dump to `destination`.
    ///
    /// - Parameter destination: Where to write it.
    /// - Throws: ``ThreadingError`` when the file cannot be opened or written (its `errno` value).
    public static func write(to destination: Destination) throws(ThreadingError) {
        try emit(RuntimeSnapshot.capture().description, to: destination)
    }

    /// Writes a dump to `destination` each time the process receives `signal`.
    ///
    /// The signal handler only writes a byte to a pipe (async-signal-safe); a thread of the library
    /// (`threading.dump`, started by the first call) reads it, takes a snapshot and writes the dump. Signals that
    /// come while a dump is written are folded into the next one. Calling it again with another signal adds that
    /// signal; with the same signal it changes the destination. Choose a signal nothing else in the process uses
    /// (`SIGUSR1`, `SIGUSR2`; not `SIGQUIT` when a core dump is wanted).
    ///
    /// A handler the program had installed for `signal` is replaced while the dump is installed (the dump's handler
    /// does not call it) and comes back, exactly as it was (handler, mask and flags), with ``uninstall(from:)``;
    /// so does an ignored or default disposition.
    ///
    /// The synchronous fault signals (`SIGSEGV`, `SIGBUS`, `SIGILL`, `SIGFPE`, `SIGTRAP`, `SIGABRT`, `SIGSYS`) are
    /// refused: the kernel raises them on the instruction that faulted (and a Swift trap is a `SIGILL` or a
    /// `SIGTRAP`), so a handler that returns runs that instruction again and a crash would loop for ever, writing
    /// dumps. The library offers no crash-time dump: leave crashes to the system's core dump or Swift's backtracer,
    /// and take a dump on demand with a user signal or ``write(to:)``.
    ///
    /// - Parameters:
    ///   - signal: The signal number (`SIGUSR1`).
    ///   - destination: Where each dump goes.
    /// - Throws: ``ThreadingError`` when the pipe or the thread cannot be made (`EMFILE`, `EAGAIN`), or `signal` is
    ///   not one a dump handler can be installed for (`EINVAL`: `SIGKILL`, `SIGSTOP`, out of range, or a synchronous
    ///   fault signal, whose error names it and says why). The corresponding C function is `sigaction`.
    public static func install(on signal: CInt, to destination: Destination) throws(ThreadingError) {
        try SignalDump.install(on: signal, to: destination)
    }

    /// Restores `signal`'s disposition from before the first ``install(on:to:)`` for it (the program's handler, the
    /// default or ignored), if the dump is installed for it; otherwise does nothing.
    ///
    /// - Parameter signal: The signal number.
    public static func uninstall(from signal: CInt) {
        SignalDump.uninstall(from: signal)
    }

    /// Writes `text` to `destination` in as few `write` calls as it takes.
    static func emit(_ text: String, to destination: Destination) throws(ThreadingError) {
        let descriptor: CInt
        switch destination {
        case .standardError:
            descriptor = 2
        case .file(let path):
            descriptor = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o644)
            if descriptor < 0 { throw ThreadingError(code: errno, operation: "RuntimeDump: open(\"\(path)\")") }
        }
        defer { if descriptor != 2 { _ = close(descriptor) } }
        var failure: CInt = 0
        Array(text.utf8).withUnsafeBytes { bytes in
            var offset = 0
            while offset < bytes.count {
                let written = Glibc.write(descriptor, bytes.baseAddress! + offset, bytes.count - offset)
                if written < 0 {
                    if errno == EINTR { continue }
                    failure = errno
                    return
                }
                offset += written
            }
        }
        if failure != 0 { throw ThreadingError(code: failure, operation: "RuntimeDump: write") }
    }

    // MARK: Formatting

    /// The dump of `snapshot`.
    static func format(_ snapshot: RuntimeSnapshot) -> String {
        var out = ""
        let seconds = snapshot.monotonicNanoseconds / 1_000_000_000
        let millis = snapshot.monotonicNanoseconds / 1_000_000 % 1000
        out += "Threading runtime dump (monotonic \(seconds).\(pad3(millis)) s)\n"
        if !snapshot.cycles.isEmpty {
            out += "\nFound \(snapshot.cycles.count) wait cycle(s): these threads wait for each other for ever\n"
            for cycle in snapshot.cycles { out += "\n" + indent(cycle.description) + "\n" }
        }
        if snapshot.droppedEvents > 0 {
            out += "\n\(snapshot.droppedEvents) runtime event(s) dropped: the observer did not keep up\n"
        }
        for pool in snapshot.pools { out += "\n" + formatPool(pool) }
        let busy = snapshot.queues.filter { $0.isRunning || $0.depth > 0 || $0.isSuspended }
        out += "\nqueues: \(snapshot.queues.count) live, \(busy.count) with work or suspended\n"
        for queue in busy.sorted(by: { ($0.runningFor ?? .zero) > ($1.runningFor ?? .zero) }) {
            out += "  " + formatQueue(queue) + "\n"
        }
        if !snapshot.jobQueues.isEmpty {
            out += "\njob queues: \(snapshot.jobQueues.count) live\n"
            for jobQueue in snapshot.jobQueues { out += "  " + formatJobQueue(jobQueue) + "\n" }
        }
        out += formatThreads(snapshot)
        if !snapshot.heldLocks.isEmpty {
            out += "\nheld locks:\n"
            for lock in snapshot.heldLocks {
                let held = lock.heldNanoseconds.map { " for \(formatDuration($0))" } ?? ""
                out += "  \(lock.name): held by thread \(lock.holderThreadID)\(held), \(lock.waiters) waiter(s)\n"
            }
        }
        return out
    }

    static func formatPool(_ pool: PoolSnapshot) -> String {
        let stats = pool.statistics
        let kind = pool.kind == .blocking ? "blocking" : "cpu"
        // Highest lane first: `12 queued [userInteractive 2, default 10]`.
        let counts = pool.queuedByLane.sorted { $0.key > $1.key }.map { "\($0.key) \($0.value)" }
        let lanes = counts.isEmpty ? "" : " [" + counts.joined(separator: ", ") + "]"
        var line =
            "pool '\(pool.label)' (\(kind)): \(stats.threads) threads of \(stats.maxThreads), \(stats.running) running, "
            + "\(stats.idle) idle, \(stats.blocked) blocked, \(stats.pending) queued\(lanes)"
        if pool.isSaturated { line += ", SATURATED" }
        line += ", stall threshold " + (pool.stallThreshold.map { formatDuration(nanoseconds($0)) } ?? "off")
        line += ", \(stats.stalls) stall(s)\n"
        if let delays = stats.scheduleDelays { line += formatDistribution("schedule delay", delays) }
        if let times = stats.runTimes { line += formatDistribution("run time", times) }
        for runner in pool.runners {
            line += "  thread \(runner.threadID) running \(runner.work)" + formatFor(runner.runningFor) + "\n"
        }
        return line
    }

    /// `  schedule delay: 1200 units, p50 12 µs, p99 3.1 ms` (nothing recorded yet: `0 units`).
    static func formatDistribution(_ name: String, _ distribution: LatencyDistribution) -> String {
        var line = "  \(name): \(distribution.count) units"
        if let median = distribution.percentile(0.5), let p99 = distribution.percentile(0.99) {
            line += ", p50 " + formatDuration(nanoseconds(median)) + ", p99 " + formatDuration(nanoseconds(p99))
        }
        return line + "\n"
    }

    static func formatQueue(_ queue: QueueSnapshot) -> String {
        var line = "\(queue.kind.rawValue) queue '\(queue.label)' on pool '\(queue.poolLabel)'"
        if let target = queue.targetLabel { line += " (target '\(target)')" }
        line += ": depth \(queue.depth)"
        if queue.isSuspended { line += ", suspended" }
        if let thread = queue.runningThreadID {
            line += ", running on thread \(thread)" + formatFor(queue.runningFor ?? .zero)
        } else if queue.isRunning {
            line += ", running (a sync caller or a worker that just started)"
        }
        return line
    }

    static func formatJobQueue(_ queue: JobQueueSnapshot) -> String {
        "JobQueue \"\(queue.name)\" on pool '\(queue.poolLabel)': \(queue.executing) executing of at most "
            + "\(queue.maxConcurrentJobs), \(queue.ready) ready, \(queue.waitingForDependencies) waiting for "
            + "dependencies" + (queue.isSuspended ? ", suspended" : "")
    }

    /// One block per thread: the pool workers running a unit and the threads of the wait registry, those that
    /// have waited or run longest first.
    static func formatThreads(_ snapshot: RuntimeSnapshot) -> String {
        struct Block {
            var threadID: Int32
            var name = ""
            var running: (work: String, pool: String, for: Duration)?
            var wait: WaitSnapshot?
            var held: [String] = []
            var age: Duration {
                Swift.max(running?.for ?? .zero, .nanoseconds(Int64(clamping: wait?.waitedNanoseconds ?? 0)))
            }
        }
        var blocks: [Int32: Block] = [:]
        for pool in snapshot.pools {
            for runner in pool.runners {
                var block = blocks[runner.threadID] ?? Block(threadID: runner.threadID)
                block.name = pool.label
                block.running = (runner.work, pool.label, runner.runningFor)
                blocks[runner.threadID] = block
            }
        }
        for thread in snapshot.threads {
            var block = blocks[thread.threadID] ?? Block(threadID: thread.threadID)
            block.name = thread.name
            block.wait = thread.waitingFor
            block.held = thread.heldLocks
            blocks[thread.threadID] = block
        }
        guard !blocks.isEmpty else { return "\nthreads: none running or waiting\n" }
        var out = "\nthreads: \(blocks.count) running or waiting\n"
        for block in blocks.values.sorted(by: { $0.age > $1.age || ($0.age == $1.age && $0.threadID < $1.threadID) }) {
            out += "\n\"\(block.name)\" tid \(block.threadID)\n"
            if let running = block.running {
                out += "  - running \(running.work) on pool '\(running.pool)'" + formatFor(running.for) + "\n"
            }
            for lock in block.held { out += "  - holds \(lock)\n" }
            if let wait = block.wait {
                let owner = wait.ownerThreadID.map { " (held by thread \($0))" } ?? ""
                out +=
                    "  - waiting in \(wait.kind) for \(wait.target)\(owner) for \(formatDuration(wait.waitedNanoseconds))\n"
            }
        }
        return out
    }

    private static func formatFor(_ duration: Duration) -> String {
        duration == .zero ? " (just started)" : " for " + formatDuration(nanoseconds(duration))
    }

    static func nanoseconds(_ duration: Duration) -> UInt64 {
        let (seconds, attoseconds) = duration.components
        return UInt64(clamping: seconds) &* 1_000_000_000 &+ UInt64(clamping: attoseconds / 1_000_000_000)
    }

    private static func pad3(_ value: UInt64) -> String {
        value < 10 ? "00\(value)" : value < 100 ? "0\(value)" : "\(value)"
    }

    private static func indent(_ text: String) -> String {
        text.split(separator: "\n", omittingEmptySubsequences: false).map { "  " + $0 }.joined(separator: "\n")
    }
}
