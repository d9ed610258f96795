// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import Glibc
import Threading

/// The `kv-server` family: the shape of a blocking key-value server, measured. T connections (default
/// 64) are `AF_UNIX` stream socketpairs; each server end gets one blocking handler that reads a 16-byte request
/// (key, value: a put when the value is not 0, else a get) and answers with the key's value from a shared
/// `LockedValue<[UInt64: UInt64]>`. T client threads, started together, each drive one connection in a closed loop
/// (put, then get, which must return the value just put). One operation is one request answered; the latency is
/// the client's, from the write of a request to the read of its answer.
///
/// Ours runs the handlers on a queue of a blocking `WorkerPool` of T threads; the alternative is one
/// `PosixThread` per connection. A connection that got no answer during the run is a bad operation: the cell is
/// INVALID and `bench kv-server` exits with an error.
public enum KVServer {
    /// A server as the CLI sees it.
    public struct Entry: Sendable {
        /// Display name.
        public var name: String
        /// Command-line identifier.
        public var id: String
        /// Ours or the alternative.
        public var kind: StrategyKind
        /// One timed run with `connections` connections.
        public var run: @Sendable (_ connections: Int, _ seconds: Double) -> RunSample
    }

    /// Ours, then one thread per connection.
    public static let catalog: [Entry] = [
        Entry(name: "WorkerPool(.blocking, T) handlers", id: "kv-blocking-pool", kind: .ours) { connections, seconds in
            run(connections: connections, seconds: seconds, server: PoolServer(connections: connections))
        },
        Entry(name: "PosixThread per connection", id: "kv-thread-per-connection", kind: .peer) {
            connections,
            seconds in
            run(connections: connections, seconds: seconds, server: ThreadServer())
        },
    ]

    /// One timed run: makes the connections, starts a handler per connection, runs the clients for `seconds`, then
    /// closes the client ends (each handler sees end-of-file and returns) and waits for the handlers.
    public static func run<S: KVServerRunner>(connections: Int, seconds: Double, server: S) -> RunSample {
        let store = LockedValue<[UInt64: UInt64]>([:])
        var pairs: [(client: Int32, server: Int32)] = []
        for _ in 0..<connections {
            var fds: [Int32] = [0, 0]
            guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &fds) == 0 else {
                for pair in pairs {
                    close(pair.client)
                    close(pair.server)
                }
                return failedSample("socketpair failed (errno \(errno))")
            }
            pairs.append((fds[0], fds[1]))
        }
        for pair in pairs {
            let fd = pair.server
            server.start { serve(fd: fd, store: store) }
        }
        let clients = pairs.map(\.client)
        var sample = runTimed(threads: connections, seconds: seconds) { index, gate in
            client(fd: clients[index], key: UInt64(index + 1), gate: gate)
        }
        for pair in pairs { shutdown(pair.client, Int32(SHUT_RDWR)) }
        let finished = server.finish(seconds: 30)
        for pair in pairs {
            close(pair.client)
            close(pair.server)
        }
        if !finished { sample.abnormalOutcome = "handlers still running 30 s after the clients closed" }
        return sample
    }

    /// A sample for a run that could not start.
    static func failedSample(_ why: String) -> RunSample {
        RunSample(
            operationsPerSecond: 0,
            cpuNanosecondsPerOperation: 0,
            fairness: 0,
            badOperations: 1,
            operations: 0,
            latency: LatencySampler.makeHistogram(),
            abnormalOutcome: why
        )
    }

    /// A handler: answers requests until the client closes its end.
    static func serve(fd: Int32, store: LockedValue<[UInt64: UInt64]>) {
        var request = (UInt64(0), UInt64(0))
        while true {
            let got = withUnsafeMutableBytes(of: &request) { readFully(fd, $0) }
            guard got else { return }
            let (key, value) = request
            var answer: UInt64 =
                if value != 0 {
                    store.withLock { map in
                        map[key] = value
                        return value
                    }
                } else {
                    store.withLock { map in map[key] ?? 0 }
                }
            let sent = withUnsafeBytes(of: &answer) { writeFully(fd, $0) }
            guard sent else { return }
        }
    }

    /// A client: one put before the start line (so every handler runs before the clock starts: the pools' start-up
    /// is `bench pools`), then put (key, n) and get key, which must answer n, until the stop flag. A request whose
    /// answer does not come is abandoned at the stop flag (10 s for the first one); a connection that got no answer
    /// at all counts as one bad operation.
    static func client(fd: Int32, key: UInt64, gate: StartGate) -> WorkerResult {
        var result = WorkerResult()
        var next: UInt64 = 1
        let warmDeadline = monotonicNanoseconds() &+ 10_000_000_000
        let warmed = exchange(fd, key: key, value: next) { monotonicNanoseconds() > warmDeadline }
        var lastPut = next
        next &+= 1
        gate.arriveAndWait()
        let cpuStart = threadCPUNanoseconds()
        var answered = warmed == lastPut ? 1 : 0
        if warmed != nil && warmed != lastPut { result.badOperations += 1 }
        while warmed != nil && !gate.isStopped {
            let isPut = result.operations % 2 == 0
            let started = monotonicNanoseconds()
            guard let answer = exchange(fd, key: key, value: isPut ? next : 0, giveUp: { gate.isStopped }) else {
                break
            }
            _ = result.latency.record(monotonicNanoseconds() &- started)
            if isPut {
                if answer != next { result.badOperations += 1 }
                lastPut = next
                next &+= 1
            } else if answer != lastPut {
                result.badOperations += 1
            }
            result.operations += 1
            answered += 1
        }
        result.endNanoseconds = monotonicNanoseconds()
        result.cpuNanoseconds = threadCPUNanoseconds() &- cpuStart
        if answered == 0 { result.badOperations += 1 }
        return result
    }

    /// Sends one request and waits for its answer, in 50 ms slices so that a connection nobody serves ends when
    /// `giveUp` says so instead of hanging; nil when no answer came (or the connection failed).
    static func exchange(_ fd: Int32, key: UInt64, value: UInt64, giveUp: () -> Bool) -> UInt64? {
        var request = (key, value)
        guard withUnsafeBytes(of: &request, { writeFully(fd, $0) }) else { return nil }
        while true {
            var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let polled = poll(&poller, 1, 50)
            if polled > 0 { break }
            if polled < 0 && errno != EINTR { return nil }
            if giveUp() { return nil }
        }
        var answer: UInt64 = 0
        guard withUnsafeMutableBytes(of: &answer, { readFully(fd, $0) }) else { return nil }
        return answer
    }

    /// Reads exactly `buffer.count` bytes; false at end-of-file or on an error.
    static func readFully(_ fd: Int32, _ buffer: UnsafeMutableRawBufferPointer) -> Bool {
        var done = 0
        while done < buffer.count {
            let got = read(fd, buffer.baseAddress! + done, buffer.count - done)
            if got > 0 {
                done += got
            } else if got < 0 && errno == EINTR {
                continue
            } else {
                return false
            }
        }
        return true
    }

    /// Writes exactly `buffer.count` bytes; false on an error (the peer closed).
    static func writeFully(_ fd: Int32, _ buffer: UnsafeRawBufferPointer) -> Bool {
        var done = 0
        while done < buffer.count {
            let sent = send(fd, buffer.baseAddress! + done, buffer.count - done, Int32(MSG_NOSIGNAL))
            if sent > 0 {
                done += sent
            } else if sent < 0 && errno == EINTR {
                continue
            } else {
                return false
            }
        }
        return true
    }
}

