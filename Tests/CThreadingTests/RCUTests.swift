// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import CTestSupport
import CThreading
import Glibc
import Synchronization
import Testing

// MARK: - Test support: raw pthreads with deadlines

private final class ThreadBody: Sendable {
    let body: @Sendable () -> Void
    let finished = Flag()
    init(_ body: @escaping @Sendable () -> Void) { self.body = body }
}

/// Starts a raw pthread running `body`; returns its id and the flag it sets when `body` returns.
private func startThread(_ body: @escaping @Sendable () -> Void) -> (thread: pthread_t, finished: Flag) {
    let threadBody = ThreadBody(body)
    let context = Unmanaged.passRetained(threadBody).toOpaque()
    var thread = pthread_t()
    let code = pthread_create(
        &thread,
        nil,
        { raw in
            let threadBody = Unmanaged<ThreadBody>.fromOpaque(raw!).takeRetainedValue()
            threadBody.body()
            threadBody.finished.set()
            return nil
        },
        context
    )
    precondition(code == 0, "pthread_create failed: \(code)")
    return (thread, threadBody.finished)
}

/// Joins a thread, failing the test (and leaving the thread) if it has not finished within `seconds`. Returns
/// whether it finished.
@discardableResult
private func join(_ started: (thread: pthread_t, finished: Flag), within seconds: Double = 20) -> Bool {
    guard waitUntil(within: seconds, { started.finished.isSet }) else { return false }
    pthread_join(started.thread, nil)
    return true
}

/// Waits until `condition` holds, failing the test after `seconds`.
@discardableResult
private func waitUntil(within seconds: Double = 20, _ condition: () -> Bool) -> Bool {
    let deadline = cthr_clock_deadline_after(UInt64(seconds * 1e9))
    while !condition() {
        if cthr_clock_now_ns() > deadline {
            Issue.record("condition not reached within \(seconds) s")
            return false
        }
        _ = cthr_sleep_ns(100_000)
    }
    return true
}

/// Runs `body` on a fresh thread and waits for it: registration state is per thread.
private func onFreshThread(_ body: @escaping @Sendable () -> Void) {
    join(startThread(body))
}

/// Runs a call that waits without a deadline of its own (`cthr_rcu_synchronize`, `cthr_rcu_barrier`) on a fresh
/// thread and joins it within `seconds`, as `synchronizeWaitsForPreexistingReader` does with its writer: a reader
/// leaked by some test then fails this test instead of hanging the suite. Returns the call's result, or nil (an
/// issue is recorded and the thread is left behind) when it did not return in time.
private func withDeadline(within seconds: Double = 20, _ call: @escaping @Sendable () -> Int32) -> Int32? {
    let result = CallResult()
    guard join(startThread { result.store(call()) }, within: seconds) else { return nil }
    return result.load()
}

/// The result of a call made on another thread.
private final class CallResult: Sendable {
    private let storage = Atomic<Int32>(Int32.min)
    func store(_ value: Int32) { storage.store(value, ordering: .sequentiallyConsistent) }
    func load() -> Int32 { storage.load(ordering: .sequentiallyConsistent) }
}

/// A one-way boolean flag shared between threads.
private final class Flag: Sendable {
    private let storage = Atomic<Bool>(false)
    func set(_ value: Bool = true) { storage.store(value, ordering: .sequentiallyConsistent) }
    var isSet: Bool { storage.load(ordering: .sequentiallyConsistent) }
}

/// A heap payload whose memory a reader inspects after a writer unpublished it.
private struct Payload {
    var value: Int
    var alive: Int
}

private let payloadAlive = 0x5AFE
private let payloadPoison = 0xDEAD

/// Shared state of the reader/writer/callback test; the callback poisons and frees the old payload.
private final class SwapState: Sendable {
    let readerHasPointer = Flag()
    let writerSwapped = Flag()
    let readerInside = Flag()
    let callbackRan = Flag()
    let callbackSawReaderInside = Flag()
    let releaseReader = Flag()
}

private final class SyncFlags: Sendable {
    let readerIn = Flag()
    let readerOut = Flag()
    let release = Flag()
    let syncDone = Flag()
    let sawReaderOutWhenDone = Flag()
}

private final class CallbackContext {
    let state: SwapState
    let payload: UnsafeMutablePointer<Payload>
    init(state: SwapState, payload: UnsafeMutablePointer<Payload>) {
        self.state = state
        self.payload = payload
    }
}

// MARK: - Tests

@Suite(.serialized) struct RCUTests {
    @Test func registrationIsPerThreadAndExplicitCallsReportState() {
        onFreshThread {
            #expect(cthr_rcu_is_registered() == 0)
            #expect(cthr_rcu_unregister_thread() == ENOENT)
            #expect(cthr_rcu_register_thread() == 0)
            #expect(cthr_rcu_is_registered() == 1)
            #expect(cthr_rcu_register_thread() == EEXIST)
            #expect(cthr_rcu_unregister_thread() == 0)
            #expect(cthr_rcu_is_registered() == 0)
            #expect(cthr_rcu_ensure_registered() == 0)
            #expect(cthr_rcu_is_registered() == 1)
            #expect(cthr_rcu_unregister_thread() == 0)
        }
    }

