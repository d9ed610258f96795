// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import CThreading
import Glibc
import Testing

@testable import Threading

/// Misuse that traps, not covered by the concept suites' own crash tests (see the table in <doc:Misuse>): each
/// exit test checks the message on stderr.
@Suite struct MisuseCrashTests {
    static func text(_ result: ExitTest.Result?) -> String {
        String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
    }

    // MARK: Threads

    @Test func joinFromTheThreadItselfTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let box = LockedValue<PosixThread<Void>?>(nil)
            let go = Semaphore()
            let thread = try! PosixThread(name: "self-join") {
                go.wait()
                box.withLock { $0 }!.join()
            }
            box.withLock { $0 = thread }
            go.signal()
            _ = cthr_sleep_ns(20_000_000_000)
        }
        #expect(Self.text(result).contains("called on thread"), "\(Self.text(result))")
        #expect(Self.text(result).contains("for itself (this would deadlock)"))
    }

    @Test func detachTwiceTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let thread = try! PosixThread(name: "twice") {}
            thread.detach()
            thread.detach()
        }
        #expect(Self.text(result).contains("PosixThread \"twice\".detach(): the thread was already detached"))
    }

    // MARK: Locks

    @Test func recursiveLockUnlockWithoutLockTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let lock = RecursiveLock(name: "over")
            lock.lock()
            lock.unlock()
            lock.unlock()
        }
        #expect(Self.text(result).contains("which does not hold it"), "\(Self.text(result))")
    }

    @Test func lockedValueReentryTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let value = LockedValue(0, name: "reentered")
            value.withLock { _ in value.withLock { $0 += 1 } }
        }
        #expect(Self.text(result).contains("reentered"), "\(Self.text(result))")
    }

    @Test func monitorReentryTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let monitor = Monitor(0, name: "nested-monitor")
            monitor.withLock { _ in monitor.withLock { $0 += 1 } }
        }
        #expect(Self.text(result).contains("nested-monitor"), "\(Self.text(result))")
    }

    @Test func semaphoreAboveMaximumTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = Semaphore(value: Int(Int32.max) + 1)
        }
        #expect(Self.text(result).contains("exceeds SEM_VALUE_MAX"), "\(Self.text(result))")
    }

    @Test func semaphoreSignalPastMaximumTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let semaphore = Semaphore(value: Semaphore.maximumValue)
            semaphore.signal()
        }
        #expect(
            Self.text(result).contains("Semaphore.signal(): sem_post failed with EOVERFLOW"),
            "\(Self.text(result))"
        )
    }

    // MARK: RCU

    @Test func unregisterInsideReadSectionTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let value = RCUValue(1)
            value.read { _ in _ = RCU.unregisterCurrentThread() }
        }
        #expect(Self.text(result).contains("RCU.unregisterCurrentThread() inside a read section"))
    }

    // MARK: Queues

    @Test func zeroWidthConcurrentQueueTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = ConcurrentQueue(label: "narrow", width: 0)
        }
        #expect(Self.text(result).contains("width must be ≥ 1"), "\(Self.text(result))")
    }

    @Test func negativeWidthConcurrentQueueTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = ConcurrentQueue(label: "negative", width: -3)
        }
        #expect(Self.text(result).contains("width must be ≥ 1"), "\(Self.text(result))")
    }

    @Test func emptyQueuePoolTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = QueuePool(label: "none", count: 0)
        }
        #expect(Self.text(result).contains("count must be ≥ 1"), "\(Self.text(result))")
    }

    @Test func zeroTimerIntervalTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = QueueTimer(queue: SerialQueue(label: "t"), delay: .zero, repeating: .zero) {}
        }
        #expect(Self.text(result).contains("the interval must be positive"), "\(Self.text(result))")
    }

    @Test func negativeTimerIntervalTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = QueueTimer(queue: SerialQueue(label: "t"), delay: .zero, repeating: .milliseconds(-5)) {}
        }
        #expect(Self.text(result).contains("the interval must be positive"), "\(Self.text(result))")
    }

    @Test func foreignWorkQueueTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            final class Imposter: WorkQueue {
                let label = "imposter"
                let qos = QoS.default
                func async(execute work: @escaping @Sendable () -> Void) { work() }
            }
            _ = SerialQueue(label: "victim", target: Imposter())
        }
        #expect(Self.text(result).contains("Imposter is not a Threading queue"), "\(Self.text(result))")
    }

    @Test func mainQueueDrainOffTheMainThreadTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let thread = try! PosixThread { _ = MainQueue.runUntilIdle() }
            thread.join()
        }
        #expect(Self.text(result).contains("must be called on the main thread"), "\(Self.text(result))")
    }

    // MARK: Jobs

    @Test func lowerWidthBelowOneTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let queue = JobQueue(name: "shrink", maxConcurrentJobs: 2)
            queue.maxConcurrentJobs = 0
        }
        #expect(Self.text(result).contains("maxConcurrentJobs = 0: must be ≥ 1"), "\(Self.text(result))")
    }

    @Test func finishOnASynchronousResultJobTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let job = ResultJob<Int>(name: "sync-result") { _ in 1 }
            job.finish(returning: 2)
        }
        #expect(Self.text(result).contains("is not asynchronous"), "\(Self.text(result))")
    }
}
