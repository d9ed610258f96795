// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import CTestSupport
import CThreading
import Glibc
import Synchronization
import Testing

@testable import Threading

/// Bad input and misuse of RCU whose outcome is a value or a thrown error (the object stays usable);
/// the table in <doc:Misuse> lists each case.
@Suite struct RCUMisuseTests {
    @Test func registrationTwiceAndUnregistrationTwiceAreValues() throws {
        let thread = try PosixThread { () -> [Bool] in
            let first = RCU.registerCurrentThread()
            let second = RCU.registerCurrentThread()
            let third = RCU.unregisterCurrentThread()
            let fourth = RCU.unregisterCurrentThread()
            return [first, second, third, fourth]
        }
        #expect(thread.join() == [true, false, true, false])
    }

    @Test func absurdMapCapacitiesAreClamped() {
        let negative = RCUMap<Int, Int>(minimumCapacity: -5)
        negative.set(1, forKey: 1)
        #expect(negative[1] == 1)
        // Any capacity above `minimumCapacityLimit` (65,536) pre-sizes for the limit only: the flat table of an
        // `Int` map has two slots per entry, 131,072 slots, where `Int.max` committed 1 GB of control bytes before.
        #expect(RCUMap<Int, Int>.minimumCapacityLimit == 65_536)
        for capacity in [1 << 20, Int.max] {
            let large = RCUMap<Int, Int>(minimumCapacity: capacity)
            #expect(cthr_rcu_flat_capacity(cthr_rcu_flat_current(large.flat)) == 2 * 65_536)
            large.set(2, forKey: 2)
            #expect(large.count == 1)
        }
        // The chained table (String values) took 48 s and 16 GB to pre-size for `Int.max` before.
        let chained = RCUMap<Int, String>(minimumCapacity: -5)
        chained.set("1", forKey: 1)
        #expect(chained[1] == "1")
        let huge = RCUMap<String, String>(minimumCapacity: Int.max)
        huge.set("1", forKey: "1")
        #expect(huge["1"] == "1")
    }

    /// A stack size of `Int.max` (rounded up past any mappable size) throws; the process goes on.
    @Test func hugestStackSizeThrows() {
        #expect(throws: ThreadingError.self) {
            _ = try PosixThread(stackSize: Int.max) { 0 }
        }
        let thread = try? PosixThread(stackSize: 1 << 20) { 7 }
        #expect(thread?.join() == 7)
    }

    /// Pools are capped at 4,096 threads: `maxThreads` of a CPU pool no longer grows past it (4 × 2,000 + 32
    /// would be 8,032), and the largest pools work.
    @Test func poolThreadCountsAreCappedAtTheLimit() {
        let wide = WorkerPool(label: "misuse.wide", threads: 2000)
        #expect(wide.maxThreads == 4096)
        let largest = WorkerPool(label: "misuse.largest", threads: 4096, kind: .blocking)
        #expect(largest.maxThreads == 4096)
        for pool in [wide, largest] {
            let ran = QueueGate()
            SerialQueue(label: "misuse.largest.q", pool: pool).async { ran.open() }
            #expect(ran.wait(seconds: 20))
            #expect(poolTestShutDown(pool))
        }
    }

    /// A pool commits a pointer per thread it may have, not the threads' structures: ten pools of 4,096 threads
    /// (maxThreads 4,096 each) grow the live heap by well under 2 MB (about 28 MB when each slot's run queue was made
    /// up front). In a process of its own, so that no other test's allocations count.
    @Test func poolsCommitNoPerThreadStructuresUpFront() async {
        await #expect(processExitsWith: .success) {
            // (Under a sanitizer, which replaces malloc, the count reads 0 and this checks nothing.)
            let before = cthr_test_heap_in_use()
            let pools = (0..<10).map { WorkerPool(label: "misuse.commit.\($0)", threads: 4096) }
            let grown = cthr_test_heap_in_use() &- before
            _ = pools
            exit(grown < 2_000_000 ? 0 : 1)
        }
    }
}