    @Test func readLockRegistersAutomaticallyAndNests() {
        onFreshThread {
            #expect(cthr_rcu_is_registered() == 0)
            #expect(cthr_rcu_read_ongoing() == 0)
            cthr_rcu_read_lock()
            #expect(cthr_rcu_is_registered() == 1)
            #expect(cthr_rcu_read_ongoing() == 1)
            cthr_rcu_read_lock()
            cthr_rcu_read_unlock()
            #expect(cthr_rcu_read_ongoing() == 1)
            #expect(cthr_rcu_unregister_thread() == EBUSY)
            cthr_rcu_read_unlock()
            #expect(cthr_rcu_read_ongoing() == 0)
            // Left registered on purpose: the exit hook unregisters it (a dangling reader would hang the next
            // grace period, which the tests below would catch).
        }
        #expect(withDeadline { cthr_rcu_synchronize() } == 0)
    }

    @Test func synchronizeAndBarrierInsideReadSectionReturnEDEADLK() {
        onFreshThread {
            cthr_rcu_read_lock()
            #expect(cthr_rcu_synchronize() == EDEADLK)
            #expect(cthr_rcu_barrier() == EDEADLK)
            cthr_rcu_read_unlock()
            #expect(cthr_rcu_synchronize() == 0)
            #expect(cthr_rcu_barrier() == 0)
        }
    }

    @Test func pointerOperationsReturnDocumentedValues() {
        var a = 1
        var b = 2
        withUnsafeMutablePointer(to: &a) { pa in
            withUnsafeMutablePointer(to: &b) { pb in
                let slot = UnsafeMutablePointer<UnsafeMutableRawPointer?>.allocate(capacity: 1)
                defer { slot.deallocate() }
                slot.initialize(to: nil)
                cthr_rcu_assign_pointer(slot, pa)
                cthr_rcu_read_lock()
                #expect(cthr_rcu_dereference(slot) == UnsafeMutableRawPointer(pa))
                cthr_rcu_read_unlock()
                #expect(cthr_rcu_xchg_pointer(slot, pb) == UnsafeMutableRawPointer(pa))
                // Failing compare-exchange returns the value found and changes nothing.
                #expect(cthr_rcu_cmpxchg_pointer(slot, pa, nil) == UnsafeMutableRawPointer(pb))
                #expect(slot.pointee == UnsafeMutableRawPointer(pb))
                // Succeeding compare-exchange returns the expected value.
                #expect(cthr_rcu_cmpxchg_pointer(slot, pb, pa) == UnsafeMutableRawPointer(pb))
                #expect(slot.pointee == UnsafeMutableRawPointer(pa))
            }
        }
    }

    @Test func callRunsCallbackWithContextAfterGracePeriod() {
        let counter = UnsafeMutablePointer<Int>.allocate(capacity: 1)
        defer { counter.deallocate() }
        counter.initialize(to: 0)
        #expect(cthr_rcu_call(nil, counter) == EINVAL)
        for _ in 0..<3 {
            let code = cthr_rcu_call({ $0!.assumingMemoryBound(to: Int.self).pointee += 1 }, counter)
            #expect(code == 0)
        }
        #expect(withDeadline { cthr_rcu_barrier() } == 0)
        #expect(counter.pointee == 3)
    }

    @Test func barrierInsideCallbackReturnsEDEADLK() {
        let result = UnsafeMutablePointer<Int32>.allocate(capacity: 1)
        defer { result.deallocate() }
        result.initialize(to: -1)
        #expect(cthr_rcu_call({ $0!.assumingMemoryBound(to: Int32.self).pointee = cthr_rcu_barrier() }, result) == 0)
        #expect(withDeadline { cthr_rcu_barrier() } == 0)
        #expect(result.pointee == EDEADLK)
    }

    @Test func forkHooksPauseAndResumeTheWorkers() {
        // Without a fork: the parent-side pair must leave call_rcu fully working.
        let counter = UnsafeMutablePointer<Int>.allocate(capacity: 1)
        defer { counter.deallocate() }
        counter.initialize(to: 0)
        #expect(cthr_rcu_call({ $0!.assumingMemoryBound(to: Int.self).pointee += 1 }, counter) == 0)
        #expect(withDeadline { cthr_rcu_barrier() } == 0)
        cthr_rcu_before_fork()
        cthr_rcu_after_fork_parent()
        #expect(cthr_rcu_call({ $0!.assumingMemoryBound(to: Int.self).pointee += 1 }, counter) == 0)
        #expect(withDeadline { cthr_rcu_barrier() } == 0)
        #expect(counter.pointee == 2)
    }

