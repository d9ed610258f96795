// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import Testing

@testable import Threading

/// RxSwift's `CurrentThreadSchedulerTest` cases.
@Suite("CurrentThreadScheduler")
struct TrampolineTests {
    let scheduler = CurrentThreadScheduler.instance

    @Test("the basic scenario yields [1, 2, 3, 4, 5]")
    func basicScenario() {
        #expect(CurrentThreadScheduler.isScheduleRequired)
        var messages: [Int] = []
        scheduler.schedule {
            messages.append(1)
            self.scheduler.schedule {
                messages.append(3)
                self.scheduler.schedule { messages.append(5) }
                messages.append(4)
            }
            messages.append(2)
        }
        #expect(messages == [1, 2, 3, 4, 5])
        #expect(CurrentThreadScheduler.isScheduleRequired)
    }

    @Test("a disposed queued action is skipped: [1, 2, 3, 4]")
    func disposingInner() {
        var messages: [Int] = []
        scheduler.schedule {
            messages.append(1)
            self.scheduler.schedule {
                messages.append(3)
                let inner = self.scheduler.schedule { messages.append(5) }
                inner.dispose()
                messages.append(4)
            }
            messages.append(2)
        }
        #expect(messages == [1, 2, 3, 4])
    }

    @Test("disposing a queued action before it runs: [1, 2]")
    func disposingOuter() {
        var messages: [Int] = []
        scheduler.schedule {
            messages.append(1)
            let queued = self.scheduler.schedule {
                messages.append(3)
                self.scheduler.schedule { messages.append(5) }
                messages.append(4)
            }
            queued.dispose()
            #expect(queued.isDisposed)
            messages.append(2)
        }
        #expect(messages == [1, 2])
    }

    @Test("isScheduleRequired is true outside, false inside an action")
    func scheduleRequiredFlag() {
        #expect(CurrentThreadScheduler.isScheduleRequired)
        var inside: [Bool] = []
        scheduler.schedule(42) { value in
            #expect(value == 42)
            inside.append(CurrentThreadScheduler.isScheduleRequired)
            self.scheduler.schedule { inside.append(CurrentThreadScheduler.isScheduleRequired) }
        }
        #expect(inside == [false, false])
        #expect(CurrentThreadScheduler.isScheduleRequired)
    }

    @Test("each thread has its own trampoline")
    func perThread() throws {
        var otherThread: Bool?
        scheduler.schedule {
            let thread = try? PosixThread<Bool> { CurrentThreadScheduler.isScheduleRequired }
            otherThread = thread?.join()
        }
        #expect(otherThread == true)
    }

    @Test("queued actions run FIFO without recursion")
    func fifoNoRecursion() {
        var depth = 0
        var maxDepth = 0
        var order: [Int] = []
        func step(_ value: Int) {
            depth += 1
            maxDepth = max(maxDepth, depth)
            order.append(value)
            if value < 1000 { scheduler.schedule { step(value + 1) } }
            depth -= 1
        }
        scheduler.schedule { step(1) }
        #expect(order == Array(1...1000))
        #expect(maxDepth == 1)
    }
}
