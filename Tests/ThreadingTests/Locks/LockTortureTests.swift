// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import CThreading
import Synchronization
import Testing

@testable import Threading

/// One lock under torture: how to run a critical section with a randomly chosen acquisition variant (blocking,
/// try-in-a-loop, timed-in-a-loop, nested, closure-based), counting refused tries and timeouts.
struct TortureLock: Sendable, CustomStringConvertible {
    let description: String
    let exclusive: @Sendable (inout TortureRandom, TestCounter, () -> Void) -> Void
    /// Shared (read) sections, for reader-writer locks; nil for exclusive-only locks.
    let shared: (@Sendable (inout TortureRandom, TestCounter, () -> Void) -> Void)?

    static let names = [
        "MutexLock.normal", "MutexLock.errorChecking", "MutexLock.priorityInheriting", "RecursiveLock",
        "ReadWriteLock", "ReadWriteLock.preferWriters", "SpinLock", "Semaphore", "Monitor", "LockedValue",
    ]

    /// A random timeout of 0 to 2 ms.
    static func timeout(_ random: inout TortureRandom) -> Duration { .microseconds(random.below(2_000)) }

    // swift-format-ignore: NeverForceUnwrap
    static func make(_ name: String) throws -> TortureLock {
        switch name {
        case "MutexLock.normal", "MutexLock.errorChecking", "MutexLock.priorityInheriting":
            let kind: MutexLock.Kind =
                name.hasSuffix("normal")
                ? .normal : name.hasSuffix("errorChecking") ? .errorChecking : .priorityInheriting
            let lock = try MutexLock(kind: kind, name: name)
            return TortureLock(
                description: name,
                exclusive: { random, refused, body in
                    switch random.below(4) {
                    case 0:
                        lock.lock()
                        body()
                        lock.unlock()
                    case 1:
                        while !lock.tryLock() {
                            refused.add()
                            PosixThread.yield()
                        }
                        body()
                        lock.unlock()
                    case 2:
                        while !lock.lock(timeout: timeout(&random)) { refused.add() }
                        body()
                        lock.unlock()
                    default:
                        lock.withLock { body() }
                    }
                },
                shared: nil
            )
        case "RecursiveLock":
            let lock = RecursiveLock(name: name)
            return TortureLock(
                description: name,
                exclusive: { random, refused, body in
                    switch random.below(4) {
                    case 0:
                        lock.lock()
                        lock.lock()  // nested: the owner re-enters
                        body()
                        lock.unlock()
                        lock.unlock()
                    case 1:
                        while !lock.tryLock() {
                            refused.add()
                            PosixThread.yield()
                        }
                        body()
                        lock.unlock()
                    case 2:
                        while !lock.lock(timeout: timeout(&random)) { refused.add() }
                        lock.withLock { body() }
                        lock.unlock()
                    default:
                        lock.withLock { body() }
                    }
                },
                shared: nil
            )
        case "ReadWriteLock", "ReadWriteLock.preferWriters":
            let lock = ReadWriteLock(name: name, preferWriters: name.hasSuffix("preferWriters"))
            return TortureLock(
                description: name,
                exclusive: { random, refused, body in
                    switch random.below(4) {
                    case 0:
                        lock.writeLock()
                        body()
                        lock.unlock()
                    case 1:
                        while !lock.tryWriteLock() {
                            refused.add()
                            PosixThread.yield()
                        }
                        body()
                        lock.unlock()
                    case 2:
                        while !lock.writeLock(timeout: timeout(&random)) { refused.add() }
                        body()
                        lock.unlock()
                    default:
                        lock.withWriteLock { body() }
                    }
                },
                shared: { random, refused, body in
                    switch random.below(5) {
                    case 4:
                        // Nested: the inner hold is only a count in the thread's table.
                        lock.withReadLock { lock.withReadLock { body() } }
                    case 0:
                        lock.readLock()
                        body()
                        lock.unlock()
                    case 1:
                        while !lock.tryReadLock() {
                            refused.add()
                            PosixThread.yield()
                        }
                        body()
                        lock.unlock()
                    case 2:
                        while !lock.readLock(timeout: timeout(&random)) { refused.add() }
                        body()
                        lock.unlock()
                    default:
                        lock.withReadLock { body() }
                    }
                }
            )
        case "SpinLock":
            let lock = SpinLock(name: name)
            return TortureLock(
                description: name,
                exclusive: { random, refused, body in
                    switch random.below(3) {
                    case 0:
                        lock.lock()
                        body()
                        lock.unlock()
                    case 1:
                        while !lock.tryLock() {
                            refused.add()
                            PosixThread.yield()
                        }
                        body()
                        lock.unlock()
                    default:
                        lock.withLock { body() }
                    }
                },
                shared: nil
            )
        case "Semaphore":
            let semaphore = Semaphore(value: 1)
            return TortureLock(
                description: name,
                exclusive: { random, refused, body in
                    switch random.below(3) {
                    case 0:
                        semaphore.wait()
                    case 1:
                        while !semaphore.tryWait() {
                            refused.add()
                            PosixThread.yield()
                        }
                    default:
                        while !semaphore.wait(timeout: timeout(&random)) { refused.add() }
                    }
                    body()
                    semaphore.signal()
                },
                shared: nil
            )
        case "Monitor":
            let monitor = Monitor(0, name: name)
            return TortureLock(
                description: name,
                exclusive: { random, refused, body in
                    switch random.below(3) {
                    case 0:
                        monitor.withLock { state in
                            body()
                            state += 1
                        }
                    case 1:
                        monitor.withLock(when: { $0 >= 0 }) { state in
                            body()
                            state += 1
                        }
                    default:
                        let done: Void? = monitor.withLock(when: { $0 >= 0 }, timeout: timeout(&random)) { state in
                            body()
                            state += 1
                        }
                        if done == nil {
                            refused.add()
                            monitor.withLock { _ in body() }
                        }
                    }
                },
                shared: nil
            )
        case "LockedValue":
            let value = LockedValue(0, name: name)
            return TortureLock(
                description: name,
                exclusive: { random, refused, body in
                    if random.chance(50) {
                        value.withLock { state in
                            body()
                            state += 1
                        }
                    } else {
                        while value.withLockIfAvailable({ _ in body() }) == nil {
                            refused.add()
                            PosixThread.yield()
                        }
                    }
                },
                shared: nil
            )
        default:
            throw ThreadingError.invalidArgument
        }
    }
}

