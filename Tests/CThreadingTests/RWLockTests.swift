// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import CThreading
import Glibc
import Testing

private let readerPreferring = Int32(CTHR_RWLOCK_PREFER_READER.rawValue)
private let writerPreferring = Int32(CTHR_RWLOCK_PREFER_WRITER.rawValue)

/// A heap-allocated, initialised reader-writer lock of `kind`.
private func makeLock(_ kind: Int32) -> SharedCell<cthr_rwlock_t> {
    let lock = SharedCell(cthr_rwlock_t())
    let code = cthr_rwlock_init(lock.pointer, kind)
    precondition(code == 0, "cthr_rwlock_init(\(kind)) failed: \(code)")
    return lock
}

/// Starts a thread that takes a read hold (with `cthr_rwlock_tryrdlock` when `tryOnly`) and keeps it until
/// `release` is signalled. `holds`: whether it took the hold within the deadline.
private func startReader(
    _ lock: SharedCell<cthr_rwlock_t>,
    tryOnly: Bool = false
) throws -> (thread: TestThread, holds: Bool, release: Event) {
    let holds = Event()
    let release = Event()
    let reader = try #require(
        spawnVoid {
            guard (tryOnly ? cthr_rwlock_tryrdlock(lock.pointer) : cthr_rwlock_rdlock(lock.pointer)) == 0 else {
                return
            }
            holds.signal()
            _ = release.wait()
            _ = cthr_rwlock_unlock(lock.pointer)
        }
    )
    return (reader, holds.wait(), release)
}

/// Starts a thread that takes the write hold (waiting up to `generousTimeoutNs`; the code lands in `result`), signals
/// `entered`, keeps the hold until `holdUntil` is signalled (not at all when nil) and unlocks.
private func startWriter(
    _ lock: SharedCell<cthr_rwlock_t>,
    holdUntil release: Event? = nil
) throws -> (thread: TestThread, result: SharedCell<Int32>, entered: Event) {
    let result = SharedCell<Int32>(-1)
    let entered = Event()
    let writer = try #require(
        spawnVoid {
            result.pointer.pointee = cthr_rwlock_timedwrlock(lock.pointer, cthr_clock_deadline_after(generousTimeoutNs))
            entered.signal()
            _ = release?.wait()
            if result.pointer.pointee == 0 { _ = cthr_rwlock_unlock(lock.pointer) }
        }
    )
    return (writer, result, entered)
}

/// Turns the bias on (two readers meet in the central count) and starts a thread that then holds a read hold
/// through its stripe alone, until `release` is signalled. Returns once the calling thread's own hold is gone.
private func startStripeReader(_ lock: SharedCell<cthr_rwlock_t>) throws -> (TestThread, Event) {
    #expect(cthr_rwlock_rdlock(lock.pointer) == 0)  // the central count
    let holds = Event()
    let release = Event()
    let reader = try #require(
        spawnVoid {
            guard cthr_rwlock_rdlock(lock.pointer) == 0 else { return }  // meets the first reader: bias on
            _ = cthr_rwlock_unlock(lock.pointer)
            guard cthr_rwlock_rdlock(lock.pointer) == 0 else { return }  // now through its stripe
            holds.signal()
            _ = release.wait()
            _ = cthr_rwlock_unlock(lock.pointer)
        }
    )
    #expect(holds.wait())
    #expect(cthr_rwlock_unlock(lock.pointer) == 0)
    return (reader, release)
}

@Suite(.serialized) struct RWLockTests {
    @Test(arguments: [readerPreferring, writerPreferring])
    func readersOverlap(kind: Int32) throws {
        let lock = makeLock(kind)
        let gate = StartGate()
        let arrivedWithHold = Event()
        let bothHeld = SharedSlots<Bool>(repeating: false, count: 2)
        let threads = (0..<2).map { index in
            spawnVoid {
                guard gate.arriveAndWait(), cthr_rwlock_rdlock(lock.pointer) == 0 else { return }
                // Each reader holds its read lock until it has seen the other one holding it too.
                arrivedWithHold.signal()
                bothHeld[index] = arrivedWithHold.wait()
                arrivedWithHold.signal()  // hand the token back for the other reader
                _ = cthr_rwlock_unlock(lock.pointer)
            }
        }
        #expect(gate.release(2))
        for thread in threads {
            #expect(try #require(thread).joined())
        }
        #expect(bothHeld.values == [true, true])
        #expect(cthr_rwlock_destroy(lock.pointer) == 0)
    }

