// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import Testing
import Threading

/// Keeps the README's opening example true: the same code, with its outcome checked and a deadline before the joins.
@Suite struct ReadmeExampleTests {
    @Test func readmeExampleRunsAndCountsEveryHit() throws {
        let cache = RCUMap<Int, String>()  // lock-free reads, per-key updates
        let writer = SerialQueue(label: "cache-writer")
        writer.sync { for key in 0..<100 { cache.set("v\(key)", forKey: key) } }

        let finished = Semaphore()  // lets every join below happen only after a deadline-bounded wait
        let readers = try (0..<4).map { n in
            try PosixThread(name: "reader-\(n)") {
                defer { finished.signal() }
                return (0..<100).compactMap { cache.get($0) }.count
            }
        }
        for _ in readers { try #require(finished.wait(timeout: .seconds(20)), "a reader did not finish in time") }
        let hits = LockedValue(0, name: "hits")
        for reader in readers {
            let seen = reader.join()
            hits.withLock { $0 += seen }
        }
        #expect(hits.withLock { $0 } == 400)
    }
}