extension TortureTests {
    /// Every lock type under contention: an "inside" counter must be exactly 1 inside every exclusive section (and
    /// no writer may be inside while readers are), a plain counter guarded by the lock loses no increment, with
    /// random hold times and random blocking/try/timed/closure acquisitions.
    ///
    /// Starvation bound: every thread must complete its whole quota of acquisitions within the test deadline
    /// (20 s); the summary line also prints the smallest share any thread had when the first thread finished.
    @Suite(.serialized)
    struct LockTorture {
        static let threads = 4

        @Test(arguments: TortureLock.names)
        func lockTorture(_ name: String) throws {
            let lock = try TortureLock.make(name)
            let seed = Torture.seed()
            let quota = Torture.size(300, long: 30_000)
            let writersInside = Atomic<Int>(0)
            let readersInside = Atomic<Int>(0)
            let guarded = Shared(0)
            let violations = TortureViolations()
            let refused = TestCounter()
            let sharedSections = TestCounter()
            let progress = (0..<Self.threads).map { _ in TortureCell() }
            let minimumShareAtFirstFinish = Atomic<Int>(-1)
            let ok = runTogether(Self.threads) { index in
                var random = TortureRandom(seed: seed &+ UInt64(index))
                for done in 0..<quota {
                    let hold = random.below(4) == 0 ? random.below(2_000) : random.below(50)
                    if let shared = lock.shared, random.chance(60) {
                        shared(&random, refused) {
                            readersInside.add(1, ordering: .sequentiallyConsistent)
                            if writersInside.load(ordering: .sequentiallyConsistent) != 0 {
                                violations.record("\(name): a reader is inside with a writer")
                            }
                            Torture.spin(hold)
                            if writersInside.load(ordering: .sequentiallyConsistent) != 0 {
                                violations.record("\(name): a writer entered while a reader was inside")
                            }
                            readersInside.subtract(1, ordering: .sequentiallyConsistent)
                        }
                        sharedSections.add()
                    } else {
                        lock.exclusive(&random, refused) {
                            let inside = writersInside.add(1, ordering: .sequentiallyConsistent).newValue
                            if inside != 1 { violations.record("\(name): \(inside) threads inside") }
                            if readersInside.load(ordering: .sequentiallyConsistent) != 0 {
                                violations.record("\(name): a writer is inside with readers")
                            }
                            let before = guarded.value
                            Torture.spin(hold)
                            guarded.value = before + 1
                            writersInside.subtract(1, ordering: .sequentiallyConsistent)
                        }
                    }
                    progress[index].value.store(done + 1, ordering: .relaxed)
                }
                // The first thread to finish notes how far the slowest one got.
                let slowest = progress.map { $0.value.load(ordering: .relaxed) }.min() ?? 0
                _ = minimumShareAtFirstFinish.compareExchange(expected: -1, desired: slowest, ordering: .relaxed)
            }
            #expect(ok, "\(name): a thread did not complete its \(quota) acquisitions within the deadline")
            let exclusive = Self.threads * quota - sharedSections.value
            #expect(guarded.value == exclusive, "\(name): \(exclusive - guarded.value) lost updates")
            #expect(violations.count == 0, "\(violations.messages)")
            for index in 0..<Self.threads {
                #expect(progress[index].value.load(ordering: .relaxed) == quota, "\(name): thread \(index) starved")
            }
            Torture.report(
                "lock \(name)",
                seed: seed,
                [
                    "acquisitions": Self.threads * quota, "shared": sharedSections.value,
                    "refused-tries-or-timeouts": refused.value,
                    "slowest-at-first-finish": minimumShareAtFirstFinish.load(ordering: .relaxed),
                    "violations": violations.count,
                ]
            )
        }
    }
}

