// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

// Eight cases, serial/concurrent queue x sync/async x nesting, each printing digits in the order the queue allows.
// `sync` runs on the calling thread and returns after the closure; `async` returns at once. The one
// deadlock (serial, sync in async: the queue waits for itself) is run in a child process, where the engine stops
// it with a diagnostic naming the queue and the thread instead of hanging (libdispatch gives a bare SIGILL).

import Threading

let syncAsyncExample = Example(
    name: "sync-async",
    summary: "the eight serial/concurrent x sync/async cases, nested"
) {
    let serial = SerialQueue(label: "serial")
    let concurrent = ConcurrentQueue(label: "concurrent")

    // 1. serial, sync: always 1234.
    var log = PrintLog()
    serial.sync { log.print(1) }
    log.print(2)
    serial.sync { log.print(3) }
    log.print(4)
    print("serial, sync:              \(log.joined)")

    // 2. serial, async: 1 before 3 and 2 before 4; the rest depends on timing (1234, 2134, 1243, 2413, 2143).
    log = PrintLog()
    serial.async { [log] in log.print(1) }
    log.print(2)
    serial.async { [log] in log.print(3) }
    log.print(4)
    serial.sync {}  // wait for the queue to drain
    print("serial, async:             \(log.joined)")

    // 3. serial, sync in async: deadlock. In a child process: it prints 1, 2, 5 (or 1, 5, 2) and is stopped —
    // here the stop comes at once, so the main thread's 5 is printed only if it won the race to the terminal.
    let child = runChild("serial-sync-in-async")
    let printed = child.output.split(separator: "\n").filter { $0.count == 1 }.joined()
    let diagnostic = child.output.split(separator: "\n").first { $0.contains("deadlock") } ?? "(no diagnostic)"
    print("serial, sync in async:     \(printed), then the child \(child.summary)")
    print("  diagnostic: \(diagnostic)")

    // 4. serial, async in sync: 12345, 12435 or 12453.
    log = PrintLog()
    log.print(1)
    serial.sync { [log] in
        log.print(2)
        serial.async { log.print(3) }
        log.print(4)
    }
    log.print(5)
    serial.sync {}
    print("serial, async in sync:     \(log.joined)")

    // 5. concurrent, sync: always 1234.
    log = PrintLog()
    concurrent.sync { log.print(1) }
    log.print(2)
    concurrent.sync { log.print(3) }
    log.print(4)
    print("concurrent, sync:          \(log.joined)")

    // 6. concurrent, async: 2 before 4; 1 and 3 anywhere.
    log = PrintLog()
    let group = WorkGroup()
    concurrent.async(group: group) { [log] in log.print(1) }
    log.print(2)
    concurrent.async(group: group) { [log] in log.print(3) }
    log.print(4)
    _ = group.wait(timeout: .seconds(10))
    print("concurrent, async:         \(log.joined)")

    // 7. concurrent, sync in async: no deadlock (the sync does not wait for the running task); 3 before 4.
    log = PrintLog()
    log.print(1)
    concurrent.async(group: group) { [log] in
        log.print(2)
        concurrent.sync { log.print(3) }
        log.print(4)
    }
    log.print(5)
    _ = group.wait(timeout: .seconds(10))
    print("concurrent, sync in async: \(log.joined)")

    // 8. concurrent, async in sync: 2 before 4 before 5; 3 anywhere after 2.
    log = PrintLog()
    log.print(1)
    concurrent.sync { [log] in
        log.print(2)
        concurrent.async(group: group) { log.print(3) }
        log.print(4)
    }
    log.print(5)
    _ = group.wait(timeout: .seconds(10))
    print("concurrent, async in sync: \(log.joined)")
}

/// The deadlocking case, run by the child process: `serial.async { serial.sync { } }`.
func serialSyncInAsyncChild() {
    let serial = SerialQueue(label: "serial")
    say(1)
    serial.async {
        say(2)
        serial.sync { say(3) }  // waits for the task that is running it: stopped with a diagnostic
        say(4)
    }
    say(5)
    PosixThread.sleep(for: .seconds(10))  // the diagnostic ends the process long before this
    say("no deadlock was diagnosed")
}
