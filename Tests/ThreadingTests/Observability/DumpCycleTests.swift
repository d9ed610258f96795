// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import CThreading
import Foundation
import Synchronization
import Testing

@testable import Threading

/// The dump finds wait cycles, each built in a child process (whose threads stay deadlocked until it exits).
///
/// The cycles come from the wait registry (`Runtime/Waits/`): these tests are disabled while this branch builds
/// against its stand-in (`WaitsInterfaceStub.swift`), which finds none; they are enabled when the two are merged.
@Suite
struct DumpCycleTests {
    /// Thread A holds a lock and waits in `sync` on a queue whose running item, on a pool worker B, waits for
    /// that lock: the dump prints the cycle first, naming the lock, the queue and both threads.
    @Test func aLockAndSyncCycleIsFound() async {
        let result = await #expect(processExitsWith: .success, observing: [\.standardOutputContent]) {
            let accounts = MutexLock(name: "cycle.accounts")
            let ledger = SerialQueue(label: "cycle.ledger")
            let itemStarted = QueueGate()
            let lockTaken = QueueGate()
            ledger.async {
                itemStarted.open()
                _ = lockTaken.wait(seconds: 10)
                accounts.withLock {}
            }
            guard itemStarted.wait() else { exit(10) }
            let holder = try? PosixThread(name: "cycle.request") {
                accounts.withLock {
                    lockTaken.open()
                    ledger.sync {}
                }
            }
            _ = holder
            var found: RuntimeSnapshot?
            _ = waitUntil(seconds: 10, every: 20_000_000) {
                let snapshot = RuntimeSnapshot.capture()
                if !snapshot.cycles.isEmpty { found = snapshot }
                return found != nil
            }
            guard let found, found.cycles.count == 1, found.cycles[0].threadIDs.count == 2 else { exit(11) }
            print(found.description)
            exit(0)
        }
        let text = String(decoding: result?.standardOutputContent ?? [], as: UTF8.self)
        #expect(text.contains("Found 1 wait cycle"), "\(text)")
        #expect(text.contains("cycle.accounts"), "\(text)")
        #expect(text.contains("cycle.ledger"), "\(text)")
    }

    /// Two threads join each other: the dump prints the join cycle.
    @Test func aJoinCycleIsFound() async {
        let result = await #expect(processExitsWith: .success, observing: [\.standardOutputContent]) {
            let second = LockedValue<PosixThread<Void>?>(nil)
            let ready = QueueGate()
            let first = try? PosixThread(name: "cycle.first") {
                _ = ready.wait(seconds: 10)
                second.withLock { $0 }?.join()
            }
            second.withLock { slot in
                slot = try? PosixThread(name: "cycle.second") {
                    _ = ready.wait(seconds: 10)
                    first?.join()
                }
            }
            ready.open()
            var found: RuntimeSnapshot?
            _ = waitUntil(seconds: 10, every: 20_000_000) {
                let snapshot = RuntimeSnapshot.capture()
                if !snapshot.cycles.isEmpty { found = snapshot }
                return found != nil
            }
            guard let found, found.cycles.count == 1 else { exit(11) }
            print(found.description)
            exit(0)
        }
        let text = String(decoding: result?.standardOutputContent ?? [], as: UTF8.self)
        #expect(text.contains("Found 1 wait cycle"), "\(text)")
        #expect(text.contains("cycle.first") && text.contains("cycle.second"), "\(text)")
    }
}
