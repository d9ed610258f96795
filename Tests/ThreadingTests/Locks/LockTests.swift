// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import CThreading
import Testing

@testable import Threading

/// Every way Threading offers to run a critical section exclusively, for the race tests.
enum ExclusiveKind: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case mutexNormal, mutexErrorChecking, mutexPriorityInheriting, recursive, readWriteWrite, spin, lockedValue
    case semaphore, monitor

    var testDescription: String { rawValue }

    /// Makes a fresh lock of this kind and returns "run this body exclusively".
    func make() throws -> @Sendable (() -> Void) -> Void {
        switch self {
        case .mutexNormal:
            let lock = MutexLock(name: "tickets")
            return { body in lock.withLock(body) }
        case .mutexErrorChecking:
            let lock = try MutexLock(kind: .errorChecking, name: "tickets")
            return { body in lock.withLock(body) }
        case .mutexPriorityInheriting:
            let lock = try MutexLock(kind: .priorityInheriting, name: "tickets")
            return { body in lock.withLock(body) }
        case .recursive:
            let lock = RecursiveLock(name: "tickets")
            return { body in lock.withLock(body) }
        case .readWriteWrite:
            let lock = ReadWriteLock(name: "tickets")
            return { body in lock.withWriteLock(body) }
        case .spin:
            let lock = SpinLock(name: "tickets")
            return { body in lock.withLock(body) }
        case .lockedValue:
            let box = LockedValue(0)
            return { body in box.withLock { _ in body() } }
        case .semaphore:
            let semaphore = Semaphore(value: 1)
            return { body in
                semaphore.wait()
                body()
                semaphore.signal()
            }
        case .monitor:
            let monitor = Monitor(0)
            return { body in monitor.withLock { _ in body() } }
        }
    }
}

@Suite("Locks", .serialized)
struct LockTests {
    @Test(
        "the ticket sale is exact: 10 tickets, 4 threads, none sold twice, none below zero",
        arguments: ExclusiveKind.allCases
    )
    func ticketSale(kind: ExclusiveKind) throws {
        let exclusive = try kind.make()
        let office = Shared((tickets: 10, sold: [Int](), lowest: 10))
        let ok = runTogether(4) { _ in
            var soldOut = false
            while !soldOut {
                exclusive {
                    if office.value.tickets > 0 {
                        let ticket = office.value.tickets
                        PosixThread.yield()  // widen the window, like a sleep inside the section
                        office.value.sold.append(ticket)
                        office.value.tickets = ticket - 1
                        office.value.lowest = min(office.value.lowest, office.value.tickets)
                    } else {
                        soldOut = true
                    }
                }
            }
        }
        #expect(ok)
        #expect(office.value.tickets == 0)
        #expect(office.value.lowest == 0)
        #expect(office.value.sold.sorted() == Array(1...10))
    }

    @Test("no lost updates: 50 threads x 1,000 increments = 50,000", arguments: ExclusiveKind.allCases)
    func noLostUpdates(kind: ExclusiveKind) throws {
        let exclusive = try kind.make()
        let counter = Shared(0)
        let ok = runTogether(50) { _ in
            for _ in 0..<1_000 { exclusive { counter.value += 1 } }
        }
        #expect(ok)
        #expect(counter.value == 50_000)
    }

    @Test("a recursive lock nests under contention")
    func recursiveNestedUnderContention() {
        let lock = RecursiveLock(name: "nested")
        let counter = Shared(0)
        let ok = runTogether(4) { _ in
            for _ in 0..<500 {
                lock.withLock {
                    lock.withLock {
                        #expect(lock.tryLock())
                        counter.value += 1
                        lock.unlock()
                    }
                }
            }
        }
        #expect(ok)
        #expect(counter.value == 2_000)
    }

    /// Locks with `lock(timeout:)`, as (lock, unlock, timed lock) closures.
    enum TimedKind: String, CaseIterable, Sendable {
        case mutexNormal, mutexPriorityInheriting, recursive, readLockVersusWriter, writeLock

