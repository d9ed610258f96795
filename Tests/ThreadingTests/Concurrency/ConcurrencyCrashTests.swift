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

    @Test func checkIsolatedOnTheQueuePasses() async {
        await #expect(processExitsWith: .success) {
            let queue = SerialQueue(label: "crash.check.ok")
            blockingCall { queue.sync { queue.checkIsolated() } }
        }
    }
}
