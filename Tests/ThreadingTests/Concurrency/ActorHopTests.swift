// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import CTestSupport
import Glibc
import Synchronization
import Testing

@testable import Threading

/// One side of a conversation between two actors on serial queues.
private actor Talker {
    let queue: SerialQueue
    nonisolated var unownedExecutor: UnownedSerialExecutor { queue.asUnownedSerialExecutor() }
    private var heard = 0

    init(queue: SerialQueue) { self.queue = queue }

    /// Answers a call: counts it, and says whether it runs on this actor's queue and on which thread.
    func answer() -> (onQueue: Bool, thread: UInt32) {
        cthr_test_count_this_thread()  // the allocation test counts the threads that run the actors
        heard += 1
        return (queue.isCurrent, currentThreadID)
    }

    /// Calls `peer` `rounds` times; returns how many answers ran on the caller's own thread and how many on the
    /// peer's queue.
    func talk(to peer: Talker, rounds: Int) async -> (sameThread: Int, onPeerQueue: Int) {
        var sameThread = 0
        var onPeerQueue = 0
        for _ in 0..<rounds {
            cthr_test_count_this_thread()
            let caller = currentThreadID
            let answer = await peer.answer()
            heard += 1  // back on this actor: one round trip
            if answer.thread == caller { sameThread += 1 }
            if answer.onQueue { onPeerQueue += 1 }
        }
        return (sameThread, onPeerQueue)
    }
}

/// Actor jobs on serial queues: what a hop costs, and the hop that sharing a queue saves.
@Suite(.serialized) struct ActorHopTests {
    /// An actor job is queued as it is (an item that carries the job), not wrapped in a closure: 10,000 round
    /// trips between actors on two queues — 20,000 jobs queued — allocate (almost) nothing on the threads that run
    /// the actors (each marks itself; the process's other threads, the pool's monitor and the watchdog, are not
    /// counted). In a child process; not counted under a sanitizer, whose runtime owns malloc.
    @Test func actorJobsOnASerialQueueDoNotAllocate() async {
        guard cthr_test_allocations_counted() != 0 else { return }
        let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
            let pool = WorkerPool(label: "hop.alloc", threads: 2)
            let first = Talker(queue: SerialQueue(label: "hop.alloc.first", pool: pool))
            let second = Talker(queue: SerialQueue(label: "hop.alloc.second", pool: pool))
            // Warm-up: rings, task allocator slabs and the pool's structures reach their high-water marks.
            _ = await first.talk(to: second, rounds: 2_000)
            let submittedBefore = pool.statistics.submitted
            let before = cthr_test_marked_thread_allocations()
            let processBefore = cthr_test_allocations()
            let rounds = await first.talk(to: second, rounds: 10_000)
            let allocations = cthr_test_marked_thread_allocations() - before
            let processAllocations = cthr_test_allocations() - processBefore
            let submitted = pool.statistics.submitted - submittedBefore
            guard rounds.onPeerQueue == 10_000 else {
                writeStandardError("alloc: \(rounds.onPeerQueue) of 10,000 answers ran on the peer's queue\n")
                exit(0)
            }
            // Each hop onto an idle queue schedules its drain: the jobs really went through the pool.
            guard submitted >= 10_000 else {
                writeStandardError("alloc: only \(submitted) pool submissions for 20,000 hops\n")
                exit(0)
            }
            // Slack for the runtime's task allocator: 64 over 20,000 jobs (a closure per job would be 20,000).
            guard allocations <= 64 else {
                writeStandardError(
                    "alloc: \(allocations) allocations for 20,000 actor jobs (\(processAllocations) in the process)\n"
                )
                exit(0)
            }
            writeStandardError(
                "counted: \(allocations) allocations for 20,000 actor jobs, \(submitted) submissions "
                    + "(\(processAllocations) in the process)\n"
            )
            exit(0)
        }
        let errors = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        // The child says what failed on stderr (an exit test's output is only observed when it exits as expected).
        #expect(!errors.contains("alloc:") && errors.contains("counted:"), "\(errors)")
        print(errors, terminator: "")
    }

    /// Actors that share one queue call each other without a hop: the callee runs at once on the caller's thread,
    /// isolated (on the queue), and nothing is submitted to the pool.
    @Test func actorsSharingAQueueCallEachOtherWithoutAHop() async throws {
        let pool = WorkerPool(label: "hop.shared", threads: 2)
        defer { _ = poolTestShutDown(pool) }
        let queue = SerialQueue(label: "hop.shared", pool: pool)
        let first = Talker(queue: queue)
        let second = Talker(queue: queue)
        _ = try await withDeadline { await first.talk(to: second, rounds: 10) }
        let submittedBefore = pool.statistics.submitted
        let rounds = try await withDeadline { await first.talk(to: second, rounds: 1_000) }
        let submitted = pool.statistics.submitted - submittedBefore
        #expect(rounds.sameThread == 1_000)
        #expect(rounds.onPeerQueue == 1_000)
        // One drain for the call into `first` (and its return may be one more); never one per round trip.
        #expect(submitted <= 4, "\(submitted) pool submissions for 1,000 round trips on one queue")
    }

    /// The same conversation between actors on two queues hops through the pool (the contrast the test above
    /// relies on): every answer still runs on the peer's queue, serialised there.
    @Test func actorsOnTwoQueuesHopThroughThePool() async throws {
        let pool = WorkerPool(label: "hop.two", threads: 2)
        defer { _ = poolTestShutDown(pool) }
        let first = Talker(queue: SerialQueue(label: "hop.two.first", pool: pool))
        let second = Talker(queue: SerialQueue(label: "hop.two.second", pool: pool))
        let submittedBefore = pool.statistics.submitted
        let rounds = try await withDeadline { await first.talk(to: second, rounds: 1_000) }
        let submitted = pool.statistics.submitted - submittedBefore
        #expect(rounds.onPeerQueue == 1_000)
        #expect(submitted >= 1_000, "\(submitted) pool submissions for 1,000 round trips across two queues")
    }
}