/// Where the handlers of one run execute.
public protocol KVServerRunner {
    /// Starts one connection's handler.
    func start(_ handler: @escaping @Sendable () -> Void)
    /// Waits until every handler returned (at most `seconds`) and releases the threads; false on timeout.
    func finish(seconds: Double) -> Bool
}

/// Ours: a blocking `WorkerPool` of one thread per connection and a `ConcurrentQueue` on it, as a server built on
/// the public API would (see the Pools article); the pool is shut down after the run.
struct PoolServer: KVServerRunner {
    let pool: WorkerPool
    let queue: ConcurrentQueue
    let group = WorkGroup()

    init(connections: Int) {
        pool = WorkerPool(label: "bench.kv.io", threads: connections, kind: .blocking)
        queue = ConcurrentQueue(label: "bench.kv.handlers", pool: pool)
    }

    func start(_ handler: @escaping @Sendable () -> Void) {
        queue.async(group: group, execute: handler)
    }

    func finish(seconds: Double) -> Bool {
        let done = group.wait(timeout: .nanoseconds(Int64(seconds * 1e9)))
        return pool.shutdown(timeout: .seconds(seconds)).isComplete && done
    }
}

/// The alternative: one `PosixThread` per connection, joined after the run.
public final class ThreadServer: KVServerRunner {
    private var threads: [PosixThread<Void>] = []
    private var failed = false

    /// Creates a server with no threads yet.
    public init() {}

    public func start(_ handler: @escaping @Sendable () -> Void) {
        do {
            threads.append(try PosixThread(name: "bench.kv.conn") { handler() })
        } catch {
            failed = true
        }
    }

    public func finish(seconds: Double) -> Bool {
        for thread in threads { thread.join() }
        return !failed
    }
}
