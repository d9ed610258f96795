// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import CThreading
import Glibc
import Synchronization
import Testing

@testable import Threading

/// Snapshots taken without pause while threads and named locks are created, contended, waited on and destroyed:
/// no crash, no deadlock (every wait has a deadline), and nothing left registered afterwards. Run it under
/// `swift test --sanitize=thread --filter Waits` and `--sanitize=address`.
@Suite(.serialized) struct WaitsTortureTests {
    @Test func snapshotsWhileThreadsAndLocksComeAndGo() throws {
        let rounds = Torture.size(150, long: 3_000)
        let stop = AtomicFlag()
        let captures = Atomic<Int>(0)
        let cyclesSeen = LockedValue<[String]>([])
        let spawned = LockedValue<[Int32]>([])
        let capturer = try PosixThread(name: "waits-capture") {
            while !stop.isSet {
                let capture = WaitRegistry.capture()
                if !capture.cycles.isEmpty {
                    let lines = capture.cycles.map(\.description)
                    cyclesSeen.withLock { $0.append(contentsOf: lines) }
                }
                // Touch every field, so a torn read would show.
                for thread in capture.threads {
                    _ = thread.name.count + thread.heldLocks.count + (thread.waitingFor?.target.count ?? 0)
                }
                for lock in capture.heldLocks { _ = lock.name.count + lock.waiters }
                captures.add(1, ordering: .relaxed)
            }
        }
        let workers = try (0..<2).map { worker in
            try PosixThread(name: "waits-torture-\(worker)") {
                for round in 0..<rounds {
                    let mutex = MutexLock(name: "torture.m.\(worker).\(round)")
                    let recursive = RecursiveLock(name: "torture.r.\(worker).\(round)")
                    let readWrite = ReadWriteLock(name: "torture.rw.\(worker).\(round)")
                    let semaphore = Semaphore(value: 0)
                    mutex.lock()
                    readWrite.writeLock()
                    let helper = try! PosixThread(name: "waits-helper") {
                        spawned.withLock { $0.append(cthr_thread_id()) }
                        semaphore.signal()
                        mutex.withLock { recursive.withLock { recursive.withLock {} } }
                        readWrite.withReadLock {}
                    }
                    blockingCall { _ = semaphore.wait(timeout: .seconds(10)) }
                    Torture.spin(round % 7 * 200)
                    mutex.unlock()
                    readWrite.unlock()
                    blockingCall { helper.join() }
                }
            }
        }
        for worker in workers { blockingCall { worker.join() } }
        stop.set()
        blockingCall { capturer.join() }
        #expect(captures.load(ordering: .relaxed) > 0)
        let cycles = cyclesSeen.withLock { $0 }
        #expect(cycles.isEmpty, "\(cycles.joined(separator: "\n"))")
        #expect(NamedLockRegistry.count(containing: "\"torture.") == 0)
        let gone = spawned.withLock { Set($0) }
        #expect(waitUntil { WaitRegistry.capture().threads.allSatisfy { !gone.contains($0.threadID) } })
        Torture.report(
            "waits",
            seed: 0,
            ["rounds": rounds, "captures": captures.load(ordering: .relaxed), "threads": gone.count]
        )
    }
}