    @Test(arguments: [readerPreferring, writerPreferring])
    func writerExcludesReadersAndWriters(kind: Int32) throws {
        let lock = makeLock(kind)
        #expect(cthr_rwlock_wrlock(lock.pointer) == 0)
        let results = SharedSlots<Int32>(repeating: -1, count: 4)
        let timeout: UInt64 = 30_000_000
        let elapsed = SharedCell<UInt64>(0)
        let spawned = spawnVoid {
            results[0] = cthr_rwlock_tryrdlock(lock.pointer)
            results[1] = cthr_rwlock_trywrlock(lock.pointer)
            let start = cthr_clock_now_ns()
            results[2] = cthr_rwlock_timedrdlock(lock.pointer, start + timeout)
            results[3] = cthr_rwlock_timedwrlock(lock.pointer, start + timeout)
            elapsed.pointer.pointee = elapsedNs(since: start)
        }
        #expect(try #require(spawned).joined())
        #expect(results.values == [EBUSY, EBUSY, ETIMEDOUT, ETIMEDOUT])
        #expect(elapsed.pointer.pointee >= timeout)
        #expect(elapsed.pointer.pointee < generousTimeoutNs)
        // The owner itself: a read or write request on its own write hold is a deadlock.
        #expect(cthr_rwlock_rdlock(lock.pointer) == EDEADLK)
        #expect(cthr_rwlock_wrlock(lock.pointer) == EDEADLK)
        #expect(cthr_rwlock_destroy(lock.pointer) == EBUSY)
        #expect(cthr_rwlock_unlock(lock.pointer) == 0)
        #expect(cthr_rwlock_destroy(lock.pointer) == 0)
    }

    @Test(arguments: [readerPreferring, writerPreferring])
    func readerExcludesWriters(kind: Int32) throws {
        let lock = makeLock(kind)
        #expect(cthr_rwlock_rdlock(lock.pointer) == 0)
        let results = SharedSlots<Int32>(repeating: -1, count: 2)
        let spawned = spawnVoid {
            results[0] = cthr_rwlock_trywrlock(lock.pointer)
            results[1] = cthr_rwlock_timedwrlock(lock.pointer, cthr_clock_deadline_after(20_000_000))
        }
        #expect(try #require(spawned).joined())
        #expect(results.values == [EBUSY, ETIMEDOUT])
        #expect(cthr_rwlock_destroy(lock.pointer) == EBUSY)
        #expect(cthr_rwlock_unlock(lock.pointer) == 0)
        #expect(cthr_rwlock_destroy(lock.pointer) == 0)
    }

    @Test(arguments: [readerPreferring, writerPreferring])
    func timedLocksSucceedWhenReleasedInTime(kind: Int32) throws {
        let lock = makeLock(kind)
        #expect(cthr_rwlock_wrlock(lock.pointer) == 0)
        let results = SharedSlots<Int32>(repeating: -1, count: 2)
        let started = Event()
        let spawned = spawnVoid {
            started.signal()
            results[0] = cthr_rwlock_timedrdlock(lock.pointer, cthr_clock_deadline_after(generousTimeoutNs))
            _ = cthr_rwlock_unlock(lock.pointer)
            results[1] = cthr_rwlock_timedwrlock(lock.pointer, UInt64.max)
            _ = cthr_rwlock_unlock(lock.pointer)
        }
        #expect(started.wait())
        _ = cthr_sleep_ns(20_000_000)
        #expect(cthr_rwlock_unlock(lock.pointer) == 0)
        #expect(try #require(spawned).joined())
        #expect(results.values == [0, 0])
        #expect(cthr_rwlock_destroy(lock.pointer) == 0)
    }

