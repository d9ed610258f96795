// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

// "Main thread" and "main queue" are different questions. `isMainThread` asks which thread is
// running; `MainQueue.shared.isCurrent` (or a QueueKey set on the main queue, RxSwift's `DispatchQueue.isMain`)
// asks which queue the running code was submitted to. `serial.sync { }` called on the main thread runs the closure
// on the main thread on behalf of `serial`: main thread yes, main queue no.

import Threading

let mainQueueExample = Example(
    name: "main-queue",
    summary: "main thread vs main queue, including serial.sync from main"
) {
    let isMainKey = QueueKey<Bool>()
    MainQueue.shared.setSpecific(isMainKey, true)
    @Sendable func report(_ place: String) {
        let marked = isMainKey.current ?? false
        print(
            "\(place.padding(34))isMainThread=\(PosixThread.isMainThread) mainQueue.isCurrent="
                + "\(MainQueue.shared.isCurrent) key=\(marked)"
        )
    }

    report("main thread, outside any queue:")
    let serial = SerialQueue(label: "example.serial")
    serial.sync { report("serial.sync called from main:") }

    let done = Semaphore()
    serial.async {
        report("serial.async (a pool worker):")
        done.signal()
    }
    done.wait()

    // A serial queue that targets the main queue: its work runs on the main thread, and the key is found on the
    // target, the way RxSwift's lookup follows target queues.
    let onMain = SerialQueue(label: "example.targets-main", target: MainQueue.shared)
    onMain.async { report("queue targeting main (drained):") }
    MainQueue.shared.async { report("MainQueue.shared.async (drained):") }
    // Linux has no run loop doing this for us: the main thread drains the main queue explicitly.
    MainQueue.runUntilIdle()
}