    /// The answer agrees with the kernel's: liburcu's memb flavour uses membarrier exactly when
    /// MEMBARRIER_CMD_QUERY succeeds and lists MEMBARRIER_CMD_PRIVATE_EXPEDITED (which it then registers for) or,
    /// failing that, MEMBARRIER_CMD_SHARED.
    @Test func membarrierAnswerMatchesTheKernel() {
        let mask = cthr_test_membarrier_query()
        let usable = Int32(CTHR_TEST_MEMBARRIER_CMD_PRIVATE_EXPEDITED | CTHR_TEST_MEMBARRIER_CMD_SHARED)
        let expected: Int32 = mask >= 0 && mask & usable != 0 ? 1 : 0
        #expect(cthr_rcu_uses_membarrier() == expected, "MEMBARRIER_CMD_QUERY answered \(mask)")
    }

    /// This test process never forked after using RCU, so it can run grace periods.
    @Test func writersAreAvailableInThisProcess() {
        #expect(cthr_rcu_writers_available() == 1)
    }

    /// The pointer operations refuse a NULL slot without touching memory: NULL back, nothing stored.
    @Test func pointerOperationsAcceptNullSlots() {
        let value = UnsafeMutableRawPointer(bitPattern: 0x5EED)
        cthr_rcu_read_lock()
        #expect(cthr_rcu_dereference(nil) == nil)
        cthr_rcu_read_unlock()
        cthr_rcu_assign_pointer(nil, value)
        #expect(cthr_rcu_xchg_pointer(nil, value) == nil)
        #expect(cthr_rcu_cmpxchg_pointer(nil, nil, value) == nil)
        #expect(cthr_rcu_cmpxchg_pointer(nil, value, nil) == nil)
    }

    /// The cell functions refuse a NULL cell: EINVAL from the lock calls, NULL from the pointer calls.
    @Test func cellFunctionsAcceptNullCells() {
        cthr_rcu_read_lock()
        #expect(cthr_rcu_cell_get(nil) == nil)
        cthr_rcu_read_unlock()
        #expect(cthr_rcu_cell_exchange(nil, UnsafeMutableRawPointer(bitPattern: 0x5EED)) == nil)
        #expect(cthr_rcu_cell_lock(nil) == EINVAL)
        #expect(cthr_rcu_cell_unlock(nil) == EINVAL)
        #expect(cthr_rcu_cell_destroy(nil) == nil)
    }

    /// A reader holds an old pointer while a writer swaps it: the reader still reads valid memory, and the
    /// call_rcu callback that frees it runs only after the reader leaves its read section.
    @Test func readerKeepsOldPointerValidUntilItLeaves() {
        let state = SwapState()
        let slot = UnsafeMutablePointer<UnsafeMutableRawPointer?>.allocate(capacity: 1)
        defer { slot.deallocate() }
        let first = UnsafeMutablePointer<Payload>.allocate(capacity: 1)
        first.initialize(to: Payload(value: 1, alive: payloadAlive))
        slot.initialize(to: UnsafeMutableRawPointer(first))
        let slotAddress = Int(bitPattern: slot)

        let reader = startThread {
            let slot = UnsafeMutablePointer<UnsafeMutableRawPointer?>(bitPattern: slotAddress)!
            cthr_rcu_read_lock()
            state.readerInside.set()
            let held = cthr_rcu_dereference(slot)!.assumingMemoryBound(to: Payload.self)
            state.readerHasPointer.set()
            waitUntil { state.writerSwapped.isSet }
            // Give the call_rcu worker every chance to run early (it must not).
            waitUntil { state.releaseReader.isSet }
            #expect(held.pointee.alive == payloadAlive)
            #expect(held.pointee.value == 1)
            #expect(!state.callbackRan.isSet)
            state.readerInside.set(false)
            cthr_rcu_read_unlock()
        }

        waitUntil { state.readerHasPointer.isSet }
        let second = UnsafeMutablePointer<Payload>.allocate(capacity: 1)
        second.initialize(to: Payload(value: 2, alive: payloadAlive))
        let old = cthr_rcu_xchg_pointer(slot, second)!.assumingMemoryBound(to: Payload.self)
        #expect(old == first)
        let context = Unmanaged.passRetained(CallbackContext(state: state, payload: old)).toOpaque()
        let code = cthr_rcu_call(
            { raw in
                let context = Unmanaged<CallbackContext>.fromOpaque(raw!).takeRetainedValue()
                context.state.callbackSawReaderInside.set(context.state.readerInside.isSet)
                context.payload.pointee.alive = payloadPoison
                context.payload.deallocate()
                context.state.callbackRan.set()
            },
            context
        )
        #expect(code == 0)
        state.writerSwapped.set()
        // The worker polls every 10 ms; 50 ms is several chances to (wrongly) run the callback early.
        _ = cthr_sleep_ns(50_000_000)
        #expect(!state.callbackRan.isSet)
        state.releaseReader.set()
        join(reader)
        #expect(withDeadline { cthr_rcu_barrier() } == 0)
        #expect(state.callbackRan.isSet)
        #expect(!state.callbackSawReaderInside.isSet)
        slot.pointee!.assumingMemoryBound(to: Payload.self).deallocate()
    }

