// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import BenchKit
import Testing
import Threading

/// The `actors` family: every case completes operations, and the family is a subcommand.
@Suite struct ActorsFamilyTests {
    static let all =
        Actors.pingPongCatalog + Actors.offloadCatalog + Actors.waitCatalog
        + Actors.completionWaitCatalog

    /// A case blocks its calling thread while its tasks run, so it runs on a thread of its own: on a cooperative
    /// thread it would take a thread from the default actors and tasks it measures.
    @Test("every actors case completes round trips", arguments: ActorsFamilyTests.all.map(\.id))
    func actorsRun(id: String) async throws {
        let entry = try #require(Self.all.first { $0.id == id })
        for count in [1, 2] {
            let sample = await (try PosixThread { entry.run(count, 0.01) }).join()
            #expect(sample.operations > 0)
            #expect(sample.badOperations == 0)
        }
    }

    @Test func actorsIsASubcommand() throws {
        #expect(try BenchCommand.parseAsRoot(["actors", "--format", "json"]) is ActorsCommand)
    }
}