extension TortureTests {
    /// The futex lock's wake-up protocol (`cthr_lock.h`: WAKING, the woken thread's spin, the per-sleep
    /// membarrier): a lost wake-up leaves a thread asleep on a free lock, so each test ends only if every thread
    /// gets through, within the deadline.
    @Suite(.serialized)
    struct LockWakeTorture {
        /// The holder releases once and never touches the lock again while every other thread sleeps on it (or is
        /// about to): each release must wake the next sleeper, including releases by threads that were woken
        /// themselves, and waiters whose short timeouts expire around a wake must pass it on.
        @Test
        func everySleeperIsWokenAfterOneRelease() throws {
            let seed = Torture.seed()
            let rounds = Torture.size(30, long: 3_000)
            let sleepers = 6
            let lock = MutexLock(name: "wake chain")
            let guarded = Shared(0)
            let timeouts = TestCounter()
            var random = TortureRandom(seed: seed)
            var stalled = 0
            for round in 0..<rounds {
                lock.lock()
                let finished = Semaphore()
                let holdUnits = random.below(3) == 0 ? random.below(3_000) : 0
                let threads = try (0..<sleepers).map { index in
                    let timed = (round + index) % 3 == 0
                    return try PosixThread(name: "sleeper-\(index)") {
                        if timed {
                            // Short timeouts: some expire just as a wake-up arrives for this thread.
                            while !lock.lock(timeout: .microseconds(20)) { timeouts.add() }
                        } else {
                            lock.lock()
                        }
                        let before = guarded.value
                        Torture.spin(holdUnits)
                        guarded.value = before + 1
                        lock.unlock()
                        finished.signal()
                    }
                }
                // Let them register (the blocking ones sleep; the timed ones come and go), then release once.
                let start = ContinuousClock.now
                while cthr_lock_waiter_count(lock.word) < UInt32(sleepers / 2)
                    && ContinuousClock.now - start < .seconds(2)
                {
                    PosixThread.yield()
                }
                lock.unlock()
                var all = true
                for _ in 0..<sleepers where !finished.wait(timeout: testDeadline) {
                    all = false
                    break
                }
                if !all {
                    stalled += 1
                    for thread in threads { thread.detach() }
                    break
                }
                for thread in threads { thread.join() }
            }
            #expect(stalled == 0, "a sleeper was never woken (lost wake-up); seed \(seed)")
            #expect(guarded.value == rounds * sleepers || stalled != 0)
            #expect(cthr_lock_waiter_count(lock.word) == 0)
            #expect(cthr_lock_owner(lock.word) == 0)
            Torture.report(
                "lock wake chain",
                seed: seed,
                ["rounds": rounds, "sleepers": sleepers, "timeouts": timeouts.value, "stalled": stalled]
            )
        }

