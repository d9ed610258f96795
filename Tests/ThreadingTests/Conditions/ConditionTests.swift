// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import Testing

@testable import Threading

@Suite("Conditions", .serialized)
struct ConditionTests {
    @Test("an NSCondition-style ordered hand-off through a Monitor: threads sell in turn 0, 1, 2, 0, ...")
    func orderedHandOff() {
        let office = Monitor((turn: 0, tickets: 10, sales: [Int]()))
        let ok = runTogether(3) { me in
            while true {
                let more = office.withLock(when: { $0.turn == me || $0.tickets == 0 }) { state -> Bool in
                    guard state.tickets > 0 else { return false }
                    state.tickets -= 1
                    state.sales.append(me)
                    state.turn = (me + 1) % 3
                    return true
                }
                if !more { break }
            }
        }
        #expect(ok)
        let sales = office.withLock { $0.sales }
        #expect(sales == (0..<10).map { $0 % 3 })
    }

    @Test("producer/consumer through a Monitor: bounded buffer, nothing lost, order kept")
    func producerConsumer() throws {
        let buffer = Monitor([Int](), name: "buffer")
        let consumer = try PosixThread { () -> [Int] in
            var received: [Int] = []
            for _ in 0..<200 {
                guard let item = buffer.withLock(when: { !$0.isEmpty }, timeout: testDeadline, { $0.removeFirst() })
                else { break }
                received.append(item)
            }
            return received
        }
        for item in 0..<200 {
            let placed: Void? = buffer.withLock(when: { $0.count < 4 }, timeout: testDeadline, { $0.append(item) })
            #expect(placed != nil)
        }
        #expect(consumer.join() == Array(0..<200))
    }

    @Test("a change made before anyone waits is not lost")
    func signalBeforeWait() throws {
        let flag = Monitor(false)
        flag.withLock { $0 = true }  // "signal" first
        let waiter = try PosixThread { flag.wait(until: { $0 }, timeout: testDeadline) }
        #expect(waiter.join())
    }

    @Test("NSConditionLock's 'lock when condition == value' and timeouts")
    func conditionLockStyle() throws {
        let stage = Monitor(0, name: "stage")
        let second = try PosixThread { stage.withLock(when: { $0 == 1 }, timeout: testDeadline) { $0 = 2 } }
        let third = try PosixThread { stage.withLock(when: { $0 == 2 }, timeout: testDeadline) { $0 = 3 } }
        stage.withLock { $0 = 1 }
        #expect(third.join() != nil)
        #expect(second.join() != nil)
        #expect(stage.withLock { $0 } == 3)
        #expect(stage.withLock(when: { $0 == 99 }, timeout: .milliseconds(20), { _ in true }) == nil)
        #expect(stage.withLock(when: { $0 == 99 }, timeout: .seconds(-1), { _ in true }) == nil)
        #expect(stage.withLock(when: { $0 == 3 }, timeout: .zero, { _ in true }) == true)
        #expect(stage.waiters.isEmpty)
    }

