// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import Testing
import Threading

/// Keeps the README's opening example true: the same code, with its outcome checked.
@Suite struct ReadmeExampleTests {
    @Test func readmeExampleRunsAndCountsEveryHit() throws {
        let cache = RCUMap<Int, String>()  // lock-free reads, per-key updates
        let writer = SerialQueue(label: "cache-writer")
        writer.sync { for key in 0..<100 { cache.set("v\(key)", forKey: key) } }

        let readers = try (0..<4).map { n in
            try PosixThread(name: "reader-\(n)") { (0..<100).compactMap { cache.get($0) }.count }
        }
        let hits = LockedValue(0, name: "hits")
        for reader in readers {
            let seen = reader.join()
            hits.withLock { $0 += seen }
        }
        #expect(hits.withLock { $0 } == 400)
    }
}