        /// Many more threads than cores, critical sections that sometimes yield the processor while holding the
        /// lock (so others spin, register and sleep), timed and try acquisitions mixed in: the count stays exact,
        /// everyone finishes, and no waiter stays registered.
        @Test(arguments: [MutexLock.Kind.normal, .errorChecking])
        func oversubscribedHandoff(_ kind: MutexLock.Kind) throws {
            let seed = Torture.seed()
            let threads = 16
            let quota = Torture.size(400, long: 40_000)
            let lock = try MutexLock(kind: kind, name: "oversubscribed")
            let guarded = Shared(0)
            let refused = TestCounter()
            let ok = runTogether(threads) { index in
                var random = TortureRandom(seed: seed &+ UInt64(index))
                for _ in 0..<quota {
                    switch random.below(8) {
                    case 0:
                        while !lock.lock(timeout: .microseconds(random.below(30))) { refused.add() }
                    case 1:
                        while !lock.tryLock() {
                            refused.add()
                            PosixThread.yield()
                        }
                    default:
                        lock.lock()
                    }
                    let before = guarded.value
                    if random.below(16) == 0 { PosixThread.yield() }  // preempted holder: the others queue up
                    guarded.value = before + 1
                    lock.unlock()
                }
            }
            #expect(ok, "a thread did not finish its \(quota) acquisitions (lost wake-up?); seed \(seed)")
            #expect(guarded.value == threads * quota || !ok)
            #expect(cthr_lock_waiter_count(lock.word) == 0)
            Torture.report(
                "lock oversubscribed \(kind)",
                seed: seed,
                ["threads": threads, "acquisitions": threads * quota, "refused-tries-or-timeouts": refused.value]
            )
        }
    }
}

extension TortureTests {
    /// The futex semaphore (`cthr_sem.h`: value and waiter count in one word, the inlined fast paths, timed futex
    /// waits with one more look after a timeout): no token is lost or taken twice, and no waiter sleeps through a
    /// post, with blocking, try and timed takes racing posts.
    @Suite(.serialized)
    struct SemaphoreTorture {
        /// Posters return `tokens` units in random bursts while takers take them with random variants (blocking,
        /// try in a loop, timed with 0 to 2 ms timeouts in a loop); every token must be taken exactly once, none
        /// before it was posted, and none may be left over.
        @Test
        func everyTokenIsTakenExactlyOnce() throws {
            let seed = Torture.seed()
            let perTaker = Torture.size(2_000, long: 100_000)
            let takers = 3
            let posters = 2
            let semaphore = Semaphore()
            let posted = Atomic<Int>(0)
            let taken = Atomic<Int>(0)
            let timeouts = TestCounter()
            let violations = TortureViolations()
            let payload = Shared(0)
            let payloadLock = MutexLock(name: "payload")
            let total = takers * perTaker
            let ok = runTogether(takers + posters) { index in
                var random = TortureRandom(seed: seed &+ UInt64(index))
                if index >= takers {
                    // Posters: share the total between them, in bursts, sometimes pausing.
                    while true {
                        let next = posted.add(1, ordering: .relaxed).newValue
                        if next > total { return }
                        payloadLock.withLock { payload.value += 1 }
                        semaphore.signal()
                        if random.chance(5) { Torture.spin(random.below(2_000)) }
                    }
                }
                for _ in 0..<perTaker {
                    switch random.below(3) {
                    case 0:
                        semaphore.wait()
                    case 1:
                        while !semaphore.tryWait() { PosixThread.yield() }
                    default:
                        while !semaphore.wait(timeout: TortureLock.timeout(&random)) { timeouts.add() }
                    }
                    // The k-th token taken overall needs k posts, each after its payload was counted.
                    let seen = taken.add(1, ordering: .relaxed).newValue
                    let written = payloadLock.withLock { payload.value }
                    if written < seen { violations.record("token \(seen) taken before it was posted") }
                }
            }
            #expect(ok, "a taker or poster did not finish within the deadline (a lost wake-up?)")
            #expect(taken.load(ordering: .relaxed) == total)
            #expect(semaphore.value == 0, "tokens left over: \(semaphore.value)")
            #expect(cthr_sem_waiter_count(semaphore.sem) == 0, "waiters still registered")
            #expect(violations.count == 0, "\(violations.messages)")
            Torture.report(
                "semaphore tokens",
                seed: seed,
                ["tokens": total, "timeouts": timeouts.value, "violations": violations.count]
            )
        }