    /// synchronize() does not return while a reader that started before it is still inside its section.
    @Test func synchronizeWaitsForPreexistingReader() {
        let flags = SyncFlags()
        let reader = startThread {
            cthr_rcu_read_lock()
            flags.readerIn.set()
            waitUntil { flags.release.isSet }
            flags.readerOut.set()
            cthr_rcu_read_unlock()
        }
        waitUntil { flags.readerIn.isSet }
        let writer = startThread {
            #expect(cthr_rcu_synchronize() == 0)
            flags.sawReaderOutWhenDone.set(flags.readerOut.isSet)
            flags.syncDone.set()
        }
        _ = cthr_sleep_ns(30_000_000)
        #expect(!flags.syncDone.isSet)
        flags.release.set()
        join(reader)
        join(writer)
        #expect(flags.syncDone.isSet)
        #expect(flags.sawReaderOutWhenDone.isSet)
    }

    @Test func cellPublishesAndGuardsItsWriterLock() {
        var value = 7
        withUnsafeMutablePointer(to: &value) { pointer in
            #expect(cthr_rcu_cell_create(nil, nil) == EINVAL)
            var cell: OpaquePointer?
            #expect(cthr_rcu_cell_create(nil, &cell) == 0)
            cthr_rcu_read_lock()
            #expect(cthr_rcu_cell_get(cell) == nil)
            cthr_rcu_read_unlock()
            #expect(cthr_rcu_cell_exchange(cell, pointer) == nil)
            cthr_rcu_read_lock()
            #expect(cthr_rcu_cell_get(cell) == UnsafeMutableRawPointer(pointer))
            cthr_rcu_read_unlock()
            #expect(cthr_rcu_cell_unlock(cell) == EPERM)
            #expect(cthr_rcu_cell_lock(cell) == 0)
            #expect(cthr_rcu_cell_lock(cell) == EDEADLK)
            #expect(cthr_rcu_cell_unlock(cell) == 0)
            #expect(cthr_rcu_cell_destroy(cell) == UnsafeMutableRawPointer(pointer))
        }
    }
}

// MARK: - Hash map

/// Entries of the C map tests: a key and a value, stored inline in the table node.
private struct MapEntry {
    var key: Int
    var value: Int
}

private let releasedEntries = Atomic<Int>(0)

private let releasedContexts = Atomic<Int>(0)

/// The map frees inline entries itself: the release callback only counts (and the final NULL call counts contexts).
private let releaseEntry: @convention(c) (UnsafeMutableRawPointer?, UnsafeMutableRawPointer?) -> Void = { entry, _ in
    if entry == nil {
        releasedContexts.add(1, ordering: .relaxed)  // the final call after destroy
    } else {
        releasedEntries.add(1, ordering: .relaxed)
    }
}

private let releaseInlineEntry: @convention(c) (UnsafeMutableRawPointer?, UnsafeMutableRawPointer?) -> Void = {
    entry,
    context in
    // Inline entries are plain MapEntry values: nothing to deinitialize, only count (the map frees the memory).
    let counter = context!.assumingMemoryBound(to: Int.self)
    counter.pointee += entry == nil ? 1_000 : 1
}

/// An unpublished inline entry holding `key` and `value`.
private func makeEntry(_ key: Int, _ value: Int) -> UnsafeMutableRawPointer {
    let entry = cthr_rcu_map_entry_alloc(MemoryLayout<MapEntry>.size)!
    #expect(Int(bitPattern: entry) % 16 == 0)
    entry.initializeMemory(as: MapEntry.self, to: MapEntry(key: key, value: value))
    return entry
}

/// The first entry with `key` among those of `hash` (positioning `iterator` on it), inside the caller's read section.
private func find(
    _ map: OpaquePointer?,
    _ key: Int,
    hash: UInt64,
    _ iterator: inout cthr_rcu_map_iter_t
) -> UnsafeMutableRawPointer? {
    var candidate = cthr_rcu_map_find_hash(map, hash, &iterator)
    while let raw = candidate, raw.assumingMemoryBound(to: MapEntry.self).pointee.key != key {
        candidate = cthr_rcu_map_next_hash(map, &iterator)
    }
    return candidate
}

private func lookup(_ map: OpaquePointer?, _ key: Int, hash: UInt64? = nil) -> Int? {
    cthr_rcu_read_lock()
    defer { cthr_rcu_read_unlock() }
    var iterator = cthr_rcu_map_iter_t()
    return find(map, key, hash: hash ?? UInt64(key), &iterator)?.assumingMemoryBound(to: MapEntry.self).pointee.value
}