    @Test("NSConditionLock's tryLock() and tryLock(whenCondition:) return at once on a held lock; so does timeout 0")
    func tryFormsDoNotWaitForTheHolder() throws {
        let stage = Monitor(0, name: "stage")
        let holding = Semaphore()
        let release = Semaphore()
        let holder = try PosixThread(name: "holder") {
            stage.withLock { _ in
                holding.signal()
                _ = release.wait(timeout: testDeadline)
            }
        }
        #expect(holding.wait(timeout: testDeadline))
        // The lock is held by `holder`: no try form waits for it, and none runs its body.
        #expect(stage.withLockIfAvailable { $0 = 9 } == nil)
        #expect(stage.withLockIfAvailable(when: { $0 == 0 }, { $0 = 9 }) == nil)
        #expect(stage.withLock(when: { $0 == 0 }, timeout: .zero, { $0 = 9 }) == nil)
        #expect(stage.withLock(when: { _ in true }, timeout: .seconds(-1), { $0 = 9 }) == nil)
        #expect(!stage.wait(until: { _ in true }, timeout: .zero))
        release.signal()
        holder.join()
        #expect(stage.withLock { $0 } == 0)

        // The lock is free: the try forms run the body when the condition holds, and wake satisfied waiters.
        let waiter = try PosixThread(name: "waiter") {
            stage.withLock(when: { $0 == 2 }, timeout: testDeadline) { $0 = 3 }
        }
        // Until the waiter parks on its predicate it may hold the lock (taking it, checking the predicate), and a
        // try form then rightly fails: wait for it to park, so the lock is free below.
        #expect(waitUntil(seconds: 20) { stage.withLock { _ in stage.waiters.count } == 1 })
        #expect(stage.withLockIfAvailable(when: { $0 == 5 }, { _ in true }) == nil)
        #expect(stage.withLockIfAvailable { $0 = 1 } != nil)
        let moved = stage.withLockIfAvailable(
            when: { $0 == 1 },
            { state -> Int in
                state = 2
                return state
            }
        )
        #expect(moved == 2)
        #expect(waiter.join() != nil)
        #expect(stage.withLock { $0 } == 3)
        // From inside its own body the lock is held (by the caller): the try form says so instead of trapping.
        #expect(stage.withLock { _ in stage.withLockIfAvailable { _ in true } } == nil)
        #expect(stage.waiters.isEmpty)
    }

    @Test("ConditionVariable ping-pong: every turn arrives, whether the waiter's spin catches it or it sleeps")
    func conditionVariablePingPong() throws {
        // Two threads pass a turn back and forth; each turn carries plain (non-atomic) data written before the
        // signal. Most turns end in the waiter's spin, some (preempted threads, a loaded machine) in a sleep: both
        // must deliver every turn, in order, and order the data (checked under ThreadSanitizer).
        final class Court: @unchecked Sendable {  // `turn` and `log` are guarded by `lock`
            let lock = MutexLock()
            let condition = ConditionVariable()
            var turn = 0
            var log: [Int] = []
        }
        let court = Court()
        let rounds = 2_000
        @Sendable func play(_ side: Int) -> Bool {
            for round in 0..<rounds {
                court.lock.lock()
                while court.turn != side {
                    guard court.condition.wait(court.lock, timeout: testDeadline) || court.turn == side else {
                        court.lock.unlock()
                        return false
                    }
                }
                court.log.append(round * 2 + side)
                court.turn = 1 - side
                court.lock.unlock()
                court.condition.signal()
            }
            return true
        }
        let other = try PosixThread { play(1) }
        #expect(play(0))
        #expect(other.join())
        #expect(court.log == Array(0..<(rounds * 2)))
        #expect(court.condition.cond.pointee.sleepers.value == 0)
    }

    @Test("a Monitor keeps one waiter for the next wait, and a late signal to it is only a spurious wake-up")
    func monitorReusesItsWaiter() throws {
        let stage = Monitor(0, name: "stage")
        let first = try PosixThread { stage.withLock(when: { $0 == 1 }, timeout: testDeadline) { $0 = 10 } }
        #expect(waitUntil(seconds: 20) { stage.withLock { _ in stage.waiters.count } == 1 })
        stage.withLock { $0 = 1 }
        #expect(first.join() != nil)
        let spare = try #require(stage.withLock { _ in stage.spareWaiter })
        // A signal for the spare's previous use arriving late: the next wait may wake for it, finds its predicate
        // false, and waits on.
        spare.condition.signal()
        let second = try PosixThread { stage.withLock(when: { $0 == 2 }, timeout: testDeadline) { $0 = 20 } }
        #expect(waitUntil(seconds: 20) { stage.withLock { _ in stage.waiters.first === spare } })
        spare.condition.signal()  // spurious for the current wait: the state is still 10
        stage.withLock { $0 = 2 }
        #expect(second.join() != nil)
        #expect(stage.withLock { $0 } == 20)
        #expect(stage.withLock { _ in stage.waiters.isEmpty && stage.spareWaiter === spare })
    }

