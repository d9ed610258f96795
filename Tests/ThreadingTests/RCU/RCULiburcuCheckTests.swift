// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import CThreading
import Testing

@testable import Threading

/// The start-up check that the liburcu loaded at run time matches the headers the inlined fast paths were compiled
/// with: the probe agrees on this machine, each disagreement is reported, and a mismatch stops the process with one
/// line.
@Suite struct RCULiburcuCheckTests {
    /// An observation in which the library and the inlined code agree on everything.
    private static func matching() -> cthr_rcu_abi_observation_t {
        var observation = cthr_rcu_abi_observation_t()
        observation.gp_size_compiled = 128
        observation.gp_size_loaded = 128
        observation.registered_seen = 1
        observation.tid_seen = 1
        observation.inline_lock_seen = 1
        observation.inline_unlock_seen = 1
        observation.library_lock_seen = 1
        return observation
    }

    @Test func theInstalledLiburcuMatchesTheHeaders() throws {
        var observation = cthr_rcu_abi_observation_t()
        try #require(cthr_rcu_abi_probe(&observation) == 0)
        #expect(observation.gp_size_compiled > 0)
        #expect(observation.gp_size_loaded == observation.gp_size_compiled)
        #expect(cthr_rcu_abi_verdict(&observation) == 0)
        #expect(RCU.liburcuMismatchLine(observation, library: nil) == nil)
        let path = try #require(cthr_rcu_abi_library_path())
        #expect(String(cString: path).contains("liburcu-memb.so"))
    }

    @Test(arguments: [
        ("registered_seen", CTHR_RCU_ABI_REGISTRATION, "registration"),
        ("tid_seen", CTHR_RCU_ABI_REGISTRATION, "registration"),
        ("inline_lock_seen", CTHR_RCU_ABI_READ_SECTION, "read-section"),
        ("inline_unlock_seen", CTHR_RCU_ABI_READ_SECTION, "read-section"),
        ("library_lock_seen", CTHR_RCU_ABI_READ_SECTION, "read-section"),
    ])
    func eachDisagreementIsReported(field: String, bit: Int32, word: String) {
        var observation = Self.matching()
        #expect(cthr_rcu_abi_verdict(&observation) == 0)
        switch field {
        case "registered_seen": observation.registered_seen = 0
        case "tid_seen": observation.tid_seen = 0
        case "inline_lock_seen": observation.inline_lock_seen = 0
        case "inline_unlock_seen": observation.inline_unlock_seen = 0
        case "library_lock_seen": observation.library_lock_seen = 0
        default: Issue.record("unknown field \(field)")
        }
        #expect(cthr_rcu_abi_verdict(&observation) == bit)
        let line = RCU.liburcuMismatchLine(observation, library: "/opt/urcu/liburcu-memb.so.8")
        #expect(line?.contains("/opt/urcu/liburcu-memb.so.8") == true)
        #expect(line?.contains(word) == true)
        #expect(line?.contains("\n") == false)
    }

    @Test func anotherSizeOfTheGracePeriodStateIsReported() {
        var observation = Self.matching()
        observation.gp_size_loaded = 192
        #expect(cthr_rcu_abi_verdict(&observation) == CTHR_RCU_ABI_GP_SIZE)
        #expect(RCU.liburcuMismatchLine(observation, library: nil)?.contains("192 bytes there, 128 here") == true)
        // A loader that cannot tell the size is not a mismatch by itself.
        observation.gp_size_loaded = 0
        #expect(cthr_rcu_abi_verdict(&observation) == 0)
    }

    @Test func aMismatchStopsTheProcessWithOneLine() async {
        let result = await #expect(processExitsWith: .exitCode(1), observing: [\.standardErrorContent]) {
            var observation = cthr_rcu_abi_observation_t()
            observation.gp_size_compiled = 128
            observation.gp_size_loaded = 128
            if let line = RCU.liburcuMismatchLine(observation, library: "liburcu-memb.so.8") {
                RCU.stopForLiburcuMismatch(line)
            }
        }
        let text = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(text.hasPrefix("Threading: the liburcu loaded at run time (liburcu-memb.so.8) does not match"))
        #expect(text.split(separator: "\n").count == 1)
    }
}