/// Adds `key` -> `value` the way a C caller adds a key that must be unique: under the key's writer lock, after a find.
/// Returns 0, or EEXIST (nothing added).
private func addUnique(_ map: OpaquePointer?, _ key: Int, _ value: Int, hash: UInt64? = nil) -> Int32 {
    let hash = hash ?? UInt64(key)
    #expect(cthr_rcu_map_writer_lock(map, hash) == 0)
    defer { #expect(cthr_rcu_map_writer_unlock(map, hash) == 0) }
    if lookup(map, key, hash: hash) != nil { return EEXIST }
    return cthr_rcu_map_add_entry(map, hash, makeEntry(key, value))
}

@Suite(.serialized) struct RCUMapCTests {
    @Test func createRejectsBadArguments() {
        var map: OpaquePointer?
        #expect(cthr_rcu_map_create(0, nil, nil, &map) == EINVAL)
        #expect(cthr_rcu_map_create(0, releaseEntry, nil, nil) == EINVAL)
        #expect(cthr_rcu_map_destroy(nil) == EINVAL)
    }

    /// A capacity beyond what the table can be pre-sized for (2^29 entries) is refused, in particular a negative
    /// Swift `Int`, which C receives as a huge `size_t`.
    @Test func createRejectsAbsurdCapacities() {
        for capacity in [(1 << 29) + 1, -1, -5, Int.min, Int.max] {
            var map: OpaquePointer?
            #expect(cthr_rcu_map_create(capacity, releaseEntry, nil, &map) == EINVAL, "capacity \(capacity)")
            #expect(map == nil)
        }
    }

    /// The read-side functions answer NULL for a NULL map or iterator, and leave the iterator alone.
    @Test func readersAcceptNullArguments() {
        var map: OpaquePointer?
        #expect(cthr_rcu_map_create(0, releaseEntry, nil, &map) == 0)
        defer { _ = cthr_rcu_map_destroy(map) }
        #expect(addUnique(map, 1, 10) == 0)
        let sentinel = UnsafeMutableRawPointer(bitPattern: 0x5EED)
        var iterator = cthr_rcu_map_iter_t(node: sentinel, next: sentinel)
        cthr_rcu_read_lock()
        #expect(cthr_rcu_map_find_hash(nil, 1, &iterator) == nil)
        #expect(cthr_rcu_map_find_hash(map, 1, nil) == nil)  // the entry exists: only the NULL iterator refuses it
        #expect(cthr_rcu_map_next_hash(nil, &iterator) == nil)
        #expect(cthr_rcu_map_next_hash(map, nil) == nil)
        #expect(cthr_rcu_map_first(nil, &iterator) == nil)
        #expect(cthr_rcu_map_first(map, nil) == nil)
        #expect(cthr_rcu_map_next(nil, &iterator) == nil)
        #expect(cthr_rcu_map_next(map, nil) == nil)
        cthr_rcu_read_unlock()
        #expect(iterator.node == sentinel && iterator.next == sentinel)
        #expect(lookup(map, 1) == 10)
    }

    /// Every writer entry point returns EINVAL for a NULL map (and for a NULL iterator, unpositioned iterator or
    /// inline entry where it takes one) and changes nothing; the count of a NULL map is 0.
    @Test func writersRejectNullArguments() {
        var map: OpaquePointer?
        #expect(cthr_rcu_map_create(0, releaseEntry, nil, &map) == 0)
        defer { _ = cthr_rcu_map_destroy(map) }
        let inline = makeEntry(1, 11)  // refused everywhere below, so still ours
        defer { cthr_rcu_map_entry_free(inline) }
        var unpositioned = cthr_rcu_map_iter_t()

        #expect(cthr_rcu_map_add_entry(nil, 1, inline) == EINVAL)
        #expect(cthr_rcu_map_add_entry(map, 1, nil) == EINVAL)
        cthr_rcu_read_lock()
        #expect(cthr_rcu_map_replace_at_entry(nil, &unpositioned, inline) == EINVAL)
        #expect(cthr_rcu_map_replace_at_entry(map, nil, inline) == EINVAL)
        #expect(cthr_rcu_map_replace_at_entry(map, &unpositioned, inline) == EINVAL)
        #expect(cthr_rcu_map_delete_at(nil, &unpositioned) == EINVAL)
        #expect(cthr_rcu_map_delete_at(map, nil) == EINVAL)
        #expect(cthr_rcu_map_delete_at(map, &unpositioned) == EINVAL)
        cthr_rcu_read_unlock()
        #expect(cthr_rcu_map_writer_lock(nil, 1) == EINVAL)
        #expect(cthr_rcu_map_writer_unlock(nil, 1) == EINVAL)
        #expect(cthr_rcu_map_count(nil) == 0)
        #expect(cthr_rcu_map_count(map) == 0)
        #expect(lookup(map, 1) == nil)
    }

    /// Add, replace in place of a found entry, delete at a found entry, count; replaced and deleted entries are
    /// released after a grace period, the rest at destroy, then the context once.
    @Test func addReplaceDeleteCount() {
        #expect(withDeadline { cthr_rcu_barrier() } == 0)
        let releasedBefore = releasedEntries.load(ordering: .relaxed)
        var map: OpaquePointer?
        #expect(cthr_rcu_map_create(16, releaseEntry, nil, &map) == 0)
        #expect(addUnique(map, 1, 10) == 0)
        #expect(addUnique(map, 1, 11) == EEXIST)
        #expect(lookup(map, 1) == 10)
        #expect(cthr_rcu_map_count(map) == 1)

        cthr_rcu_read_lock()
        var iterator = cthr_rcu_map_iter_t()
        #expect(find(map, 1, hash: 1, &iterator) != nil)
        #expect(cthr_rcu_map_replace_at_entry(map, &iterator, makeEntry(1, 12)) == 0)
        cthr_rcu_read_unlock()
        #expect(lookup(map, 1) == 12)
        #expect(addUnique(map, 2, 20) == 0)
        #expect(cthr_rcu_map_count(map) == 2)

        cthr_rcu_read_lock()
        #expect(find(map, 1, hash: 1, &iterator) != nil)
        #expect(cthr_rcu_map_delete_at(map, &iterator) == 0)
        #expect(cthr_rcu_map_delete_at(map, &iterator) == ENOENT)
        cthr_rcu_read_unlock()
        #expect(lookup(map, 1) == nil)
        #expect(lookup(map, 2) == 20)
        #expect(cthr_rcu_map_count(map) == 1)

        // Replaced (1 -> 10) and deleted (1 -> 12) entries are released after a grace period.
        #expect(withDeadline { cthr_rcu_barrier() } == 0)
        #expect(releasedEntries.load(ordering: .relaxed) - releasedBefore == 2)
        let contextsBefore = releasedContexts.load(ordering: .relaxed)
        #expect(cthr_rcu_map_destroy(map) == 0)
        #expect(withDeadline { cthr_rcu_barrier() } == 0)
        #expect(releasedEntries.load(ordering: .relaxed) - releasedBefore == 3)
        #expect(releasedContexts.load(ordering: .relaxed) - contextsBefore == 1)
    }

    @Test func inlineEntriesArePublishedReplacedAndReleased() {
        let released = UnsafeMutablePointer<Int>.allocate(capacity: 1)
        defer { released.deallocate() }
        released.initialize(to: 0)
        var map: OpaquePointer?
        #expect(cthr_rcu_map_create(0, releaseInlineEntry, released, &map) == 0)
        #expect(cthr_rcu_map_add_entry(map, 9, makeEntry(9, 90)) == 0)
        #expect(cthr_rcu_map_add_entry(map, 8, makeEntry(8, 80)) == 0)
        #expect(lookup(map, 9) == 90)
        cthr_rcu_read_lock()
        var iterator = cthr_rcu_map_iter_t()
        #expect(cthr_rcu_map_find_hash(map, 9, &iterator) != nil)
        #expect(cthr_rcu_map_replace_at_entry(map, &iterator, makeEntry(9, 99)) == 0)
        let late = makeEntry(9, 100)
        #expect(cthr_rcu_map_replace_at_entry(map, &iterator, late) == ENOENT)  // already replaced
        cthr_rcu_map_entry_free(late)
        cthr_rcu_read_unlock()
        #expect(lookup(map, 9) == 99)
        #expect(cthr_rcu_map_count(map) == 2)
        #expect(withDeadline { cthr_rcu_barrier() } == 0)
        #expect(released.pointee == 1)
        #expect(cthr_rcu_map_destroy(map) == 0)
        #expect(withDeadline { cthr_rcu_barrier() } == 0)
        #expect(released.pointee == 1_003)  // two entries at destroy, then the context
    }

    @Test func sameHashDifferentKeysAndPositionalWrites() {
        var map: OpaquePointer?
        #expect(cthr_rcu_map_create(0, releaseEntry, nil, &map) == 0)
        defer { _ = cthr_rcu_map_destroy(map) }
        // Three keys forced onto one hash: lookups must tell them apart by key.
        for key in 1...3 {
            #expect(cthr_rcu_map_add_entry(map, 42, makeEntry(key, key * 100)) == 0)
        }
        #expect(lookup(map, 2, hash: 42) == 200)
        #expect(lookup(map, 2) == nil)  // right key, wrong hash

        cthr_rcu_read_lock()
        var iterator = cthr_rcu_map_iter_t()
        var seen: [Int] = []
        var entry = cthr_rcu_map_find_hash(map, 42, &iterator)
        while let raw = entry {
            let key = raw.assumingMemoryBound(to: MapEntry.self).pointee.key
            seen.append(key)
            if key == 2 {
                #expect(cthr_rcu_map_replace_at_entry(map, &iterator, makeEntry(2, 222)) == 0)
            }
            entry = cthr_rcu_map_next_hash(map, &iterator)
        }
        cthr_rcu_read_unlock()
        #expect(seen.sorted() == [1, 2, 3])
        #expect(lookup(map, 2, hash: 42) == 222)

        cthr_rcu_read_lock()
        #expect(find(map, 3, hash: 42, &iterator) != nil)
        #expect(cthr_rcu_map_delete_at(map, &iterator) == 0)
        #expect(cthr_rcu_map_delete_at(map, &iterator) == ENOENT)
        cthr_rcu_read_unlock()
        #expect(lookup(map, 3, hash: 42) == nil)
        #expect(cthr_rcu_map_count(map) == 2)
    }

    /// Keyed entries are found by their bytes: among entries of one hash only the one with exactly those bytes (not a
    /// prefix, not the empty key), and a miss says whether another key of that hash could still be equal.
    @Test func keyedEntriesAreFoundByTheirBytes() {
        var map: OpaquePointer?
        #expect(cthr_rcu_map_create(0, releaseEntry, nil, &map) == 0)
        defer { _ = cthr_rcu_map_destroy(map) }
        let keys: [[UInt8]] = [Array("/static/a".utf8), Array("/static/ab".utf8), [], Array("/static/b".utf8)]
        for (index, key) in keys.enumerated() {
            let entry = key.withUnsafeBytes {
                cthr_rcu_map_entry_alloc_keyed(MemoryLayout<MapEntry>.size, $0.baseAddress, $0.count)
            }!
            #expect(Int(bitPattern: entry) % 16 == 0)
            entry.initializeMemory(as: MapEntry.self, to: MapEntry(key: index, value: index * 10))
            #expect(cthr_rcu_map_add_entry(map, 7, entry) == 0)  // every key on one hash
        }
        /// The value found for `bytes` under `hash`, and the ambiguity the lookup reported.
        func findBytes(_ bytes: [UInt8], hash: UInt64 = 7) -> (value: Int?, ambiguous: CInt) {
            cthr_rcu_read_lock()
            defer { cthr_rcu_read_unlock() }
            var iterator = cthr_rcu_map_iter_t()
            var ambiguous: CInt = -1
            let entry = bytes.withUnsafeBytes {
                cthr_rcu_map_find_bytes(map, hash, $0.baseAddress, $0.count, &iterator, &ambiguous)
            }
            #expect(iterator.node != nil || entry == nil)
            return (entry?.assumingMemoryBound(to: MapEntry.self).pointee.value, ambiguous)
        }
        for (index, key) in keys.enumerated() {
            let found = findBytes(key)
            #expect(found.value == index * 10 && found.ambiguous == 0, "key \(index)")
        }
        // Other bytes on a hash that has entries: not found, and maybe an equal key with other bytes.
        for other in [Array("/static/".utf8), Array("/static/abc".utf8), Array("/static/c".utf8)] {
            let found = findBytes(other)
            #expect(found.value == nil && found.ambiguous == 1)
        }
        // A hash nobody has: definitely absent.
        let absent = findBytes(keys[0], hash: 8)
        #expect(absent.value == nil && absent.ambiguous == 0)
        // An entry without key bytes makes every miss on its hash ambiguous, and is never matched by bytes.
        #expect(cthr_rcu_map_add_entry(map, 9, makeEntry(99, 990)) == 0)
        let unkeyed = findBytes([], hash: 9)
        #expect(unkeyed.value == nil && unkeyed.ambiguous == 1)

        // The iterator of a byte lookup positions the positional writes.
        cthr_rcu_read_lock()
        var iterator = cthr_rcu_map_iter_t()
        var ambiguous: CInt = -1
        let key = keys[1]
        let entry = key.withUnsafeBytes {
            cthr_rcu_map_find_bytes(map, 7, $0.baseAddress, $0.count, &iterator, &ambiguous)
        }
        #expect(entry != nil)
        #expect(cthr_rcu_map_delete_at(map, &iterator) == 0)
        cthr_rcu_read_unlock()
        #expect(findBytes(key).value == nil)
        #expect(findBytes(keys[0]).value == 0)
        #expect(cthr_rcu_map_count(map) == 4)
    }

    /// NULL arguments: no entry, and a miss the caller must not trust (ambiguous), or no allocation.
    @Test func byteLookupsRefuseNullArguments() {
        var map: OpaquePointer?
        #expect(cthr_rcu_map_create(0, releaseEntry, nil, &map) == 0)
        defer { _ = cthr_rcu_map_destroy(map) }
        #expect(cthr_rcu_map_entry_alloc_keyed(16, nil, 1) == nil)
        let empty = cthr_rcu_map_entry_alloc_keyed(MemoryLayout<MapEntry>.size, nil, 0)
        #expect(empty != nil)
        cthr_rcu_map_entry_free(empty)
        let bytes: [UInt8] = Array("key".utf8)
        var iterator = cthr_rcu_map_iter_t()
        var ambiguous: CInt = 0
        cthr_rcu_read_lock()
        bytes.withUnsafeBytes { bytes in
            #expect(cthr_rcu_map_find_bytes(nil, 1, bytes.baseAddress, 3, &iterator, &ambiguous) == nil)
            #expect(ambiguous == 1)
            ambiguous = 0
            #expect(cthr_rcu_map_find_bytes(map, 1, bytes.baseAddress, 3, nil, &ambiguous) == nil)
            #expect(ambiguous == 1)
            #expect(cthr_rcu_map_find_bytes(map, 1, bytes.baseAddress, 3, &iterator, nil) == nil)
            ambiguous = 0
            #expect(cthr_rcu_map_find_bytes(map, 1, nil, 3, &iterator, &ambiguous) == nil)
            #expect(ambiguous == 1)
            #expect(cthr_rcu_map_find_ascii(map, bytes.baseAddress, 3, 1, &iterator, nil) == nil)
            var outcome: CInt = -1
            #expect(cthr_rcu_map_find_ascii(nil, bytes.baseAddress, 3, 1, &iterator, &outcome) == nil)
            #expect(outcome == CTHR_RCU_MAP_AMBIGUOUS)
        }
        cthr_rcu_read_unlock()
    }

    /// The ASCII lookup hashes as `cthr_rcu_hash_ascii` does and finds the keyed entry; a non-ASCII key is left to
    /// the caller untouched.
    @Test func asciiLookupHashesAndFinds() {
        var map: OpaquePointer?
        #expect(cthr_rcu_map_create(0, releaseEntry, nil, &map) == 0)
        defer { _ = cthr_rcu_map_destroy(map) }
        let seed: UInt64 = 0x1234_5678_9ABC_DEF1
        let key = Array("/api/v2/users/42/profile".utf8)
        let hash = key.withUnsafeBytes { cthr_rcu_hash_bytes($0.baseAddress, $0.count, seed) }
        let entry = key.withUnsafeBytes {
            cthr_rcu_map_entry_alloc_keyed(MemoryLayout<MapEntry>.size, $0.baseAddress, $0.count)
        }!
        entry.initializeMemory(as: MapEntry.self, to: MapEntry(key: 1, value: 42))
        #expect(cthr_rcu_map_add_entry(map, hash, entry) == 0)
        /// The value `cthr_rcu_map_find_ascii` finds for `bytes`, and its outcome.
        func findASCII(_ bytes: [UInt8], seed: UInt64 = seed) -> (value: Int?, outcome: CInt) {
            cthr_rcu_read_lock()
            defer { cthr_rcu_read_unlock() }
            var iterator = cthr_rcu_map_iter_t()
            var outcome: CInt = -1
            let found = bytes.withUnsafeBytes {
                cthr_rcu_map_find_ascii(map, $0.baseAddress, $0.count, seed, &iterator, &outcome)
            }
            return (found?.assumingMemoryBound(to: MapEntry.self).pointee.value, outcome)
        }
        let found = findASCII(key)
        #expect(found.value == 42 && found.outcome == CTHR_RCU_MAP_DECIDED)
        let otherSeed = findASCII(key, seed: seed ^ 1)
        #expect(otherSeed.value == nil && otherSeed.outcome == CTHR_RCU_MAP_DECIDED)
        let missing = findASCII(Array("/api/v2/users/43/profile".utf8))
        #expect(missing.value == nil && missing.outcome == CTHR_RCU_MAP_DECIDED)
        let nonASCII = findASCII(Array("/caf\u{E9}".utf8))
        #expect(nonASCII.value == nil && nonASCII.outcome == CTHR_RCU_MAP_NOT_ASCII)
    }

    @Test func iterationVisitsEveryEntryOnce() {
        var map: OpaquePointer?
        #expect(cthr_rcu_map_create(0, releaseEntry, nil, &map) == 0)
        defer { _ = cthr_rcu_map_destroy(map) }
        for key in 0..<500 {
            // The table resizes as it grows.
            #expect(addUnique(map, key, -key) == 0)
        }
        #expect(cthr_rcu_map_count(map) == 500)
        cthr_rcu_read_lock()
        var iterator = cthr_rcu_map_iter_t()
        var keys: [Int] = []
        var entry = cthr_rcu_map_first(map, &iterator)
        while let raw = entry {
            let e = raw.assumingMemoryBound(to: MapEntry.self).pointee
            #expect(e.value == -e.key)
            keys.append(e.key)
            entry = cthr_rcu_map_next(map, &iterator)
        }
        cthr_rcu_read_unlock()
        #expect(keys.sorted() == Array(0..<500))
    }

    /// The writer locks are the library's futex lock: a second lock by the holder is EDEADLK, an unlock by a thread
    /// that does not hold it EPERM, and keys on other stripes stay free.
    @Test func writerLocksAreStripedAndErrorChecked() {
        var map: OpaquePointer?
        #expect(cthr_rcu_map_create(0, releaseEntry, nil, &map) == 0)
        defer { _ = cthr_rcu_map_destroy(map) }
        #expect(cthr_rcu_map_writer_unlock(map, 5) == EPERM)
        #expect(cthr_rcu_map_writer_lock(map, 5) == 0)
        #expect(cthr_rcu_map_writer_lock(map, 5) == EDEADLK)
        #expect(cthr_rcu_map_writer_lock(map, 6) == 0)  // another stripe
        #expect(cthr_rcu_map_writer_unlock(map, 6) == 0)
        let mapAddress = UInt(bitPattern: map)
        let other = startThread {
            #expect(cthr_rcu_map_writer_unlock(OpaquePointer(bitPattern: mapAddress), 5) == EPERM)
        }
        #expect(join(other))
        #expect(cthr_rcu_map_writer_unlock(map, 5) == 0)
    }
}
