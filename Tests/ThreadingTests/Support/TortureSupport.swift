// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import CThreading
import Glibc
import Synchronization
import Testing

@testable import Threading

/// The parent of every torture suite: `.serialized`, so torture suites never run at the same time as each other
/// (each one already loads both cores); short by default, long with `-Xswiftc -DTHREADING_LONG_TESTS`.
@Suite(.serialized)
struct TortureTests {}

/// Sizes and seeds shared by the torture suites.
enum Torture {
    /// Whether the long variants were compiled in (`-Xswiftc -DTHREADING_LONG_TESTS`, `make torture`).
    static var isLong: Bool {
        #if THREADING_LONG_TESTS
        return true
        #else
        return false
        #endif
    }

    /// `short` in the default build, `long` under `THREADING_LONG_TESTS`.
    static func size(_ short: Int, long: Int) -> Int { isLong ? long : short }

    /// The seed of a run: `TORTURE_SEED` from the environment if set (to replay a failure), else a random one.
    /// Every summary line prints it.
    static func seed() -> UInt64 {
        if let text = getenv("TORTURE_SEED").map({ String(cString: $0) }), let value = UInt64(text) { return value }
        return UInt64.random(in: 1...UInt64.max)
    }

    /// Prints the figures of a torture run in one line (collected by `make torture` and the report).
    static func report(_ name: String, seed: UInt64, _ figures: KeyValuePairs<String, Int>) {
        let text = figures.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
        print("torture \(name): seed=\(seed) \(isLong ? "long" : "short") \(text)")
    }

    /// Busy work of about `units` small steps (a hold time inside a critical section or read section).
    @inline(never)
    static func spin(_ units: Int) {
        var x: UInt64 = 0x9E37_79B9
        for i in 0..<units { x = x &* 6_364_136_223_846_793_005 &+ UInt64(i) }
        if x == 42 { print("") }  // keeps the loop
    }
}

/// A small, fast, seedable generator (SplitMix64), so a failing run can be replayed with its printed seed.
struct TortureRandom: RandomNumberGenerator, Sendable {
    private var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
    /// A value in `0..<bound`.
    mutating func below(_ bound: Int) -> Int { Int(next() % UInt64(bound)) }
    /// True with probability `percent` / 100.
    mutating func chance(_ percent: Int) -> Bool { below(100) < percent }
}

/// One atomic integer in a class, so arrays of them can be built (`Atomic` itself is not copyable).
final class TortureCell: Sendable {
    let value: Atomic<Int>
    init(_ initial: Int = 0) { value = Atomic(initial) }
}

/// Records the first few violation messages of a run (so a failure says what happened) and counts all of them.
final class TortureViolations: Sendable {
    private let state = LockedValue<(count: Int, first: [String])>((0, []))
    func record(_ message: @autoclosure () -> String) {
        let text = message()
        state.withLock {
            $0.count += 1
            if $0.first.count < 5 { $0.first.append(text) }
        }
    }
    var count: Int { state.withLock { $0.count } }
    var messages: [String] { state.withLock { $0.first } }
}
