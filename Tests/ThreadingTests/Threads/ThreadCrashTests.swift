// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import CThreading
import Glibc
import Testing

@testable import Threading

/// Thread misuse that traps, checked in a child process together with the message it prints.
@Suite("Thread misuse traps")
struct ThreadCrashTests {
    @Test("joining a thread twice, or detaching a joined one, traps")
    func doubleJoin() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let thread = try! PosixThread(name: "once-only") {}
            blockingCall { thread.join() }
            blockingCall { thread.join() }
        }
        let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(message.contains("PosixThread \"once-only\".join(): the thread was already joined"))
        await #expect(processExitsWith: .failure) {
            let thread = try! PosixThread {}
            thread.detach()
            blockingCall { thread.join() }
        }
    }

    @Test("join(timeout:) after a join or a detach traps as join() does; join() after a timed join that got it too")
    func timedJoinMisuse() async {
        let joined = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let thread = try! PosixThread(name: "timed") {}
            blockingCall { thread.join() }
            _ = blockingCall { thread.join(timeout: .seconds(1)) }
        }
        let afterJoin = String(decoding: joined?.standardErrorContent ?? [], as: UTF8.self)
        #expect(afterJoin.contains("PosixThread \"timed\".join(timeout:): the thread was already joined"))
        let detached = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let thread = try! PosixThread(name: "timed") {}
            thread.detach()
            _ = blockingCall { thread.join(timeout: .zero) }
        }
        let afterDetach = String(decoding: detached?.standardErrorContent ?? [], as: UTF8.self)
        #expect(afterDetach.contains("PosixThread \"timed\".join(timeout:): the thread was already detached"))
        let timedThenPlain = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let thread = try! PosixThread(name: "timed") {}
            // Not a trap: the test fails.
            guard blockingCall({ thread.join(timeout: .seconds(20)) != nil }) else { exit(0) }
            blockingCall { thread.join() }
        }
        let afterTimed = String(decoding: timedThenPlain?.standardErrorContent ?? [], as: UTF8.self)
        #expect(afterTimed.contains("PosixThread \"timed\".join(): the thread was already joined"))
    }

    @Test("join(timeout:) from the thread itself traps instead of timing out")
    func timedJoinFromTheThreadItself() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let box = LockedValue<PosixThread<Void>?>(nil)
            let go = Semaphore()
            let thread = try! PosixThread(name: "self-timed") {
                go.wait()
                _ = box.withLock { $0 }!.join(timeout: .seconds(1))
            }
            box.withLock { $0 = thread }
            go.signal()
            _ = cthr_sleep_ns(20_000_000_000)
        }
        let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(message.contains("PosixThread \"self-timed\".join(timeout:): called on thread"), "\(message)")
        #expect(message.contains("for itself (this would deadlock)"))
    }

    @Test("join() while a join(timeout:) waits on another thread traps, naming the timed join")
    func joinDuringTimedJoin() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let release = Semaphore()
            let thread = try! PosixThread(name: "contested") { _ = release.wait(timeout: .seconds(20)) }
            let waiting = Semaphore()
            let timed = try! PosixThread {
                waiting.signal()
                _ = thread.join(timeout: .seconds(20))
            }
            _ = blockingCall { waiting.wait(timeout: .seconds(20)) }
            // Wait until the timed join has claimed the handle.
            let deadline = cthr_clock_now_ns() + 20_000_000_000
            while thread.state.load(ordering: .acquiring) != 3 && cthr_clock_now_ns() < deadline {
                PosixThread.yield()
            }
            blockingCall { thread.join() }
            timed.detach()
        }
        let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(message.contains("PosixThread \"contested\".join(): the thread is being joined by a join(timeout:)"))
    }
}
