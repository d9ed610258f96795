// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import CThreading
import Glibc
import Testing

@testable import Threading

/// Misuse of jobs that traps (see the table in <doc:Misuse>): each exit test checks the message on stderr.
@Suite struct JobMisuseCrashTests {
    @Test func lowerWidthBelowOneTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let queue = JobQueue(name: "shrink", maxConcurrentJobs: 2)
            queue.maxConcurrentJobs = 0
        }
        #expect(exitTestText(result).contains("maxConcurrentJobs = 0: must be ≥ 1"), "\(exitTestText(result))")
    }

    @Test func finishOnASynchronousResultJobTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let job = ResultJob<Int>(name: "sync-result") { _ in 1 }
            job.finish(returning: 2)
        }
        #expect(exitTestText(result).contains("is not asynchronous"), "\(exitTestText(result))")
    }
}
