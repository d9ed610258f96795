// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import Synchronization
import Testing

@testable import Threading

/// One lock under torture: how to run a critical section with a randomly chosen acquisition variant (blocking,
/// try-in-a-loop, timed-in-a-loop, nested, closure-based), counting refused tries and timeouts.
struct TortureLock: Sendable, CustomStringConvertible {
    let description: String
    let exclusive: @Sendable (inout TortureRandom, TortureCounter, () -> Void) -> Void
    /// Shared (read) sections, for reader-writer locks; nil for exclusive-only locks.
    let shared: (@Sendable (inout TortureRandom, TortureCounter, () -> Void) -> Void)?

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
                    switch random.below(4) {
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
            let refused = TortureCounter()
            let sharedSections = TortureCounter()
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