        func make() throws -> (
            hold: @Sendable () -> Void, release: @Sendable () -> Void,
            timed: @Sendable (Duration) -> Bool, releaseTimed: @Sendable () -> Void
        ) {
            switch self {
            case .mutexNormal, .mutexPriorityInheriting:
                let lock = try self == .mutexNormal ? MutexLock(name: "timed") : MutexLock(kind: .priorityInheriting)
                return ({ lock.lock() }, { lock.unlock() }, { lock.lock(timeout: $0) }, { lock.unlock() })
            case .recursive:
                let lock = RecursiveLock(name: "timed")
                return ({ lock.lock() }, { lock.unlock() }, { lock.lock(timeout: $0) }, { lock.unlock() })
            case .readLockVersusWriter:
                let lock = ReadWriteLock(name: "timed")
                return ({ lock.writeLock() }, { lock.unlock() }, { lock.readLock(timeout: $0) }, { lock.unlock() })
            case .writeLock:
                let lock = ReadWriteLock(name: "timed")
                return ({ lock.readLock() }, { lock.unlock() }, { lock.writeLock(timeout: $0) }, { lock.unlock() })
            }
        }
    }

    @Test(
        "a timed lock fails while another thread holds the lock and succeeds once it is released",
        arguments: TimedKind.allCases
    )
    func timedLock(kind: TimedKind) throws {
        let lock = try kind.make()
        let held = Semaphore()
        let release = Semaphore()
        let holder = try PosixThread {
            lock.hold()
            held.signal()
            _ = release.wait(timeout: testDeadline)
            lock.release()
        }
        #expect(held.wait(timeout: testDeadline))
        #expect(lock.timed(.milliseconds(30)) == false)
        #expect(lock.timed(.zero) == false)
        #expect(lock.timed(.seconds(-5)) == false)
        release.signal()
        #expect(lock.timed(testDeadline))
        lock.releaseTimed()
        holder.join()
    }

    @Test("a deadline in the past (or zero, or huge) on a free lock succeeds", arguments: TimedKind.allCases)
    func pastDeadlineOnFreeLock(kind: TimedKind) throws {
        let lock = try kind.make()
        for timeout: Duration in [.seconds(-1), .zero, .nanoseconds(1), .seconds(Int64.max)] {
            #expect(lock.timed(timeout))
            lock.releaseTimed()
        }
    }

    @Test("tryLock reports held and free; a timed lock over a huge timeout waits like lock()")
    func tryLockStates() throws {
        let mutex = MutexLock(name: "try")
        #expect(mutex.tryLock())
        #expect(!mutex.tryLock())  // the owner's tryLock does not trap: it just fails
        let other = try PosixThread { mutex.tryLock() }
        #expect(other.join() == false)
        mutex.unlock()
        let spin = SpinLock()
        #expect(spin.tryLock())
        #expect(!spin.tryLock())
        spin.unlock()
        #expect(spin.tryLock())
        spin.unlock()
    }

    @Test("reader-writer try-lock state machine")
    func readWriteStateMachine() throws {
        for preferWriters in [false, true] {
            let lock = ReadWriteLock(name: "state", preferWriters: preferWriters)
            // free -> read -> read (shared)
            #expect(lock.tryReadLock())
            let secondReader = try PosixThread { () -> Bool in
                let got = lock.tryReadLock()
                if got { lock.unlock() }
                return got
            }
            #expect(secondReader.join())
            // read held: no writer
            let writerWhileRead = try PosixThread { lock.tryWriteLock() }
            #expect(writerWhileRead.join() == false)
            lock.unlock()
            // free -> write
            #expect(lock.tryWriteLock())
            let readerWhileWrite = try PosixThread { lock.tryReadLock() }
            #expect(readerWhileWrite.join() == false)
            let writerWhileWrite = try PosixThread { lock.tryWriteLock() }
            #expect(writerWhileWrite.join() == false)
            #expect(!lock.tryWriteLock())
            lock.unlock()
            // free again: both work
            #expect(lock.tryWriteLock())
            lock.unlock()
            #expect(lock.tryReadLock())
            lock.unlock()
            #expect(lock.withReadLock { 1 } + lock.withWriteLock { 2 } == 3)
        }
    }