    /// The bias: once two readers met, a reader holds the lock through its stripe alone (the word reads BIASED and
    /// nothing else); that reader keeps writers and destroy out, a refused writer restores the bias, a writer revokes
    /// it while it holds the lock and restores it on unlock; a read unlock without a read hold is refused.
    @Test(arguments: [readerPreferring, writerPreferring])
    func biasedReaderExcludesWritersAndDestroy(kind: Int32) throws {
        let lock = makeLock(kind)
        let biased = UInt64(CTHR_RWLOCK_BIASED)
        #expect(cthr_rwlock_rdunlock(lock.pointer) == EPERM)
        let (reader, release) = try startStripeReader(lock)
        #expect(cthr_rwlock_load(lock.pointer) == biased)  // only the stripe holds it
        #expect(cthr_rwlock_destroy(lock.pointer) == EBUSY)
        #expect(cthr_rwlock_trywrlock(lock.pointer) == EBUSY)
        #expect(cthr_rwlock_timedwrlock(lock.pointer, cthr_clock_deadline_after(10_000_000)) == ETIMEDOUT)
        #expect(cthr_rwlock_load(lock.pointer) == biased)
        release.signal()
        #expect(reader.joined())
        #expect(cthr_rwlock_wrlock(lock.pointer) == 0)
        #expect(cthr_rwlock_load(lock.pointer) & biased == 0)
        #expect(cthr_rwlock_unlock(lock.pointer) == 0)
        #expect(cthr_rwlock_load(lock.pointer) == biased)
        #expect(cthr_rwlock_destroy(lock.pointer) == 0)
    }

