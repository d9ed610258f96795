// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import Synchronization
import Testing

@testable import Threading

extension TortureTests {
    /// Regression for a lost task found by the queue torture: a thread waiting in `sync` on a width-limited
    /// concurrent queue may be offered an async item queued ahead of it (the "help" hand-off). When the grant of its
    /// own `sync` arrived while such an offer was pending, the grant overwrote the offer and the item never ran (the
    /// queue then sat with a task nobody would run). Now the grant leaves a "granted with an item to run" state.
    ///
    /// Three threads mix `async`, `sync`, barriers and suspend/resume on one queue; every task must run exactly once.
    @Suite(.serialized)
    struct ConcurrentHelpTorture {
        @Test(arguments: ["async+sync", "async+barrier", "async+suspend", "sync+suspend", "barrierAsync+sync", "all"])
        func concurrentSyncHelpLosesNoTask(_ mix: String) {
            let seed = Torture.seed()
            let operations = Torture.size(1_500, long: 100_000)
            var ran = 0
            var lost = 0
            for width in [2, 3] {
                let queue = ConcurrentQueue(label: "torture.help.\(mix).\(width)", width: width)
                let submitted = Atomic<Int>(0)
                let done = Atomic<Int>(0)
                let ok = runTogether(3) { driver in
                    var random = TortureRandom(seed: seed &+ UInt64(driver))
                    for _ in 0..<operations {
                        let op = random.below(6)
                        submitted.add(1, ordering: .relaxed)
                        let body: @Sendable () -> Void = { done.add(1, ordering: .relaxed) }
                        switch (mix, op) {
                        case (_, 0), (_, 1):
                            if mix.hasPrefix("sync") { queue.sync(execute: body) } else { queue.async(execute: body) }
                        case ("async+sync", _), ("sync+suspend", 2), ("barrierAsync+sync", 2), ("all", 2):
                            queue.sync(execute: body)
                        case ("async+barrier", _), ("barrierAsync+sync", _), ("all", 3):
                            queue.async(flags: .barrier, execute: body)
                        case ("all", 4):
                            queue.sync(flags: .barrier, execute: body)
                        default:  // suspend, submit, resume
                            queue.suspend()
                            queue.async(execute: body)
                            queue.resume()
                        }
                    }
                }
                let all = waitUntil(seconds: 20) {
                    done.load(ordering: .relaxed) == submitted.load(ordering: .relaxed)
                }
                #expect(
                    ok && all,
                    "\(mix), width \(width): \(done.load(ordering: .relaxed)) of \(submitted.load(ordering: .relaxed)) ran"
                )
                _ = waitUntil(seconds: 0.02) { false }  // nothing may run twice either
                #expect(done.load(ordering: .relaxed) == submitted.load(ordering: .relaxed))
                ran += done.load(ordering: .relaxed)
                lost += submitted.load(ordering: .relaxed) - done.load(ordering: .relaxed)
            }
            Torture.report("concurrent-help \(mix)", seed: seed, ["tasks": ran, "lost": lost])
        }
    }
}