    @Test("writer preference: a waiting writer blocks new readers")
    func writerPreference() throws {
        let lock = ReadWriteLock(name: "prefer", preferWriters: true)
        lock.readLock()
        let writerDone = Semaphore()
        let writer = try PosixThread {
            lock.writeLock()
            lock.unlock()
            writerDone.signal()
        }
        // Once the writer waits, a new reader is refused; poll until that happens (bounded).
        var blocked = false
        let start = ContinuousClock.now
        while ContinuousClock.now - start < testDeadline {
            let reader = try PosixThread { () -> Bool in
                let got = lock.tryReadLock()
                if got { lock.unlock() }
                return got
            }
            if !reader.join() {
                blocked = true
                break
            }
            PosixThread.sleep(for: .milliseconds(1))
        }
        #expect(blocked)
        lock.unlock()
        #expect(writerDone.wait(timeout: testDeadline))
        writer.join()
    }

    /// Polls (bounded) until a writer claims `lock`'s write side.
    func waitForWriterClaim(_ lock: ReadWriteLock) -> Bool {
        let start = ContinuousClock.now
        while cthr_rwlock_writer(lock.rwlock) == 0 {
            if ContinuousClock.now - start > testDeadline { return false }
            PosixThread.yield()
        }
        return true
    }

    @Test("reader preference: a waiting writer does not block new readers")
    func readerPreference() throws {
        let lock = ReadWriteLock(name: "prefer-readers")
        lock.readLock()
        let writerDone = Semaphore()
        let writer = try PosixThread {
            lock.writeLock()
            lock.unlock()
            writerDone.signal()
        }
        #expect(waitForWriterClaim(lock))
        let reader = try PosixThread { () -> Bool in
            let got = lock.tryReadLock()
            if got { lock.unlock() }
            return got
        }
        #expect(reader.join())
        #expect(!writerDone.wait(timeout: .milliseconds(10)))  // still waiting for this thread's read hold
        lock.unlock()
        #expect(writerDone.wait(timeout: testDeadline))
        writer.join()
    }

