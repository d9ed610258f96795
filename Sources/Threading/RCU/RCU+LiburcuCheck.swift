// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import CThreading

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

extension RCU {
    /// Checks, once per process and before the first use of RCU, that the liburcu loaded at run time matches the
    /// headers Threading was compiled with; on a mismatch the process stops with one line on standard error.
    ///
    /// Threading compiles liburcu's read-side fast paths inline, so they depend on the layout of liburcu's reader
    /// state. The dynamic loader only checks the soname (`liburcu-memb.so.8`), which liburcu has kept across releases
    /// whose layouts differ. `cthr_rcu_abi_probe` asks the loaded library whether it sees what the inlined code does.
    static let liburcuChecked: Void = {
        var observation = cthr_rcu_abi_observation_t()
        let code = cthr_rcu_abi_probe(&observation)
        // A thread that cannot be created leaves the check undone; RCU itself would then fail the same way.
        guard code == 0 else { return }
        if let line = liburcuMismatchLine(observation, library: cthr_rcu_abi_library_path().map { String(cString: $0) })
        {
            stopForLiburcuMismatch(line)
        }
    }()

    /// The one line that reports a mismatch between the loaded liburcu and the compiled-in headers, or `nil` when
    /// `observation` shows that they match.
    static func liburcuMismatchLine(_ observation: cthr_rcu_abi_observation_t, library: String?) -> String? {
        var copy = observation
        let mask = cthr_rcu_abi_verdict(&copy)
        guard mask != 0 else { return nil }
        var what: [String] = []
        if mask & CTHR_RCU_ABI_GP_SIZE != 0 {
            what.append(
                "urcu_memb_gp is \(observation.gp_size_loaded) bytes there, \(observation.gp_size_compiled) here"
            )
        }
        if mask & CTHR_RCU_ABI_REGISTRATION != 0 { what.append("its reader registration moved") }
        if mask & CTHR_RCU_ABI_READ_SECTION != 0 { what.append("its read-section counter moved") }
        return "Threading: the liburcu loaded at run time (\(library ?? "liburcu-memb")) does not match the liburcu "
            + "headers Threading was compiled with (\(what.joined(separator: "; "))); rebuild against the installed "
            + "liburcu"
    }

    /// Writes `line` to standard error and ends the process with status 1, without a backtrace: the fix is a
    /// rebuild, not a debugging session.
    static func stopForLiburcuMismatch(_ line: String) -> Never {
        writeStandardError(line + "\n")
        exit(1)
    }
}
