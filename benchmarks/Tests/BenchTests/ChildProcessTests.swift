// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import Foundation
import Testing

@testable import BenchKit

@Suite("Child-process runs", .serialized)
struct ChildProcessTests {
    let shell = ChildProcessRunner(executable: URL(fileURLWithPath: "/bin/sh"), grace: 0)

    @Test("a child killed by a signal is reported as crashed with its signal")
    func crashIsReported() {
        let outcome = shell.run(arguments: ["-c", "kill -SEGV $$"], timeout: 10)
        #expect(outcome == .crashed(signal: SIGSEGV))
        #expect(outcome.abnormalDescription == "crashed (signal 11)")
        let sample = ChildProcessRunner.sample(from: outcome)
        #expect(sample.abnormalOutcome == "crashed (signal 11)")
    }

    @Test("a child that does not finish is killed and reported as hung")
    func hangIsReported() {
        let started = Date()
        let outcome = shell.run(arguments: ["-c", "exec sleep 30"], timeout: 0.3)
        #expect(outcome == .hung(seconds: 0.3))
        #expect(Date().timeIntervalSince(started) < 10)
    }

    @Test("a child report with bad reads is reported as corrupt")
    func corruptIsReported() throws {
        let line =
            #"{"badOperations":7,"cpuNsPerOp":1,"fairness":1,"operations":100,"opsPerSecond":5,"p50Ns":1,"p99Ns":2}"#
        let outcome = shell.run(arguments: ["-c", "echo '\(line)'"], timeout: 10)
        guard case .finished(let report) = outcome else {
            Issue.record("expected a finished child, got \(outcome)")
            return
        }
        #expect(report.badOperations == 7)
        #expect(outcome.abnormalDescription == "corrupt (7 bad reads)")
        #expect(shell.run(arguments: ["-c", "exit 3"], timeout: 10) == .failed(status: 3))
    }

    /// The bench executable built next to this test binary.
    static var benchExecutable: URL {
        ChildProcessRunner.currentExecutable().deletingLastPathComponent().appendingPathComponent("bench")
    }

    @Test("the real unsynchronized cache, run in a child bench process, crashes or reads corrupt values")
    func unsynchronizedCacheFails() throws {
        let bench = Self.benchExecutable
        try #require(FileManager.default.isExecutableFile(atPath: bench.path), "build the bench product first")
        let runner = ChildProcessRunner(executable: bench, grace: 10)
        var verdict: String?
        for _ in 0..<5 where verdict == nil {
            let sample = runner.runCache(
                strategy: UnsynchronizedCache<IntCacheShape>.id,
                parameters: .init(keyCount: 64, readRatio: 0.5),
                threads: 4,
                seconds: 0.5
            )
            verdict = sample.abnormalOutcome
        }
        let text = try #require(verdict)
        // Under a sanitizer the child's death takes another form: ThreadSanitizer reports the race and exits with
        // status 66, AddressSanitizer reports the use-after-free and exits with status 1.
        #expect(
            text.hasPrefix("crashed (signal") || text.hasPrefix("corrupt (") || text.hasPrefix("hung")
                || text.hasPrefix("failed (exit status 66)") || text.hasPrefix("failed (exit status 1)")
        )
    }

    /// `MutexLock`'s membarrier mode is per process: the locks family runs it in a child bench process started with
    /// `THREADING_LOCK_MEMBARRIER=1`. The counter stays exact, the child runs in the mode and reports its membarrier
    /// calls, and this process (the default mode) makes none. How many calls the child makes depends on whether a
    /// contended thread had to sleep, which the scheduler decides; that a sleeper makes one is the library's own
    /// test (`LockStressTests`).
    @Test("the membarrier-mode MutexLock runs in a child bench process and reports its calls")
    func membarrierModeLockInAChild() throws {
        let bench = Self.benchExecutable
        try #require(FileManager.default.isExecutableFile(atPath: bench.path), "build the bench product first")
        let runner = ChildProcessRunner(executable: bench)
        let entry = Locks.Entry(membarrierModeOf: OursMutexLock.self, runner: runner)
        #expect(entry.id == "mutexlock-membarrier")
        let sample = entry.run(8, 0.3)
        #expect(sample.abnormalOutcome == nil)
        #expect(sample.operations > 0)
        #expect(sample.badOperations == 0)
        let outcome = runner.run(
            arguments: ["child-locks", "--lock", OursMutexLock.id, "--threads", "2", "--seconds", "0.05"],
            timeout: 30,
            environment: ChildProcessRunner.membarrierMode
        )
        guard case .finished(let report) = outcome else {
            Issue.record("the child did not finish: \(outcome)")
            return
        }
        #expect(report.locksUseMembarrier == true)
        #expect(report.membarrierCallsPerSecond != nil)
        let local = Locks.runWorkload(OursMutexLock.self, threads: 8, seconds: 0.1)
        #expect(local.membarrierCallsPerSecond == 0)
    }
}