    @Test("a timed hand-off through Semaphore.wait(timeout:) orders the producer's plain writes before the reader")
    func timedSemaphoreHandOff() throws {
        // Under ThreadSanitizer this is the check that matters: `wait(timeout:)` uses `sem_clockwait`, which TSan
        // does not intercept; without the C layer's annotation the plain reads below are reported as a race.
        let ready = Semaphore()
        let consumed = Semaphore()
        let shared = Shared([Int]())
        let producer = try PosixThread(name: "producer") {
            for round in 0..<50 {
                shared.value = [round, round * 2]  // plain, non-atomic writes
                ready.signal()
                guard consumed.wait(timeout: testDeadline) else { return false }
            }
            return true
        }
        var seen: [[Int]] = []
        for _ in 0..<50 {
            guard ready.wait(timeout: testDeadline) else { break }
            seen.append(shared.value)  // plain read, ordered only by the timed wait
            consumed.signal()
        }
        #expect(producer.join(timeout: testDeadline) == true)
        #expect(seen == (0..<50).map { [$0, $0 * 2] })
    }

    @Test("a condition variable wakes a waiter; a timed wait without a signal times out")
    func conditionVariable() throws {
        let lock = MutexLock(name: "cv")
        let condition = ConditionVariable()
        let ready = Shared(false)
        lock.lock()
        #expect(condition.wait(lock, timeout: .milliseconds(20)) == false)
        #expect(condition.wait(lock, timeout: .seconds(-1)) == false)
        lock.unlock()

        let waiter = try PosixThread { () -> Bool in
            lock.lock()
            defer { lock.unlock() }
            let start = ContinuousClock.now
            while !ready.value {
                guard ContinuousClock.now - start < testDeadline else { return false }
                _ = condition.wait(lock, timeout: .seconds(1))
            }
            return true
        }
        lock.withLock { ready.value = true }
        condition.signal()
        #expect(waiter.join())

        // broadcast wakes everyone
        let go = Shared(false)
        let woken = Shared(0)
        let waiters = (0..<3).compactMap { _ in
            try? PosixThread {
                lock.withLock {
                    let start = ContinuousClock.now
                    while !go.value && ContinuousClock.now - start < testDeadline {
                        _ = condition.wait(lock, timeout: .seconds(1))
                    }
                    woken.value += 1
                }
            }
        }
        lock.withLock { go.value = true }
        condition.broadcast()
        for waiter in waiters { waiter.join() }
        #expect(woken.value == 3)
    }

    @Test("a counting semaphore: try, timed and blocking waits")
    func semaphore() throws {
        let semaphore = Semaphore(value: 2)
        #expect(semaphore.value == 2)
        #expect(semaphore.tryWait())
        #expect(semaphore.wait(timeout: .zero))
        #expect(!semaphore.tryWait())
        #expect(!semaphore.wait(timeout: .milliseconds(20)))
        #expect(!semaphore.wait(timeout: .seconds(-1)))
        let poster = try PosixThread { semaphore.signal() }
        #expect(semaphore.wait(timeout: testDeadline))
        poster.join()
        semaphore.signal()
        semaphore.wait()
        #expect(semaphore.value == 0)
        #expect(Semaphore.maximumValue >= 32767)
    }

    @Test("Once: 10 callers started together, the body runs once and every caller returns after it finished")
    func once() {
        let once = Once()
        let runs = LockedValue(0)
        let finished = Shared(false)
        let sawFinished = LockedValue(0)
        let ok = runTogether(10) { _ in
            once.run {
                runs.withLock { $0 += 1 }
                PosixThread.sleep(for: .milliseconds(50))  // others must wait for this
                finished.value = true
            }
            if finished.value { sawFinished.withLock { $0 += 1 } }
        }
        #expect(ok)
        #expect(runs.withLock { $0 } == 1)
        #expect(sawFinished.withLock { $0 } == 10)
        #expect(once.hasRun)
        once.run { runs.withLock { $0 += 1 } }
        #expect(runs.withLock { $0 } == 1)
    }
}
