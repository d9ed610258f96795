// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

// A shared cache: threads set and read one dictionary. Unsynchronized, a Swift dictionary written by two
// threads at once corrupts its storage: the process crashes (a double free, a bad pointer) or the cache silently
// loses entries. That run happens in a child process so this example survives it; the child repeats the workload
// until the race shows (on two cores it nearly always does in the first round), within a bound of rounds and
// seconds. Then the same workload is made safe four ways, as the seed does: a serial queue, a mutex, a semaphore
// and a barrier on a concurrent queue.

import Threading

/// Writers and readers of the workload: each writer sets its own keys, readers read any key.
private let writers = 4
private let keysPerWriter = 2_000

/// The unsynchronized cache. `@unchecked Sendable` is the lie that lets the bug compile.
private final class UnsafeCache: @unchecked Sendable {
    var storage: [Int: String] = [:]
}

/// Runs the workload through `access`, which must make each closure exclusive (or readers shared, writers
/// exclusive with `write`); returns the number of entries at the end.
private func hammer(
    read: @escaping @Sendable (() -> Void) -> Void,
    write: @escaping @Sendable (@escaping @Sendable () -> Void) -> Void,
    cache: UnsafeCache,
    flush: () -> Void
) -> Int {
    runTogether(writers + 2, name: "cache") { index in
        if index < writers {
            for key in 0..<keysPerWriter {
                write { cache.storage[index * keysPerWriter + key] = "value\(key)" }
            }
        } else {
            for key in 0..<keysPerWriter {
                read { _ = cache.storage[key] }
            }
        }
    }
    flush()
    return cache.storage.count
}

/// The child: the workload with no synchronization at all, round after round until the cache breaks. A round
/// that happens to survive proves nothing (the scheduler never preempted a writer inside a resize), so the child
/// tries again; the bound (1,000 rounds or 10 s) only keeps it from running forever on a machine where threads
/// never overlap.
func unsynchronizedCacheChild() {
    let expected = writers * keysPerWriter
    let start = ContinuousClock.now
    var round = 0
    while round < 1_000 && ContinuousClock.now - start < .seconds(10) {
        round += 1
        let cache = UnsafeCache()
        let count = hammer(read: { $0() }, write: { $0() }, cache: cache, flush: {})
        if count != expected {
            say("round \(round): corrupt: \(count) entries instead of \(expected)")
            exit(3)
        }
        // The right number of entries can still hold wrong values (a write landed in storage being moved).
        for writer in 0..<writers {
            for key in 0..<keysPerWriter where cache.storage[writer * keysPerWriter + key] != "value\(key)" {
                say("round \(round): corrupt: entry \(writer * keysPerWriter + key) lost its value")
                exit(3)
            }
        }
    }
    say("survived \(round) rounds with a consistent cache: the threads never overlapped (one core?)")
}

let cacheCrashExample = Example(
    name: "cache-crash",
    summary: "an unsynchronized shared cache crashes or corrupts; four ways to fix it"
) {
    let child = runChild("unsynchronized-cache", timeoutSeconds: 20)
    let corrupt = child.output.split(separator: "\n").first { $0.contains("corrupt") }
    if child.timedOut {
        print("unsynchronized: corrupt: the dictionary's storage looped forever (child killed after 20 s)")
    } else if let signal = child.signal {
        print("unsynchronized: crashed (signal \(signal), \(signalName(signal)))")
    } else if child.output.contains("Sanitizer") {
        print("unsynchronized: crashed (\(child.summary))")
    } else if let corrupt {
        print("unsynchronized: \(corrupt)")
    } else {
        print("unsynchronized: \(child.output.split(separator: "\n").last ?? "no output") (\(child.summary))")
    }

    let expected = writers * keysPerWriter
    func report(_ label: String, _ count: Int) {
        print("\(label.padding(26))\(count) entries of \(expected): \(count == expected ? "ok" : "WRONG")")
    }

    // 1. A serial queue: every access is a sync on it (the classic dispatch_sync onto a serial queue).
    let serial = SerialQueue(label: "cache.serial")
    var cache = UnsafeCache()
    report(
        "serial queue (sync):",
        hammer(read: { serial.sync(execute: $0) }, write: { serial.sync(execute: $0) }, cache: cache) {}
    )

    // 2. A mutex (as with pthread_mutex).
    let mutex = MutexLock(name: "cache")
    cache = UnsafeCache()
    report("MutexLock:", hammer(read: { mutex.withLock($0) }, write: { mutex.withLock($0) }, cache: cache) {})

    // 3. A semaphore of value 1 (as with dispatch_semaphore).
    let semaphore = Semaphore(value: 1)
    let exclusive: @Sendable (() -> Void) -> Void = { body in
        semaphore.wait()
        body()
        semaphore.signal()
    }
    cache = UnsafeCache()
    report("Semaphore(1):", hammer(read: exclusive, write: { exclusive($0) }, cache: cache) {})

    // 4. Readers in parallel with sync, writers as async barriers (dispatch_barrier_async); a final barrier sync
    // waits for the last write.
    let barrierQueue = ConcurrentQueue(label: "cache.barrier")
    cache = UnsafeCache()
    let count = hammer(
        read: { barrierQueue.sync(execute: $0) },
        write: { work in barrierQueue.async(flags: .barrier, execute: work) },
        cache: cache
    ) { barrierQueue.sync(flags: .barrier) {} }
    report("concurrent queue, barrier:", count)
}

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
