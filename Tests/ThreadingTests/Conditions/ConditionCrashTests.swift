// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import CThreading
import Glibc
import Testing

@testable import Threading

/// Misuse of semaphores, once and conditions that traps, checked in a child process with its message.
@Suite("Condition misuse traps")
struct ConditionCrashTests {
    @Test("a negative semaphore value traps with a clear message")
    func negativeSemaphore() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = Semaphore(value: -1)
        }
        let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(message.contains("Semaphore(value: -1): the initial value must not be negative"))
    }

    @Test("Once.run from inside its own body traps instead of deadlocking")
    func onceRecursion() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let once = Once()
            blockingCall { once.run { once.run {} } }
        }
        let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(message.contains("Once.run(_:): called again from inside its own body"))
    }

    @Test("waiting on a condition without holding the lock traps")
    func conditionWithoutLock() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let lock = MutexLock(name: "cv-lock")
            _ = ConditionVariable().wait(lock, timeout: .seconds(1))
        }
        let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(message.contains("MutexLock \"cv-lock\" is not held"))
    }
}
