// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

// A small server: requests run on serial queues of one worker pool. One handler blocks in a call the library cannot
// see (a plain `usleep` standing in for a slow database driver): the stall watchdog reports it once when it sees it
// (pool, queue, thread, how long) and once when it ends, and a runtime dump taken meanwhile shows the worker that
// runs it, the longest runner first.
// Then, in a child process, two threads deadlock through a lock and a `sync`: a request thread holds the
// `accounts` lock and waits in `sync` on the queue 'ledger', whose running item, on a pool worker, waits for
// `accounts`. The dump taken a moment later prints the cycle (thread A holds X and waits in sync on Q, whose item
// on thread B waits for X) and what each thread waits for.

import Synchronization
import Threading

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Prints each runtime event on stdout (the default observer writes the same lines to stderr).
private struct SayObserver: RuntimeObserver {
    func observe(_ event: RuntimeEvent) { say("  [\(event.kind.rawValue)] \(event.message)") }
}

let stallExample = Example(name: "stall", summary: "the stall watchdog, and a dump that finds a lock + sync cycle") {
    let previous = RuntimeObservation.observer
    RuntimeObservation.observer = SayObserver()
    defer { RuntimeObservation.observer = previous }

    let pool = WorkerPool(label: "server", threads: 4)
    pool.stallThreshold = .milliseconds(300)
    let handlers = (0..<3).map { SerialQueue(label: "handler.\($0)", pool: pool) }
    let done = WorkGroup()
    say("1. A handler blocks for 1.2 s in a call the pool cannot see (stall threshold 300 ms):")
    for request in 0..<30 {
        handlers[request % 2].async(group: done) { usleep(2_000) }  // ordinary requests, 2 ms each
    }
    handlers[2].async(group: done) { usleep(1_200_000) }  // the one that blocks
    usleep(600_000)
    say("  The dump meanwhile (the pool's block and its worker threads):")
    let dump = RuntimeSnapshot.capture().description
    for line in dump.split(separator: "\n") where line.contains("server") || line.contains("handler.") {
        say("    " + line)
    }
    _ = done.wait(timeout: .seconds(10))
    usleep(200_000)  // the end of the stall is seen at the next sample
    say("  The pool counted \(pool.statistics.stalls) stall(s).")
    _ = pool.shutdown(timeout: .seconds(10))

    say("\n2. Two threads deadlock through a lock and a sync (in a child process, which prints its dump and exits):")
    let outcome = runChild("stall-lock-sync-cycle", timeoutSeconds: 10)
    for line in outcome.output.split(separator: "\n") { say("    " + line) }
    say("  The child \(outcome.summary).")
}

/// The child of part 2: thread A holds `accounts` and waits in `sync` on 'ledger'; the item that 'ledger' runs, on a
/// pool worker B, waits for `accounts`. After half a second the main thread prints the dump and exits.
@Sendable func stallLockSyncCycleChild() {
    let accounts = MutexLock(name: "accounts")
    let ledger = SerialQueue(label: "ledger")
    let itemStarted = WorkGroup()
    itemStarted.enter()
    let lockTaken = WorkGroup()
    lockTaken.enter()
    ledger.async {
        itemStarted.leave()
        _ = lockTaken.wait(timeout: .seconds(5))
        accounts.withLock {}  // B waits for A's lock
    }
    _ = itemStarted.wait(timeout: .seconds(5))
    let requestThread = try? PosixThread(name: "request") {
        accounts.withLock {
            lockTaken.leave()
            ledger.sync {}  // A waits for B's item
        }
    }
    _ = requestThread
    usleep(500_000)
    say(RuntimeSnapshot.capture().description)
    exit(0)
}
