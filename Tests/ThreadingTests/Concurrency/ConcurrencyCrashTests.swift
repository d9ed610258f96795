// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import Testing

@testable import Threading

/// Isolation checks of actors on serial queues fail, with a message, off the queue (exit tests).
@Suite struct ConcurrencyCrashTests {
    private static func stderrText(_ result: ExitTest.Result?) -> String {
        String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
    }

    @Test func assumeIsolatedOffTheQueueTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let actor = QueueActor(queue: SerialQueue(label: "crash.assume"))
            blockingCall { _ = actor.assumeIsolated { $0.increment() } }
        }
        #expect(Self.stderrText(result).contains("Incorrect actor executor assumption"))
    }

    @Test func assumeIsolatedOnAnotherQueueTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let actor = QueueActor(queue: SerialQueue(label: "crash.assume.owner"))
            let other = SerialQueue(label: "crash.assume.other")
            blockingCall { other.sync { _ = actor.assumeIsolated { $0.increment() } } }
        }
        #expect(Self.stderrText(result).contains("Incorrect actor executor assumption"))
    }

    @Test func preconditionIsolatedOffTheQueueTrapsWithTheCallersMessage() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let actor = QueueActor(queue: SerialQueue(label: "crash.precondition"))
            actor.preconditionIsolated("the cache must be touched on its queue")
        }
        let text = Self.stderrText(result)
        #expect(text.contains("Incorrect actor executor assumption"), "\(text)")
        #expect(text.contains("the cache must be touched on its queue"), "\(text)")
    }

    @Test func checkIsolatedOffTheQueueNamesTheQueue() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            SerialQueue(label: "crash.check").checkIsolated()
        }
        #expect(Self.stderrText(result).contains("not running on SerialQueue 'crash.check'"))
    }

    /// An actor whose `unownedExecutor` makes a new queue at each call (nobody keeps it): its first job traps with a
    /// message naming the queue and the fix. Before, the job used the freed queue (SIGSEGV in debug, a hang in
    /// release; AddressSanitizer reports a heap-use-after-free).
    @Test func actorJobOnAQueueNobodyKeepsTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let actor = UnkeptQueueActor()
            _ = await actor.increment()
        }
        let text = Self.stderrText(result)
        #expect(
            text.contains("an actor job was sent to SerialQueue 'crash.unkept' after the queue was released"),
            "\(text)"
        )
        #expect(text.contains("nonisolated let queue = SerialQueue(...)"), "\(text)")
    }

    @Test func checkIsolatedOnTheQueuePasses() async {
        await #expect(processExitsWith: .success) {
            let queue = SerialQueue(label: "crash.check.ok")
            blockingCall { queue.sync { queue.checkIsolated() } }
        }
    }
}

/// The misuse: an actor whose executor is a queue nobody keeps (a new one at each call).
private actor UnkeptQueueActor {
    nonisolated var unownedExecutor: UnownedSerialExecutor {
        SerialQueue(label: "crash.unkept").asUnownedSerialExecutor()
    }

    var counter = 0

    func increment() -> Int {
        counter += 1
        return counter
    }
}
