// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

// Thread-specific data: one key, a different value per thread, and a destructor that releases a
// thread's value when the thread exits (pthread_key_create with a destructor).

import Synchronization
import Threading

/// A per-thread value that reports its release.
private final class Scratch: Sendable {
    let owner: String

    init(owner: String) {
        self.owner = owner
    }

    deinit {
        let name = owner
        releasedValues.withLock { $0.append(name) }
    }
}

private let releasedValues = Mutex<[String]>([])

let tsdExample = Example(name: "tsd", summary: "ThreadLocal values per thread, released at thread exit") {
    let counter = try! ThreadLocal<Int> { 0 }
    let scratch = try! ThreadLocal<Scratch?> { nil }
    counter.value += 1
    for index in 1...3 {
        let thread = try! PosixThread<Int>(name: "tsd-\(index)") {
            scratch.value = Scratch(owner: "thread \(index)")
            for _ in 0..<(index * 10) { counter.value += 1 }
            return counter.value
        }
        print("thread \(index) counted \(thread.join()) in its own slot")
    }
    print("main thread's slot still holds \(counter.value)")
    let released = releasedValues.withLock { $0 }
    print("released at thread exit: \(released.sorted())")
}
