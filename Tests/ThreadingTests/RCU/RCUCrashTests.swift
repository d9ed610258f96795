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
