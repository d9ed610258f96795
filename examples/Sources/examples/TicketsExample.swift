// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

// A ticket office: three sellers share 10 tickets; each checks "any left?", takes a moment, then sells.
// Without a lock two sellers see the same last ticket and both sell it (the count can end at -1 or -2).
// The race needs two sellers inside the window at the end, which the scheduler decides: the unlocked round is
// repeated (at most 20 times) until it oversells, and the line says how many rounds that took.
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

/// Runs three sellers; `guarded` wraps each "check and sell" step. Returns the tickets sold and those left.
private func sellRound(guarded: @escaping @Sendable (() -> Void) -> Void) -> (sold: Int, remaining: Int) {
    let office = TicketOffice()
    runTogether(3, name: "seller") { seller in
        var more = true
        while more {
            guarded {
                if office.remaining > 0 {
                    usleep(1000)  // a short pause: the window between check and sale
                    office.remaining -= 1
                    office.sold[seller] += 1
                } else {
                    more = false
                }
            }
        }
    }
    return (office.sold.reduce(0, +), office.remaining)
}

/// Prints one result line: `label`, the count, and the verdict.
private func report(_ label: String, _ round: (sold: Int, remaining: Int), _ note: String = "") {
    let verdict = round.sold > 10 ? "OVERSOLD by \(round.sold - 10)" : (round.sold == 10 ? "correct" : "undersold")
    print("\(label.padding(20))sold \(round.sold) of 10, remaining \(round.remaining): \(verdict)\(note)")
}

/// Runs one round with `guarded` and prints its line.
private func sell(_ label: String, guarded: @escaping @Sendable (() -> Void) -> Void) {
    report(label, sellRound(guarded: guarded))
}

let ticketsExample = Example(name: "tickets", summary: "the ticket-selling race, then fixed with each lock") {
    // No lock: retry until the race shows (it nearly always does on the first round), at most 20 rounds.
    let maxRounds = 20
    var rounds = 0
    var unlocked: (sold: Int, remaining: Int)
    repeat {
        rounds += 1
        unlocked = sellRound { step in step() }
    } while unlocked.sold <= 10 && rounds < maxRounds
    let note = unlocked.sold > 10 ? "in round \(rounds)" : "no oversell in \(rounds) rounds"
    report("no lock:", unlocked, " (\(note))")

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