        /// Every taker sleeps on an empty semaphore (some with deadlines that expire around the posts); the posts
        /// then come one at a time, each only after the previous token was taken: a post that wakes nobody, or a
        /// wake lost to a waiter that timed out, leaves the chain stuck until the deadline.
        @Test
        func everySleeperIsWokenByItsPost() throws {
            let seed = Torture.seed()
            let rounds = Torture.size(20, long: 2_000)
            let sleepers = 5
            for round in 0..<rounds {
                var random = TortureRandom(seed: seed &+ UInt64(round))
                let semaphore = Semaphore()
                let takenTokens = Semaphore()
                let timeouts = TestCounter()
                let timedSleepers = random.below(sleepers)
                let ok = runTogether(sleepers + 1) { index in
                    if index == sleepers {
                        for _ in 0..<sleepers {
                            semaphore.signal()
                            guard takenTokens.wait(timeout: testDeadline) else { return }
                        }
                        return
                    }
                    if index < timedSleepers {
                        while !semaphore.wait(timeout: .microseconds(50 + index * 100)) { timeouts.add() }
                    } else {
                        semaphore.wait()
                    }
                    takenTokens.signal()
                }
                #expect(ok, "round \(round): a sleeper was not woken (lost wake-up)")
                #expect(semaphore.value == 0)
                #expect(cthr_sem_waiter_count(semaphore.sem) == 0)
                if !ok { break }
            }
            Torture.report("semaphore wake chain", seed: seed, ["rounds": rounds, "sleepers": sleepers])
        }
    }
}

extension TortureTests {
    /// Conditions under a stream of hand-offs: the waits that end in their spin and the ones that sleep.
    @Suite(.serialized)
    struct ConditionHandOffTorture {
        /// More threads than cores take turns in a ring through a `ConditionVariable` (broadcast: the waiters wait
        /// for different turns) or a `Monitor` (each waiter woken only when its turn comes). Holds of random length
        /// before a turn is passed push some waits past their spin into a sleep; timed waits with short timeouts
        /// come and go around the signals. Every turn must arrive, in order, and nobody may stay registered.
        @Test(arguments: ["ConditionVariable", "Monitor"])
        func turnsGoRoundAndNoneIsLost(_ primitive: String) throws {
            let seed = Torture.seed()
            let threads = 5
            let rounds = Torture.size(300, long: 30_000)
            let lock = MutexLock(name: "turns")
            let condition = ConditionVariable()
            let turns = Monitor(0, name: "turns")
            let passed = Shared(0)  // guarded by `lock` (ConditionVariable) or by the monitor (the monitor's state)
            let timeouts = TestCounter()
            let stalled = TestCounter()
            let deadline = cthr_clock_now_ns() + UInt64(testDeadline.components.seconds) * 1_000_000_000
            let ok = runTogether(threads) { me in
                var random = TortureRandom(seed: seed &+ UInt64(me))
                for round in 0..<rounds {
                    let turn = round * threads + me
                    let timed = random.chance(30)
                    let hold = random.chance(20) ? random.below(20_000) : 0
                    if primitive == "Monitor" {
                        var taken = false
                        while !taken {
                            let result: Void? = turns.withLock(
                                when: { $0 == turn },
                                timeout: timed ? .microseconds(50) : testDeadline
                            ) { state in
                                Torture.spin(hold)
                                state += 1
                            }
                            taken = result != nil
                            if !taken {
                                timeouts.add()
                                // An untimed wait that ran out of the test's deadline missed its wake-up.
                                if !timed || cthr_clock_now_ns() > deadline { break }
                            }
                        }
                        if !taken {
                            stalled.add()
                            return
                        }
                    } else {
                        lock.lock()
                        while passed.value != turn {
                            if !condition.wait(lock, timeout: timed ? .microseconds(50) : testDeadline) {
                                timeouts.add()
                                if !timed || cthr_clock_now_ns() > deadline { break }
                            }
                        }
                        if passed.value != turn {
                            lock.unlock()
                            stalled.add()
                            return
                        }
                        Torture.spin(hold)
                        passed.value = turn + 1
                        lock.unlock()
                        condition.broadcast()
                    }
                }
            }
            #expect(ok)
            #expect(stalled.value == 0, "a turn was never delivered (lost wake-up); seed \(seed)")
            // Each thread waits for exactly its turn and moves the count on by one: every turn came, once, in order.
            let total = primitive == "Monitor" ? turns.withLock { $0 } : passed.value
            #expect(total == rounds * threads, "seed \(seed)")
            #expect(turns.withLock { _ in turns.waiters.isEmpty })
            #expect(condition.cond.pointee.sleepers.value == 0)
            Torture.report(
                "condition turns (\(primitive))",
                seed: seed,
                ["rounds": rounds, "threads": threads, "timeouts": timeouts.value, "stalled": stalled.value]
            )
        }
    }
}
