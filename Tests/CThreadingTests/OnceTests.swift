// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import CThreading
import Glibc
import Testing

/// What a once body records, reached through the context pointer.
private final class OnceProbe: @unchecked Sendable {  // `runs`/`recursion` are written only by the one body run
    let flag = SharedCell(cthr_once_t())
    var runs = 0
    var recursion: Int32 = -1
    var doneInsideBody = true
}

/// Counts the run, lets concurrent callers pile up, and checks that a recursive call reports EDEADLK.
private let countingBody: cthr_once_body_t = { context in
    let probe = Unmanaged<OnceProbe>.fromOpaque(context!).takeUnretainedValue()
    probe.runs += 1
    probe.doneInsideBody = cthr_once_done(probe.flag.pointer)
    probe.recursion = cthr_once_run(probe.flag.pointer, { _ in }, nil)
    _ = cthr_sleep_ns(20_000_000)
}

@Suite(.serialized) struct OnceTests {
    @Test func manyConcurrentCallersRunTheBodyOnce() {
        let probe = OnceProbe()
        #expect(cthr_once_init(probe.flag.pointer) == 0)
        #expect(cthr_once_done(probe.flag.pointer) == false)
        let callers = 8
        let gate = StartGate()
        let results = SharedSlots<Int32>(repeating: -1, count: callers)
        let runsSeen = SharedSlots<Int>(repeating: -1, count: callers)
        let threads = (0..<callers).map { index in
            spawnVoid {
                guard gate.arriveAndWait() else { return }
                let context = Unmanaged.passUnretained(probe).toOpaque()
                results[index] = cthr_once_run(probe.flag.pointer, countingBody, context)
                // Every caller returns only after the body finished, and sees what it wrote.
                runsSeen[index] = probe.runs
            }
        }
        #expect(gate.release(callers))
        for thread in threads {
            #expect(thread?.joined() == true)
        }
        #expect(results.values == Array(repeating: 0, count: callers))
        #expect(runsSeen.values == Array(repeating: 1, count: callers))
        #expect(probe.runs == 1)
        #expect(probe.recursion == EDEADLK)
        #expect(probe.doneInsideBody == false)
        #expect(cthr_once_done(probe.flag.pointer))
        // Later calls return at once without running the body.
        #expect(cthr_once_run(probe.flag.pointer, countingBody, Unmanaged.passUnretained(probe).toOpaque()) == 0)
        #expect(probe.runs == 1)
    }

    @Test func zeroInitialisedFlagRunsOnce() {
        let probe = OnceProbe()
        let context = Unmanaged.passUnretained(probe).toOpaque()
        #expect(cthr_once_run(probe.flag.pointer, countingBody, context) == 0)
        #expect(cthr_once_run(probe.flag.pointer, countingBody, context) == 0)
        #expect(probe.runs == 1)
        #expect(probe.recursion == EDEADLK)
    }

    @Test func badArgumentsReturnEINVAL() {
        let flag = SharedCell(cthr_once_t())
        #expect(cthr_once_init(nil) == EINVAL)
        #expect(cthr_once_run(nil, { _ in }, nil) == EINVAL)
        #expect(cthr_once_run(flag.pointer, nil, nil) == EINVAL)
        #expect(cthr_once_done(nil) == false)
        #expect(cthr_once_done(flag.pointer) == false)
    }
}
