// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

// POSIX threads: joinable threads hand back an exit value (pthread_exit / pthread_join), detached
// threads cannot be joined and clean up on their own, and the stack size is an attribute of creation.

import Threading

let threadsExample = Example(name: "threads", summary: "detached vs joinable, exit values, stack sizes") {
    // Joinable: join() waits and returns the body's value (the typed form of pthread_exit's void*).
    let joinable = try! PosixThread(name: "joinable") { (1...100).reduce(0, +) }
    print("joinable thread returned \(joinable.join())")

    // Detached: nobody joins it; it signals when done.
    let finished = Semaphore()
    let detached = try! PosixThread(name: "detached") {
        finished.signal()
    }
    detached.detach()
    print("detached thread signalled: \(finished.wait(timeout: .seconds(10)))")

    // Stack sizes: default, an explicit size, and a too-small request raised to the minimum.
    print("minimum stack size: \(PosixThread.minimumStackSize) bytes")
    for requested in [nil, 256 * 1024, 1024] as [Int?] {
        let thread = try! PosixThread<Int>(stackSize: requested) { (try? PosixThread.currentStackSize()) ?? -1 }
        let label = requested.map { "\($0) bytes" } ?? "default"
        print("requested \(label.padding(13))-> actual stack \(thread.join()) bytes")
    }

    // A stack the system refuses is an error you can handle, not a crash.
    do {
        _ = try PosixThread(stackSize: -1) {}
    } catch {
        print("stack size -1: \(error)")
    }
}
