// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import CThreading
import Glibc
import Testing

@testable import Threading

/// Misuse of RCU that traps (see the table in <doc:Misuse>): each exit test checks the message on stderr.
@Suite struct RCUMisuseCrashTests {
    @Test func unregisterInsideReadSectionTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let value = RCUValue(1)
            value.read { _ in _ = RCU.unregisterCurrentThread() }
        }
        #expect(exitTestText(result).contains("RCU.unregisterCurrentThread() inside a read section"))
    }
}
