// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

// RxSwift's CurrentThreadScheduler. A thread-specific flag (a pthread key) says whether an action is
// already running on this thread; a nested `schedule` is queued instead of recursing, and runs after the current
// action returned. RxSwift's own test prints 1, 2, 3, 4, 5.

import Threading

let trampolineExample = Example(name: "trampoline", summary: "CurrentThreadScheduler gives [1, 2, 3, 4, 5]") {
    let scheduler = CurrentThreadScheduler.instance
    var messages: [Int] = []
    var flags: [Bool] = [CurrentThreadScheduler.isScheduleRequired]
    scheduler.schedule {
        messages.append(1)
        flags.append(CurrentThreadScheduler.isScheduleRequired)
        scheduler.schedule {
            messages.append(3)
            scheduler.schedule { messages.append(5) }
            messages.append(4)
        }
        messages.append(2)  // runs before 3: the nested action was queued, not called
    }
    flags.append(CurrentThreadScheduler.isScheduleRequired)
    print("messages: \(messages)")
    print("isScheduleRequired before/inside/after: \(flags)")

    // A queued action disposed before it runs is skipped (RxSwift's disposing tests).
    var disposed: [Int] = []
    scheduler.schedule {
        disposed.append(1)
        let queued = scheduler.schedule { disposed.append(3) }
        queued.dispose()
        disposed.append(2)
    }
    print("with the nested action disposed: \(disposed)")
}
