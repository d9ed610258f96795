// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import CThreading
import Glibc
import Testing

@testable import Threading

/// Misuse of threads that traps (see the table in <doc:Misuse>): each exit test checks the message on stderr.
@Suite struct ThreadMisuseCrashTests {
    @Test func joinFromTheThreadItselfTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let box = LockedValue<PosixThread<Void>?>(nil)
            let go = Semaphore()
            let thread = try! PosixThread(name: "self-join") {
                go.wait()
                box.withLock { $0 }!.join()
            }
            box.withLock { $0 = thread }
            go.signal()
            _ = cthr_sleep_ns(20_000_000_000)
        }
        #expect(exitTestText(result).contains("called on thread"), "\(exitTestText(result))")
        #expect(exitTestText(result).contains("for itself (this would deadlock)"))
    }

    @Test func detachTwiceTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let thread = try! PosixThread(name: "twice") {}
            thread.detach()
            thread.detach()
        }
        #expect(exitTestText(result).contains("PosixThread \"twice\".detach(): the thread was already detached"))
    }
}
