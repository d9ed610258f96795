// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import CThreading
import Synchronization

/// The runtime's per-thread record: the one thread-specific slot of the library (one pthread TSD key,
/// `cthr_tsd_*`), owned by the substrate.
///
/// It holds what every layer may ask of a thread: its wait record (what it is blocked in, for snapshots), whether it
/// is the main thread, whether the runtime started it, its blocking observer (``BlockingHook``), and one slot that
/// the layers above the substrate fill with their part (``ThreadRecordSlot``: the queue frames, the `sync` parker,
/// the running units and the pool worker of the thread), as Tokio's runtime context keeps the scheduler's part in a
/// scoped slot it does not know the type of. A thread that never used the library has no record.
///
/// Heap-allocated and only touched by its own thread, so it is accessed through a pointer without exclusivity
/// checks.
struct ThreadRecord: ~Copyable {
    /// The thread's wait record (what it is blocked in, for snapshots), registered while the thread lives.
    let waitRecord: ThreadWaitRecord
    /// Whether this is the process's main thread (or the thread tests designated as such).
    var isMainThread: Bool
    /// Whether the thread is inside ``RuntimeSnapshot/capture()``: a capture that finds it set was entered again on
    /// this thread, from a signal handler that interrupted the first, and traps instead of deadlocking.
    var isCapturingSnapshot = false
    /// Whether the runtime started this thread (a pool's worker or monitor, the watchdog, the timer, dump and
    /// event-delivery threads): its reports are handed off to the observer's thread (``RuntimeEventDelivery``).
    var isRuntimeThread = false
    /// What the thread's blocking waits report to (``BlockingHook``), not retained: whoever installs it keeps it
    /// alive while it is installed.
    var blockingObserver: Unmanaged<BlockingObserver>?
    /// The upper layers' part of the record, once they used the thread (nil before).
    var upper: ThreadRecordSlot?
}

/// The part of a thread's record that the layers above the substrate own: a pointer to their state and what the
/// substrate may ask of it, filled on the thread's first use of a queue or pool.
struct ThreadRecordSlot {
    /// The upper layers' state (``ThreadState`` of the pools, opaque here).
    let part: UnsafeMutableRawPointer
    /// The queues the thread holds exclusively now, for the wait it is about to record (called on the thread).
    let heldQueues: (UnsafeMutableRawPointer) -> HeldQueues
    /// Frees `part` at thread exit.
    let release: (UnsafeMutableRawPointer) -> Void
}

/// A thread's record (``ThreadRecord``).
typealias RuntimeThreadRecord = UnsafeMutablePointer<ThreadRecord>

/// The calling thread's record, and what the runtime knows of threads.
enum RuntimeThread {
    /// The TSD key; its destructor frees a thread's record (the upper part first) at thread exit.
    static let key: pthread_key_t = {
        var key = pthread_key_t()
        let code = cthr_tsd_create(&key) { raw in
            let record = raw.assumingMemoryBound(to: ThreadRecord.self)
            if let upper = record.pointee.upper { upper.release(upper.part) }
            ThreadRegistry.unregister(record.pointee.waitRecord)
            record.deinitialize(count: 1)
            record.deallocate()
        }
        require(code == 0, "cthr_tsd_create failed for the thread records: \(code)")
        return key
    }()

    /// The calling thread's record, created (and the thread registered for snapshots) on first use.
    @inline(__always)
    static var current: RuntimeThreadRecord {
        if let raw = cthr_tsd_get(key) {
            return raw.assumingMemoryBound(to: ThreadRecord.self)
        }
        return makeCurrent()
    }

    /// The calling thread's record if it has one; never makes one.
    @inline(__always)
    static var existing: RuntimeThreadRecord? {
        cthr_tsd_get(key)?.assumingMemoryBound(to: ThreadRecord.self)
    }

    @inline(never)
    private static func makeCurrent() -> RuntimeThreadRecord {
        let record = RuntimeThreadRecord.allocate(capacity: 1)
        record.initialize(to: ThreadRecord(waitRecord: ThreadRegistry.registerCurrent(), isMainThread: isMainThread))
        let code = cthr_tsd_set(key, record)
        require(code == 0, "cthr_tsd_set failed for the thread records: \(code)")
        return record
    }

    /// Kernel thread id of a thread tests treat as the main thread (0 = none). Swift Testing parks the real main
    /// thread in `dispatch_main`, so main-queue tests designate a thread of their own; see `designateMainForTesting`.
    static let testMainThreadID = Atomic<Int32>(0)

    /// Whether the calling thread is the main thread (or the designated test main thread).
    static var isMainThread: Bool {
        cthr_thread_is_main() || testMainThreadID.load(ordering: .relaxed) == cthr_thread_id()
    }

    /// Test hook: makes the calling thread count as the main thread for the runtime until `undesignate...`.
    static func designateMainForTesting() {
        testMainThreadID.store(cthr_thread_id(), ordering: .relaxed)
        current.pointee.isMainThread = true
    }

    /// Test hook: ends `designateMainForTesting()` on the calling thread.
    static func undesignateMainForTesting() {
        testMainThreadID.store(0, ordering: .relaxed)
        current.pointee.isMainThread = cthr_thread_is_main()
    }

    /// A readable name for the calling thread: its name (if any) and kernel thread id.
    static func describeCurrent() -> String {
        var buffer = [CChar](repeating: 0, count: Int(CTHR_THREAD_NAME_MAX) + 1)
        let code = buffer.withUnsafeMutableBufferPointer { cthr_thread_get_name($0.baseAddress, $0.count) }
        let name =
            code == 0 ? String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self) : ""
        let main = isMainThread ? ", main thread" : ""
        return "'\(name)' (tid \(cthr_thread_id())\(main))"
    }
}
