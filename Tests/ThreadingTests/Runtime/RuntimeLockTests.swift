// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import CThreading
import Synchronization
import Testing

@testable import Threading

/// The runtime's own lock (`RuntimeLock`): its three ways of placing the lock's word (in its own allocation, with a
/// companion futex word beside it, or in the owner's memory), each excluding other threads and leaving the other
/// words alone. Its misuse traps are `cthr_lock`'s, tested with the C layer; its use inside the pool is tested by
/// every queue suite.
@Suite struct RuntimeLockTests {
    /// `threads` threads add to a plain counter under `lock`: the total is exact only if the lock excluded them.
    private func exclusionHolds(_ lock: RuntimeLock, threads: Int = 4, rounds: Int = 20_000) throws -> Bool {
        nonisolated(unsafe) var counter = 0
        let workers = try (0..<threads).map { _ in
            try PosixThread { for _ in 0..<rounds { lock.withLock { counter += 1 } } }
        }
        for worker in workers where worker.join(timeout: .seconds(60)) == nil { return false }
        return lock.withLock { counter } == threads * rounds
    }

    @Test func aLockInItsOwnAllocationExcludesOtherThreads() throws {
        let lock = RuntimeLock.make()
        #expect(!lock.isHeldByCurrentThread)
        lock.lock()
        #expect(lock.isHeldByCurrentThread)
        lock.unlock()
        #expect(!lock.isHeldByCurrentThread)
        #expect(lock.companionWord == nil)
        #expect(try exclusionHolds(lock))
    }

    /// The companion word starts at the value given, is not the lock's word (locking leaves it as it is, and a value
    /// stored in it leaves the lock free), and lives as long as the lock.
    @Test(arguments: [UInt32(0), 0xFFFF_FFFF])
    func aCompanionWordLiesBesideTheLockWithoutTouchingIt(initial: UInt32) throws {
        let lock = RuntimeLock.make(companionWord: initial)
        let companion = try #require(lock.companionWord)
        #expect(companion.pointee.load(ordering: .relaxed) == initial)
        lock.lock()
        #expect(companion.pointee.load(ordering: .relaxed) == initial)
        lock.unlock()
        companion.pointee.store(~initial, ordering: .relaxed)
        #expect(!lock.isHeldByCurrentThread)
        #expect(try exclusionHolds(lock))
        #expect(companion.pointee.load(ordering: .relaxed) == ~initial)
    }

    /// A lock made at a word of its owner's memory uses that word: the owner sees it taken while the lock is held.
    @Test func aLockMadeAtItsOwnersWordUsesThatWord() throws {
        let word = UnsafeMutablePointer<cthr_lock_t>.allocate(capacity: 1)
        word.initialize(to: cthr_lock_t())
        defer {
            word.deinitialize(count: 1)
            word.deallocate()
        }
        let lock = RuntimeLock.make(at: word)
        #expect(lock.companionWord == nil)
        lock.lock()
        #expect(cthr_lock_held_by_caller(word))
        lock.unlock()
        #expect(!cthr_lock_held_by_caller(word))
        #expect(try exclusionHolds(lock))
    }

    /// A copy of the value is the same lock.
    @Test func aCopyIsTheSameLock() {
        let lock = RuntimeLock.make()
        let copy = lock
        lock.lock()
        #expect(copy.isHeldByCurrentThread)
        copy.unlock()
        #expect(!lock.isHeldByCurrentThread)
    }
}
