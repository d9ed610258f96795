// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

// An async server on Threading: each piece of state is an actor whose executor is a serial queue (no locks, no
// `@unchecked Sendable`), blocking file I/O runs on a blocking pool through a task executor preference (never on a
// cooperative thread), a semaphore bounds the requests in flight with `await`, a work group of legacy callback work
// is awaited, and the shutdown is clean: no new requests, every accepted one finished, the I/O pool shut down, the
// result reported from `@MainActor` code — which runs on the main thread while it sits in `MainQueue.run()`.

import Threading

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Sessions keyed by client, isolated to their queue.
private actor SessionStore {
    private let queue = SerialQueue(label: "server.sessions")
    nonisolated var unownedExecutor: UnownedSerialExecutor { queue.asUnownedSerialExecutor() }
    private var sessions: [Int: Int] = [:]

    /// Opens (or reuses) the session of `client`; returns how many requests it has served.
    func touch(_ client: Int) -> Int {
        sessions[client, default: 0] += 1
        return sessions[client]!
    }

    var count: Int { sessions.count }
}

/// Served bytes and requests, isolated to their queue.
private actor Statistics {
    private let queue = SerialQueue(label: "server.stats")
    nonisolated var unownedExecutor: UnownedSerialExecutor { queue.asUnownedSerialExecutor() }
    private(set) var requests = 0
    private(set) var bytes = 0

    func record(bytes: Int) {
        requests += 1
        self.bytes += bytes
    }
}

/// Reads `path` whole with blocking `read(2)` calls: the kind of call that must not run on a cooperative thread.
private func readFile(_ path: String) -> Int {
    let fd = open(path, O_RDONLY)
    guard fd >= 0 else { return -1 }
    defer { close(fd) }
    var total = 0
    var buffer = [UInt8](repeating: 0, count: 4096)
    while true {
        let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        if count <= 0 { return total }
        total += count
    }
}

@MainActor private func reportOnMainActor(_ line: String) {
    say(line)
    say("main actor ran on the main thread: \(PosixThread.isMainThread)")
}

let asyncServerExample = Example(
    name: "async-server",
    summary: "actors on serial queues, blocking I/O on a blocking pool, awaited waits, clean shutdown"
) {
    let path = "/proc/self/status"
    let io = WorkerPool(label: "server.io", threads: 4, kind: .blocking)
    let sessions = SessionStore()
    let statistics = Statistics()
    let inFlight = Semaphore(value: 8)  // at most 8 requests in flight
    let audit = ConcurrentQueue(label: "server.audit")
    let auditGroup = WorkGroup()
    let audited = LockedValue(0)

    /// One request: a session update, a blocking read on the I/O pool, statistics, and an audit callback.
    @Sendable func handle(_ request: Int) async throws {
        try await inFlight.wait()
        defer { inFlight.signal() }
        _ = await sessions.touch(request % 16)
        let bytes = await withTaskExecutorPreference(io) { readFile(path) }
        await statistics.record(bytes: bytes)
        audit.async(group: auditGroup) { audited.withLock { $0 += 1 } }  // callback-style work, awaited below
    }

    Task {
        let requests = 200
        do {
            // The accept loop: every request becomes a child task; leaving the group means all of them finished.
            try await withThrowingTaskGroup(of: Void.self) { group in
                for request in 0..<requests { group.addTask { try await handle(request) } }
                try await group.waitForAll()
            }
            try await auditGroup.wait()
            // Shutdown: no request is in flight any more; the I/O pool runs what it accepted and stops.
            await io.shutdownGracefully()
            let served = await statistics.requests
            let clients = await sessions.count
            let readOK = await statistics.bytes > 0
            await reportOnMainActor(
                "served \(served) requests for \(clients) clients, audited \(audited.withLock { $0 }), read bytes: "
                    + "\(readOK), io pool shut down: \(io.isShutDown)"
            )
            exit(0)
        } catch {
            say("server failed: \(error)")
            exit(1)
        }
    }
    // The main thread serves the main queue — and with it `@MainActor` code — until the server exits.
    MainQueue.run()
}