    @Test("a nested read never waits, even behind a waiting writer that is preferred", arguments: [false, true])
    func nestedReadBehindAWaitingWriter(preferWriters: Bool) throws {
        let lock = ReadWriteLock(name: "nested-read", preferWriters: preferWriters)
        lock.readLock()
        let writer = try PosixThread {
            lock.writeLock()
            lock.unlock()
        }
        #expect(waitForWriterClaim(lock))
        #expect(lock.readLock(timeout: .zero))
        #expect(lock.tryReadLock())
        lock.withReadLock { #expect(cthr_rwlock_read_holds(lock.rwlock) == 4) }
        lock.unlock()
        lock.unlock()
        lock.unlock()
        #expect(cthr_rwlock_read_holds(lock.rwlock) == 0)
        writer.join()
    }

    @Test("the reader bias: concurrent readers turn it on, a writer revokes it, waits for stripe readers, restores it")
    func readerBias() throws {
        let lock = ReadWriteLock(name: "bias")
        let biased = UInt64(CTHR_RWLOCK_BIASED)
        #expect(cthr_rwlock_load(lock.rwlock) == 0)
        lock.readLock()  // the central count
        let second = try PosixThread {
            lock.readLock()  // finds a reader there: turns the bias on
            lock.unlock()
        }
        second.join()
        #expect(cthr_rwlock_load(lock.rwlock) & biased != 0)
        let holding = Semaphore()
        let release = Semaphore()
        let striped = try PosixThread {
            lock.readLock()  // a stripe of its own
            holding.signal()
            _ = release.wait(timeout: testDeadline)
            lock.unlock()
        }
        #expect(holding.wait(timeout: testDeadline))
        lock.unlock()
        #expect(cthr_rwlock_load(lock.rwlock) & UInt64(CTHR_RWLOCK_COUNT_MASK) == 0)
        #expect(!lock.tryWriteLock())  // the stripe reader holds it
        #expect(!lock.writeLock(timeout: .milliseconds(20)))
        #expect(cthr_rwlock_load(lock.rwlock) == biased)  // the refused writers restored the bias
        release.signal()
        striped.join()
        lock.writeLock()
        #expect(cthr_rwlock_load(lock.rwlock) & biased == 0)  // revoked while written
        lock.unlock()
        #expect(cthr_rwlock_load(lock.rwlock) == biased)  // restored
        #expect(cthr_rwlock_stripe_count(lock.rwlock) >= 8)
    }

    @Test("more locks read at once than the per-thread table tracks still balance")
    func manyReadLocksAtOnce() {
        let locks = (0..<12).map { ReadWriteLock(name: "many-\($0)") }
        for lock in locks { lock.readLock() }
        for lock in locks { #expect(lock.tryReadLock()) }
        for lock in locks.reversed() {
            lock.unlock()
            lock.unlock()
        }
        for lock in locks {
            #expect(lock.tryWriteLock())
            lock.unlock()
        }
    }

    @Test("a recursive lock counts its depth per owner, and another thread waits for the last unlock")
    func recursiveDepth() throws {
        let lock = RecursiveLock(name: "depth")
        lock.lock()
        lock.lock()
        #expect(lock.tryLock())
        #expect(lock.heldDepth == 3)
        let other = try PosixThread { () -> Bool in lock.tryLock() }
        #expect(other.join() == false)
        lock.unlock()
        lock.unlock()
        #expect(lock.heldDepth == 1)
        lock.unlock()
        #expect(lock.heldDepth == 0)
        #expect(cthr_lock_load(lock.futexLock) == 0)
        let again = try PosixThread { () -> Bool in
            let got = lock.tryLock()
            if got { lock.unlock() }
            return got
        }
        #expect(again.join())
    }

    @Test("statistics are off by default and count acquisitions and contention when on")
    func statistics() throws {
        let lock = MutexLock(name: "stats")
        lock.withLock {}
        #expect(lock.statistics == LockStatistics())
        lock.statisticsEnabled = true
        for _ in 0..<5 { lock.withLock {} }
        #expect(lock.tryLock())
        lock.unlock()
        #expect(lock.statistics.acquisitions == 6)
        #expect(lock.statistics.contendedAcquisitions == 0)

        // Contention: hold the lock until the other thread sleeps on it (registered as a waiter), then release.
        lock.lock()
        let waiter = try PosixThread { lock.withLock {} }
        let start = ContinuousClock.now
        while cthr_lock_waiter_count(lock.word) == 0 && ContinuousClock.now - start < testDeadline {
            PosixThread.yield()
        }
        lock.unlock()
        waiter.join()
        let stats = lock.statistics
        #expect(stats.acquisitions == 8)
        #expect(stats.contendedAcquisitions == 1)
        #expect(stats.totalWait > .zero)

        lock.statisticsEnabled = false
        lock.withLock {}
        #expect(lock.statistics.acquisitions == 8)
        lock.resetStatistics()
        #expect(lock.statistics == LockStatistics())
        #expect(cthr_lock_load(lock.word) == 0)  // the fast path is back
    }

    @Test("statistics on the other locks", arguments: ["recursive", "rw", "spin", "pi"])
    func otherStatistics(kind: String) throws {
        switch kind {
        case "recursive":
            let lock = RecursiveLock()
            lock.statisticsEnabled = true
            lock.withLock { lock.withLock {} }
            #expect(lock.statistics.acquisitions == 2)
        case "rw":
            let lock = ReadWriteLock()
            lock.statisticsEnabled = true
            lock.withReadLock {}
            lock.withWriteLock {}
            #expect(lock.tryReadLock())
            lock.unlock()
            #expect(lock.statistics.acquisitions == 3)
        case "spin":
            let lock = SpinLock()
            lock.statisticsEnabled = true
            lock.withLock {}
            #expect(lock.statistics.acquisitions == 1)
        default:
            let lock = try MutexLock(kind: .priorityInheriting)
            lock.statisticsEnabled = true
            lock.withLock {}
            lock.statisticsEnabled = false
            lock.withLock {}
            #expect(lock.statistics.acquisitions == 1)
        }
    }

    @Test("LockedValue guards its value and offers a non-blocking variant")
    func lockedValue() throws {
        let box = LockedValue([String: Int](), name: "counts")
        box.withLock { $0["a", default: 0] += 1 }
        #expect(box.withLock { $0["a"] } == 1)
        box.storage.lock.lock()
        let attempt = try PosixThread { box.withLockIfAvailable { $0.count } }
        #expect(attempt.join() == nil)
        box.storage.lock.unlock()
        #expect(box.withLockIfAvailable { $0.count } == 1)
    }

    @Test("LockedValue keeps its value beside the lock word, whatever its size and alignment, and releases it once")
    func lockedValueLayoutAndRelease() throws {
        final class Item: Sendable {
            let id: Int
            init(_ id: Int) { self.id = id }
        }
        let first = WeakBox<Item>()
        let second = WeakBox<Item>()
        do {
            let box = LockedValue(Item(1))
            box.withLock { first.object = $0 }
            let copy = box  // copies share the value
            copy.withLock { $0 = Item(2) }
            #expect(first.object == nil)  // the replaced value is released at once
            box.withLock { second.object = $0 }
            #expect(box.withLock { $0.id } == 2)
        }
        #expect(second.object == nil)  // the box's value went with the box
        // An over-aligned value starts on its alignment, after the word, in the same allocation.
        let wide = LockedValue(SIMD16<Float>(repeating: 1))
        wide.withLock { $0 *= 3 }
        #expect(wide.withLock { $0.sum() } == 48)
        let address = UInt(bitPattern: wide.storage.value)
        #expect(address % UInt(MemoryLayout<SIMD16<Float>>.alignment) == 0)
        let alignment = MemoryLayout<SIMD16<Float>>.alignment
        let wordEnd = (MemoryLayout<cthr_lock_t>.size + alignment - 1) / alignment * alignment
        #expect(address - UInt(bitPattern: wide.storage.lock.word) == UInt(wordEnd))
        let empty = LockedValue(())
        #expect(empty.withLockIfAvailable { _ in true } == true)
    }

    @Test("every lock's, semaphore's and condition's state starts a cache line of its own")
    func lockStateIsOnItsOwnCacheLine() throws {
        let addresses: [UnsafeMutableRawPointer] = [
            UnsafeMutableRawPointer(MutexLock().word),
            UnsafeMutableRawPointer(try MutexLock(kind: .errorChecking).word),
            UnsafeMutableRawPointer(RecursiveLock().word),
            UnsafeMutableRawPointer(SpinLock().spin),
            UnsafeMutableRawPointer(ReadWriteLock().rwlock),
            UnsafeMutableRawPointer(LockedValue(0).storage.lock.word),
            UnsafeMutableRawPointer(Semaphore().sem),
            UnsafeMutableRawPointer(ConditionVariable().cond),
        ]
        for address in addresses { #expect(UInt(bitPattern: address) % 64 == 0) }
    }

    @Test("timeouts convert to monotonic deadlines: negative expired, huge saturates")
    func deadlines() {
        let now = cthr_clock_now_ns()
        #expect(monotonicDeadline(after: .seconds(-3)) >= now)
        #expect(monotonicDeadline(after: .seconds(-3)) < now + 1_000_000_000)
        #expect(monotonicDeadline(after: .seconds(Int64.max)) == .max)
        let oneSecond = monotonicDeadline(after: .seconds(1))
        #expect(oneSecond >= now + 1_000_000_000)
        #expect(oneSecond < now + 2_000_000_000)
    }
}