    /// Holds a read lock, starts a writer that blocks on it, and reports whether a new reader is turned away
    /// (EBUSY) while that writer waits. Returns nil if the scenario could not be set up in time.
    private func newReaderIsTurnedAwayWhileAWriterWaits(kind: Int32) throws -> Bool? {
        let lock = makeLock(kind)
        let (reader, readerHolds, releaseReader) = try startReader(lock)
        guard readerHolds else { return nil }
        let writerResult = SharedCell<Int32>(-1)
        let writerStarted = Event()
        let writer = try #require(
            spawnVoid {
                writerStarted.signal()
                writerResult.pointer.pointee = cthr_rwlock_timedwrlock(
                    lock.pointer,
                    cthr_clock_deadline_after(generousTimeoutNs)
                )
                if writerResult.pointer.pointee == 0 {
                    _ = cthr_rwlock_unlock(lock.pointer)
                }
            }
        )
        guard writerStarted.wait() else { return nil }
        // Give the writer time to block, then probe with new read requests for a while.
        var turnedAway = false
        let probeEnd = cthr_clock_deadline_after(200_000_000)
        while !turnedAway && cthr_clock_now_ns() < probeEnd {
            let code = cthr_rwlock_tryrdlock(lock.pointer)
            if code == 0 {
                _ = cthr_rwlock_unlock(lock.pointer)
                _ = cthr_sleep_ns(5_000_000)
            } else {
                #expect(code == EBUSY)
                turnedAway = true
            }
        }
        releaseReader.signal()
        #expect(reader.joined())
        #expect(writer.joined())
        #expect(writerResult.pointer.pointee == 0)
        #expect(cthr_rwlock_destroy(lock.pointer) == 0)
        return turnedAway
    }

    @Test func writerPreferringKindBlocksNewReadersWhileAWriterWaits() throws {
        #expect(try newReaderIsTurnedAwayWhileAWriterWaits(kind: writerPreferring) == true)
    }

    @Test func readerPreferringKindLetsNewReadersIn() throws {
        // Over the whole probe window (200 ms, with the writer blocked), every new reader got in.
        #expect(try newReaderIsTurnedAwayWhileAWriterWaits(kind: readerPreferring) == false)
    }

    /// Polls the lock word until every bit of `bits` is set; false after `generousTimeoutNs`.
    private func waitForBits(_ lock: SharedCell<cthr_rwlock_t>, _ bits: UInt64) -> Bool {
        let end = cthr_clock_deadline_after(generousTimeoutNs)
        while cthr_rwlock_load(lock.pointer) & bits != bits {
            if cthr_clock_now_ns() >= end { return false }
            _ = cthr_sleep_ns(100_000)
        }
        return true
    }

    /// Preferring readers, a writer waiting behind central readers asks for the lock (HANDOVER) and goes to sleep
    /// (DRAIN_WAIT); readers still come in meanwhile, and the reader whose unlock brings the count to zero sets BLOCK
    /// for the writer before its unlock returns: the writer gets the first moment no reader holds the lock.
    @Test func theLastReaderOutHandsTheLockToAWaitingWriter() throws {
        let lock = makeLock(readerPreferring)
        let block = UInt64(CTHR_RWLOCK_BLOCK)
        let handover = UInt64(CTHR_RWLOCK_HANDOVER)
        #expect(cthr_rwlock_rdlock(lock.pointer) == 0)
        let releaseWriter = Event()
        let (writer, result, writerIn) = try startWriter(lock, holdUntil: releaseWriter)
        #expect(waitForBits(lock, handover | UInt64(CTHR_RWLOCK_DRAIN_WAIT)))
        // A second reader still gets in (readers are preferred), on another thread.
        let (second, secondIn, secondOut) = try startReader(lock, tryOnly: true)
        #expect(secondIn)
        #expect(cthr_rwlock_unlock(lock.pointer) == 0)  // one reader left: nothing handed over yet
        #expect(cthr_rwlock_load(lock.pointer) & block == 0)
        secondOut.signal()
        #expect(second.joined())  // its unlock has returned: BLOCK is set, by it or by the writer since
        #expect(cthr_rwlock_load(lock.pointer) & block != 0)
        #expect(writerIn.wait())
        #expect(result.pointer.pointee == 0)
        #expect(cthr_rwlock_tryrdlock(lock.pointer) == EBUSY)
        releaseWriter.signal()
        #expect(writer.joined())
        #expect(cthr_rwlock_load(lock.pointer) & (block | handover | UInt64(CTHR_RWLOCK_WRITER)) == 0)
        #expect(cthr_rwlock_destroy(lock.pointer) == 0)
    }

    /// Preferring readers, a writer waiting on a biased lock revokes the bias at once, so new readers come in through
    /// the central count, and never blocks them while a reader that came in through its stripe still holds the lock:
    /// a reader that waits for another thread's read hold cannot be stuck behind the writer.
    @Test func aWaitingWriterNeverBlocksReadersWhileAStripeReaderHolds() throws {
        let lock = makeLock(readerPreferring)
        let biased = UInt64(CTHR_RWLOCK_BIASED)
        let (reader, release) = try startStripeReader(lock)
        #expect(cthr_rwlock_load(lock.pointer) == biased)  // only the stripe holds it
        let (writer, result, _) = try startWriter(lock)
        #expect(waitForBits(lock, UInt64(CTHR_RWLOCK_REBIAS) | UInt64(CTHR_RWLOCK_DRAIN_WAIT)))
        #expect(cthr_rwlock_load(lock.pointer) & biased == 0)  // revoked by the claim
        for _ in 0..<50 {
            #expect(cthr_rwlock_tryrdlock(lock.pointer) == 0)  // central: the count goes to 1 and back to 0
            #expect(cthr_rwlock_unlock(lock.pointer) == 0)
            #expect(cthr_rwlock_load(lock.pointer) & UInt64(CTHR_RWLOCK_BLOCK) == 0)  // the stripe reader holds
        }
        release.signal()
        #expect(reader.joined())
        #expect(writer.joined())
        #expect(result.pointer.pointee == 0)
        #expect(cthr_rwlock_load(lock.pointer) == biased)  // restored by the writer's unlock
        #expect(cthr_rwlock_destroy(lock.pointer) == 0)
    }

    /// Writers that find the write side claimed queue on the lock's `writers` futex lock: one of them holds it and
    /// waits for the claim, the others sleep registered on it (not spinning on the state word); each then gets the
    /// write side in turn, and the queue is left free.
    @Test(arguments: [readerPreferring, writerPreferring])
    func writersThatFindTheClaimTakenQueueOnOneLock(kind: Int32) throws {
        let lock = makeLock(kind)
        #expect(cthr_rwlock_wrlock(lock.pointer) == 0)
        let queued = 4
        let writers = try (0..<queued).map { _ in try startWriter(lock) }
        let offset = try #require(MemoryLayout<cthr_rwlock_t>.offset(of: \.writers))
        let writersLock = (UnsafeMutableRawPointer(lock.pointer) + offset).assumingMemoryBound(to: cthr_lock_t.self)
        // Every queued writer but the holder of `writers` registers as a sleeper there.
        let end = cthr_clock_deadline_after(generousTimeoutNs)
        while cthr_lock_waiter_count(writersLock) != UInt32(queued - 1) && cthr_clock_now_ns() < end {
            _ = cthr_sleep_ns(100_000)
        }
        #expect(cthr_lock_waiter_count(writersLock) == UInt32(queued - 1))
        #expect(cthr_lock_owner(writersLock) != 0)
        #expect(cthr_rwlock_writer(lock.pointer) == cthr_lock_self())  // still this thread's
        #expect(cthr_rwlock_unlock(lock.pointer) == 0)
        for writer in writers {
            #expect(writer.thread.joined())
            #expect(writer.result.pointer.pointee == 0)
        }
        #expect(cthr_lock_load(writersLock) == 0)
        #expect(cthr_lock_waiter_count(writersLock) == 0)
        #expect(cthr_rwlock_load(lock.pointer) == 0)
        #expect(cthr_rwlock_destroy(lock.pointer) == 0)
    }

    /// The spinning halves stop where the wait would sleep and say what they hold: a reader or a writer that finds
    /// the write side held gets EBUSY and holds nothing; a writer that claimed but finds readers gets EINPROGRESS
    /// with the claim (new writers are refused), and `cthr_rwlock_wrlock_drain` then either times out (the claim
    /// released) or, once the readers left, holds the lock. Drain without a claim is EPERM.
    @Test(arguments: [readerPreferring, writerPreferring])
    func spinningHalvesStopBeforeSleepingAndSayWhatTheyHold(kind: Int32) throws {
        let lock = makeLock(kind)
        let me = cthr_lock_self()
        #expect(cthr_rwlock_wrlock_drain(lock.pointer, 0) == EPERM)  // free: no claim

        // Another thread holds the write side: both spins give up, leaving the word as it was.
        let release = Event()
        let writer = try startWriter(lock, holdUntil: release)
        #expect(writer.entered.wait())
        let held = cthr_rwlock_load(lock.pointer)
        #expect(cthr_rwlock_spinrdlock(lock.pointer, UInt64.max) == EBUSY)
        #expect(cthr_rwlock_spinwrlock(lock.pointer, UInt64.max) == EBUSY)
        #expect(cthr_rwlock_wrlock_drain(lock.pointer, 0) == EPERM)  // the claim is another thread's
        #expect(cthr_rwlock_load(lock.pointer) == held)
        // The sleeping halves: a passed deadline is one attempt; a writer that leaves ends the sleep with the hold.
        #expect(cthr_rwlock_rdlock_sleep(lock.pointer, 0) == ETIMEDOUT)
        #expect(cthr_rwlock_wrlock_sleep(lock.pointer, 0) == ETIMEDOUT)
        #expect(cthr_rwlock_load(lock.pointer) == held)
        let releaser = try #require(
            spawnVoid {
                _ = cthr_sleep_ns(2_000_000)
                release.signal()
            }
        )
        #expect(cthr_rwlock_rdlock_sleep(lock.pointer, cthr_clock_deadline_after(generousTimeoutNs)) == 0)
        #expect(cthr_rwlock_read_holds(lock.pointer) == 1)
        #expect(cthr_rwlock_unlock(lock.pointer) == 0)
        #expect(releaser.joined())
        #expect(writer.thread.joined())
        #expect(writer.result.pointer.pointee == 0)
        #expect(cthr_rwlock_wrlock_sleep(lock.pointer, 0) == 0)
        #expect(cthr_rwlock_unlock(lock.pointer) == 0)

        // A reader holds it: the writer's spin claims the write side and stops before sleeping for the reader.
        let reader = try startReader(lock)
        #expect(reader.holds)
        #expect(cthr_rwlock_spinwrlock(lock.pointer, UInt64.max) == EINPROGRESS)
        #expect(cthr_rwlock_writer(lock.pointer) == me)
        #expect(cthr_rwlock_trywrlock(lock.pointer) == EDEADLK)  // the claim is this thread's
        // A passed deadline: the drain gives up and releases the claim.
        #expect(cthr_rwlock_wrlock_drain(lock.pointer, 0) == ETIMEDOUT)
        #expect(cthr_rwlock_writer(lock.pointer) == 0)
        // Claimed again; the reader leaves while the drain sleeps: the write hold is this thread's.
        #expect(cthr_rwlock_spinwrlock(lock.pointer, UInt64.max) == EINPROGRESS)
        let leaver = try #require(
            spawnVoid {
                _ = cthr_sleep_ns(2_000_000)
                reader.release.signal()
            }
        )
        #expect(cthr_rwlock_wrlock_drain(lock.pointer, cthr_clock_deadline_after(generousTimeoutNs)) == 0)
        #expect(cthr_rwlock_holds_write(lock.pointer))
        #expect(leaver.joined())
        #expect(reader.thread.joined())
        #expect(cthr_rwlock_unlock(lock.pointer) == 0)

        // Free: each spin takes its side at once.
        #expect(cthr_rwlock_spinrdlock(lock.pointer, 0) == 0)
        #expect(cthr_rwlock_spinwrlock(lock.pointer, 0) == EDEADLK)  // an upgrade would wait for itself
        #expect(cthr_rwlock_unlock(lock.pointer) == 0)
        #expect(cthr_rwlock_spinwrlock(lock.pointer, 0) == 0)
        #expect(cthr_rwlock_unlock(lock.pointer) == 0)
        #expect(cthr_rwlock_load(lock.pointer) & ~UInt64(CTHR_RWLOCK_BIASED) == 0)
        #expect(cthr_rwlock_destroy(lock.pointer) == 0)
    }

    @Test func badArgumentsReturnEINVAL() {
        let lock = SharedCell(cthr_rwlock_t())
        #expect(cthr_rwlock_init(nil, readerPreferring) == EINVAL)
        #expect(cthr_rwlock_init(lock.pointer, -1) == EINVAL)
        #expect(cthr_rwlock_init(lock.pointer, 2) == EINVAL)
        #expect(cthr_rwlock_destroy(nil) == EINVAL)
        #expect(cthr_rwlock_rdlock(nil) == EINVAL)
        #expect(cthr_rwlock_wrlock(nil) == EINVAL)
        #expect(cthr_rwlock_tryrdlock(nil) == EINVAL)
        #expect(cthr_rwlock_trywrlock(nil) == EINVAL)
        #expect(cthr_rwlock_timedrdlock(nil, 0) == EINVAL)
        #expect(cthr_rwlock_timedwrlock(nil, 0) == EINVAL)
        #expect(cthr_rwlock_spinrdlock(nil, 0) == EINVAL)
        #expect(cthr_rwlock_spinwrlock(nil, 0) == EINVAL)
        #expect(cthr_rwlock_wrlock_drain(nil, 0) == EINVAL)
        #expect(cthr_rwlock_rdlock_sleep(nil, 0) == EINVAL)
        #expect(cthr_rwlock_wrlock_sleep(nil, 0) == EINVAL)
        #expect(cthr_rwlock_unlock(nil) == EINVAL)
    }
}
