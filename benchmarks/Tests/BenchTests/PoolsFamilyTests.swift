// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import BenchKit
import Testing

/// The `pools` family: every strategy completes its operation and returns the checked result.
@Suite struct PoolsFamilyTests {
    @Test(
        "every pools and blocking strategy returns its result",
        arguments: (Pools.lifeCatalog + Pools.blockingCatalog).map(\.id)
    )
    func poolsRun(id: String) throws {
        let entry = try #require((Pools.lifeCatalog + Pools.blockingCatalog).first { $0.id == id })
        let sample = entry.run(1, 0.01)
        #expect(sample.operations > 0)
        #expect(sample.badOperations == 0)
    }

    @Test func poolsAndBlockingAreSubcommands() throws {
        #expect(try BenchCommand.parseAsRoot(["pools", "--format", "json"]) is PoolsCommand)
        #expect(try BenchCommand.parseAsRoot(["blocking", "--format", "json"]) is BlockingPoolCommand)
    }
}
