// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import CThreading
import Synchronization
import Testing

@testable import Threading

extension TortureTests {
    /// Snapshots and dumps taken continuously while queues, job queues, pools and locks are created, used and
    /// destroyed: no crash, no deadlock (every wait has a deadline), and every closure and queue is released.
    @Suite struct SnapshotTorture {
        @Test func snapshotsWhileObjectsComeAndGo() {
            let seed = Torture.seed()
            let rounds = Torture.size(60, long: 600)
            let stop = Atomic<Bool>(false)
            let snapshots = Atomic<Int>(0)
            let life = LiveCounter()
            let snapshotter = try! PosixThread(name: "snapshotter") {
                while !stop.load(ordering: .relaxed) {
                    let snapshot = RuntimeSnapshot.capture()
                    _ = snapshot.description
                    snapshots.add(1, ordering: .relaxed)
                }
            }
            var random = TortureRandom(seed: seed)
            var completed = 0
            for round in 0..<rounds {
                let pool = round % 10 == 0 ? WorkerPool(label: "torture.snap.pool.\(round)", threads: 2) : nil
                let lock = MutexLock(name: "torture.snap.lock.\(round)")
                let group = WorkGroup()
                let count = Int.random(in: 4...24, using: &random)
                for index in 0..<count {
                    let tracked = Tracked(life, id: index)
                    if index % 3 == 0 {
                        let queue = ConcurrentQueue(label: "torture.snap.c.\(round).\(index)", pool: pool)
                        queue.async(group: group) { lock.withLock { _ = tracked.id } }
                    } else {
                        let queue = SerialQueue(label: "torture.snap.s.\(round).\(index)", pool: pool)
                        queue.async(group: group) { lock.withLock { _ = tracked.id } }
                        queue.sync { _ = tracked.id }
                    }
                }
                let jobs = JobQueue(name: "torture.snap.jobs.\(round)", pool: pool ?? .shared)
                jobs.addJob(Job { _ in lock.withLock {} })
                if group.wait(timeout: .seconds(30)) && jobs.waitUntilAllFinished(timeout: .seconds(30)) {
                    completed += 1
                }
                if let pool { poolTestShutDown(pool) }
            }
            stop.store(true, ordering: .relaxed)
            snapshotter.join()
            let released = waitUntil(seconds: 10) { life.live.value == 0 }
            Torture.report(
                "snapshot",
                seed: seed,
                ["rounds": rounds, "snapshots": snapshots.load(ordering: .relaxed)]
            )
            #expect(completed == rounds)
            #expect(released, "\(life.live.value) closures never released")
            #expect(snapshots.load(ordering: .relaxed) > 0)
        }
    }
}
