// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import CThreading
import Testing
import Threading

/// Misuse of RCU that would deadlock is diagnosed: the process traps with a message naming the call.
@Suite struct RCUCrashTests {
    private static func stderr(_ result: ExitTest.Result?) -> String {
        String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
    }

    @Test func synchronizeInsideReadTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let value = RCUValue(1)
            value.read { _ in RCU.synchronize() }
        }
        #expect(Self.stderr(result).contains("RCU.synchronize() called inside an RCU read section"))
    }

    /// A read section that waits on a semaphore: every blocking wait of the library refuses to wait inside a read
    /// section (RCU rule 1), naming the rule and the wait.
    @Test func readSectionWaitingOnASemaphoreTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            startExitTestWatchdog()
            let value = RCUValue(1)
            let never = Semaphore(value: 0)
            value.read { _ in never.wait() }
        }
        let text = Self.stderr(result)
        #expect(text.contains("Threading: a blocking wait inside an RCU read section: thread"), "\(text)")
        #expect(text.contains("waits on Semaphore at"), "\(text)")
        #expect(text.contains("a read section must not block (RCU rule 1)"), "\(text)")
    }

    /// A read section that joins a thread which calls `RCU.synchronize()`: the grace period waits for the section,
    /// the section for the thread; the join traps instead of hanging.
    @Test func readSectionJoiningAThreadThatSynchronizesTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            startExitTestWatchdog()
            let map = RCUMap<Int, Int>()
            map.set(1, forKey: 1)
            _ = map.withValue(forKey: 1) { _ in
                let writer = try! PosixThread(name: "writer") { RCU.synchronize() }
                writer.join()
            }
        }
        let text = Self.stderr(result)
        #expect(text.contains("Threading: a blocking wait inside an RCU read section: thread"), "\(text)")
        #expect(text.contains("waits to join thread \"writer\""), "\(text)")
    }

    @Test func valueSynchronizeInsideReadTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let value = RCUValue(1)
            value.read { _ in value.synchronize() }
        }
        #expect(Self.stderr(result).contains("EDEADLK"))
    }

    @Test func barrierInsideReadTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let map = RCUMap<Int, Int>()
            map.set(1, forKey: 1)
            _ = map.withValue(forKey: 1) { _ in RCU.barrier() }
        }
        #expect(Self.stderr(result).contains("RCU.barrier() called inside an RCU read section"))
    }

    @Test func recursiveValueUpdateTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let value = RCUValue(1)
            value.update { old in value.update { $0 + 1 } + old }
        }
        #expect(Self.stderr(result).contains("must not write to the RCUValue it is updating"))
    }

    @Test func compareExchangeWritingTheSameValueTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let value = RCUValue(1)
            value.compareExchange(expected: 1, desired: 2) { current, expected in
                value.store(3)
                return current == expected
            }
        }
        #expect(Self.stderr(result).contains("must not write to the RCUValue it is updating"))
    }

    @Test func barrierInsideAGracePeriodCallbackTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            RCU.callAfterGracePeriod { RCU.barrier() }
            blockingCall { RCU.barrier() }
            _ = cthr_sleep_ns(20_000_000_000)
        }
        #expect(Self.stderr(result).contains("RCU.barrier() called inside an RCU read section or a deferred release"))
    }

    @Test func mapUpdateWritingSameKeyTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let map = RCUMap<String, Int>()
            map.update("k") { old in
                map.set(5, forKey: "k")
                return (old ?? 0) + 1
            }
        }
        #expect(Self.stderr(result).contains("an update transform must not write to the same map"))
    }

    @Test func flatMapUpdateWritingTheMapTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let map = RCUMap<Int, Int>()
            map.update(1) { old in
                map.set(5, forKey: 1)
                return (old ?? 0) + 1
            }
        }
        #expect(Self.stderr(result).contains("RCUMap.set: the key's writer lock is already held by this thread"))
        #expect(Self.stderr(result).contains("an update transform must not write to the same map"))
    }
}
