// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import CThreading

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Allocates the memory of a lock's state (its word, and what travels with it) on whole cache lines of its own:
/// 64-byte aligned and rounded up to 64 bytes, so no unrelated data shares the line every contender writes (a
/// neighbour written elsewhere would otherwise cost the lock a line transfer, and the lock the neighbour one).
/// Release it with `UnsafeMutableRawPointer.deallocate()`.
func allocateLockState(byteCount: Int, alignment: Int) -> UnsafeMutableRawPointer {
    let line = 64
    return .allocate(byteCount: (max(byteCount, 1) + line - 1) / line * line, alignment: max(alignment, line))
}

/// Allocates and initializes one `State` (a C lock struct) with ``allocateLockState(byteCount:alignment:)``.
func allocateLockState<State>(_ initial: State) -> UnsafeMutablePointer<State> {
    allocateLockState(byteCount: MemoryLayout<State>.size, alignment: MemoryLayout<State>.alignment)
        .initializeMemory(as: State.self, repeating: initial, count: 1)
}

/// The slow-path plumbing that every lock type shares: its description in diagnostics, the misuse traps whose
/// messages are the same for every lock, and counting an acquisition while statistics are on.
///
/// Only slow paths and diagnostics go through it; the inlined fast paths of the locks never do.
protocol DiagnosedLock: AnyObject {
    /// The type's name in diagnostics ("MutexLock").
    static var typeName: String { get }
    /// The lock's name in diagnostics, if any.
    var name: String? { get }
    /// The lock's contention counters.
    var recorder: LockStatisticsRecorder { get }
}

extension DiagnosedLock {
    /// The lock for diagnostics: its type and name, or its address when unnamed.
    func describe() -> String { lockDescription(Self.typeName, name, self) }

    /// Acquires with `attempt` (a trylock: 0 or EBUSY) and, when busy, `wait`, counting the acquisition when
    /// statistics are on; only `wait` runs when they are off. Returns the code of the call that decided.
    func acquireCounting(attempt: () -> CInt, wait: () -> CInt) -> CInt {
        recorder.isEnabled ? recorder.acquire(attempt: attempt, wait: wait) : wait()
    }

    /// Whether a trylock that returned `code` acquired the lock, counting the acquisition when statistics are on.
    func tryAcquireCounting(_ code: CInt) -> Bool {
        guard code == 0 else { return false }
        if recorder.isEnabled { recorder.recordUncontended() }
        return true
    }

    /// Traps unless `owner` (the holder's thread id, 0 when free) is 0: for `deinit`.
    func requireFreeAtDeinit(owner: UInt32) {
        require(owner == 0, "\(describe()): deinitialized while held by thread \(owner)")
    }

    /// Traps unless `code`, the result of taking the lock to change the statistics setting, is 0.
    func requireStatisticsToggle(_ code: CInt, _ step: StaticString = "locking") {
        require(code == 0, "\(describe()): statisticsEnabled: \(step) failed with \(errnoName(code))")
    }

    /// Traps for `operation` by a thread that does not hold the lock; `owner` is the holder (0: free).
    func failNotHeld(_ operation: StaticString, owner: UInt32) -> Never {
        let holder = owner == 0 ? "it is not locked" : "it is held by thread \(owner)"
        threadingFatal("\(describe()): \(operation) on thread \(currentThreadID), which does not hold it (\(holder))")
    }

    /// Traps for `operation` by the thread that already holds the lock; `consequence` says why (in parentheses).
    func failHeldByCaller(_ operation: StaticString, _ consequence: String) -> Never {
        threadingFatal(
            "\(describe()): \(operation) on thread \(currentThreadID), which already holds it (\(consequence))"
        )
    }

    /// Traps for `operation` failing with the unexpected error `code`.
    func failUnexpected(_ operation: StaticString, _ code: CInt) -> Never {
        threadingFatal("\(describe()): \(operation) failed with \(errnoName(code))")
    }
}

extension DiagnosedLock where Self: WaitTarget {
    /// The contended acquisition of the futex lock `lock` (the one under ``MutexLock`` and ``RecursiveLock``), until
    /// `deadline`: spins first, unrecorded (the wait record, the read-section and main-thread checks cost a
    /// thread-local load, a clock read and the registry's lock), and records the wait only for a thread about to
    /// sleep. Returns `cthr_lock_lock_slow`'s codes.
    func waitForFutexLock(_ lock: UnsafeMutablePointer<cthr_lock_t>, deadline: UInt64) -> CInt {
        let spun = cthr_lock_lock_spin(lock, deadline)
        if spun != EBUSY { return spun }
        return WaitRecording.recordingCycleChecked(.lock, on: self, owner: cthr_lock_owner(lock), deadline: deadline) {
            cthr_lock_lock_sleep(lock, $0)
        }
    }
}
