// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

// Seed 004's ticket office: three sellers share 10 tickets; each checks "any left?", takes a moment, then sells.
// Without a lock two sellers see the same last ticket and both sell it (the seed's output ends at -1 and -2).
// With the check and the sale inside one critical section, exactly 10 are sold, whichever lock guards it.

import Threading

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The shared counter. `@unchecked Sendable` on purpose: the unlocked run races on it (that is the lesson).
private final class TicketOffice: @unchecked Sendable {
    var remaining = 10
    var sold = [Int](repeating: 0, count: 3)  // per seller: each slot is written by one thread only
}

/// Runs three sellers; `guarded` wraps each "check and sell" step.
private func sell(_ label: String, guarded: @escaping @Sendable (() -> Void) -> Void) {
    let office = TicketOffice()
    runTogether(3, name: "seller") { seller in
        var more = true
        while more {
            guarded {
                if office.remaining > 0 {
                    usleep(1000)  // the seed's sleep(1), shortened: the window between check and sale
                    office.remaining -= 1
                    office.sold[seller] += 1
                } else {
                    more = false
                }
            }
        }
    }
    let total = office.sold.reduce(0, +)
    let verdict = total > 10 ? "OVERSOLD by \(total - 10)" : (total == 10 ? "correct" : "undersold")
    print("\(label.padding(20))sold \(total) of 10, remaining \(office.remaining): \(verdict)")
}

let ticketsExample = Example(name: "tickets", summary: "the ticket-selling race, then fixed with each lock") {
    sell("no lock:") { step in step() }

    let mutex = MutexLock(name: "tickets")
    sell("MutexLock:") { step in mutex.withLock { step() } }
    let recursive = RecursiveLock(name: "tickets")
    sell("RecursiveLock:") { step in recursive.withLock { step() } }
    let spin = SpinLock(name: "tickets")
    sell("SpinLock:") { step in spin.withLock { step() } }
    let readWrite = ReadWriteLock(name: "tickets")
    sell("ReadWriteLock:") { step in readWrite.withWriteLock { step() } }
    let semaphore = Semaphore(value: 1)
    sell("Semaphore(1):") { step in
        semaphore.wait()
        step()
        semaphore.signal()
    }
    let monitor = Monitor(0, name: "tickets")
    sell("Monitor:") { step in monitor.withLock { _ in step() } }
    let queue = SerialQueue(label: "tickets")
    sell("SerialQueue.sync:") { step in queue.sync { step() } }
}
