// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import CThreading
import Testing

@testable import Threading

/// A non-`Sendable` class, to show a thread can hand one back through `join()` (`sending`).
final class Parcel {
    var contents: [String]
    init(_ contents: [String]) { self.contents = contents }
}

@Suite("Threads", .serialized)
struct ThreadTests {
    @Test("exit values: two threads return their strings through join")
    func exitValues() throws {
        let first = try PosixThread { "Hello first!" }
        let second = try PosixThread { "Hello second!" }
        #expect(first.join() == "Hello first!")
        #expect(second.join() == "Hello second!")
        let parcel = try PosixThread { Parcel(["made on another thread"]) }
        #expect(parcel.join().contents == ["made on another thread"])
    }

    @Test("name, id, main-thread check and stack size of a spawned thread")
    func identity() throws {
        let mainID = PosixThread.currentID
        let info = try PosixThread(name: "worker-thread-with-long-name", stackSize: 1 << 20) {
            () -> (String?, Int32, Bool, Int) in
            (
                PosixThread.currentName, PosixThread.currentID, PosixThread.isMainThread,
                (try? PosixThread.currentStackSize()) ?? -1
            )
        }
        let (name, id, isMain, stack) = info.join()
        #expect(name == "worker-thread-w")  // Linux keeps 15 bytes
        #expect(id != mainID)
        #expect(id > 0)
        #expect(!isMain)
        #expect(stack >= 1 << 20)
        let renamed = try PosixThread { () -> String? in
            PosixThread.currentName = "renamed"
            return PosixThread.currentName
        }
        #expect(renamed.join() == "renamed")
        let tiny = try PosixThread(stackSize: 1) { (try? PosixThread.currentStackSize()) ?? -1 }
        #expect(tiny.join() >= PosixThread.minimumStackSize)
    }

    @Test("creation failures throw: a negative stack size, a stack the system cannot map")
    func creationFailures() {
        #expect(throws: ThreadingError.invalidArgument) { try PosixThread(stackSize: -1) {} }
        #expect(throws: ThreadingError.self) { try PosixThread(stackSize: Int.max / 2) {} }
    }

    @Test("a detached thread runs to completion; a dropped handle detaches")
    func detach() throws {
        let done = Semaphore()
        let thread = try PosixThread { done.signal() }
        thread.detach()
        #expect(done.wait(timeout: testDeadline))
        do {
            _ = try PosixThread { done.signal() }
        }
        #expect(done.wait(timeout: testDeadline))
    }

    @Test("a joined thread keeps nothing its body captured alive, though its handle lives on")
    func joinReleasesWhatTheBodyCaptured() throws {
        let counter = LiveCounter()
        let weak = WeakBox<Tracked>()
        var captured: Tracked? = Tracked(counter, id: 1)
        weak.object = captured
        let thread = try PosixThread { [captured] in captured!.id }
        captured = nil
        #expect(thread.join() == 1)
        // The handle is still alive here; what the body captured is not.
        #expect(weak.object == nil)
        #expect(counter.live.value == 0)
        withExtendedLifetime(thread) {}
    }

    @Test("a detached thread releases what its body captured, and its result, when it finishes")
    func detachReleasesTheBodyAndTheResult() throws {
        let released = Semaphore()
        let go = Semaphore()
        // Detached while the body still runs: the thread releases both when it finishes.
        var captured: ReleaseProbe? = ReleaseProbe(released)
        let early = try PosixThread { [captured] () -> ReleaseProbe in
            _ = go.wait(timeout: testDeadline)
            withExtendedLifetime(captured) {}
            return ReleaseProbe(released)
        }
        captured = nil
        early.detach()
        go.signal()
        #expect(released.wait(timeout: testDeadline))
        #expect(released.wait(timeout: testDeadline))
        // Detached once the body (most likely) returned: `detach()` or the thread, whichever is second, releases.
        let finished = Semaphore()
        captured = ReleaseProbe(released)
        let late = try PosixThread { [captured] () -> ReleaseProbe in
            withExtendedLifetime(captured) {}
            finished.signal()
            return ReleaseProbe(released)
        }
        captured = nil
        #expect(finished.wait(timeout: testDeadline))
        late.detach()
        #expect(released.wait(timeout: testDeadline))
        #expect(released.wait(timeout: testDeadline))
        // Both handles are still alive here.
        withExtendedLifetime((early, late)) {}
    }

    @Test("join(timeout:), as libuv, NIO and Foundation users wait: nil while the thread runs, joinable afterwards")
    func joinWithTimeout() throws {
        let go = Semaphore()
        let worker = try PosixThread(name: "slow") { () -> String in
            _ = go.wait(timeout: testDeadline)
            return "done"
        }
        #expect(worker.join(timeout: .milliseconds(20)) == nil)
        #expect(worker.join(timeout: .zero) == nil)
        #expect(worker.join(timeout: .seconds(-1)) == nil)
        go.signal()
        #expect(worker.join(timeout: testDeadline) == "done")

        // After a timeout, a plain join() still gets the result ...
        let second = try PosixThread { () -> Int in
            _ = go.wait(timeout: testDeadline)
            return 7
        }
        #expect(second.join(timeout: .zero) == nil)
        go.signal()
        #expect(second.join() == 7)
        // ... and detach() still lets the thread go.
        let third = try PosixThread { go.wait(timeout: testDeadline) }
        #expect(third.join(timeout: .milliseconds(1)) == nil)
        third.detach()
        go.signal()
        // A body that returns nil is not a timeout.
        let optional = try PosixThread { () -> Int? in nil }
        let joined = optional.join(timeout: testDeadline)
        #expect(joined != nil)
        #expect(joined! == nil)
    }

    @Test("sleep and yield")
    func sleepAndYield() {
        let start = ContinuousClock.now
        PosixThread.sleep(for: .milliseconds(10))
        #expect(ContinuousClock.now - start >= .milliseconds(10))
        PosixThread.sleep(for: .seconds(-1))
        PosixThread.yield()
    }

    @Test("the TSD demo: each thread sees and scales only its own value")
    func threadSpecificDemo() throws {
        let slot = try ThreadLocal { 0 }
        let threads = try [1, 2].map { start in
            try PosixThread { () -> (Int, Int) in
                slot.value = start
                let before = slot.value
                slot.withValue { $0 *= 100 }
                return (before, slot.value)
            }
        }
        var results: [(Int, Int)] = []
        for thread in threads { results.append(thread.join()) }
        #expect(results.map(\.0) == [1, 2])
        #expect(results.map(\.1) == [100, 200])
        #expect(slot.value == 0)  // this thread's own default
    }

    @Test("ThreadLocal releases a value when its thread exits")
    func releasedAtExit() throws {
        let local = try ThreadLocal<Tracked?> { nil }
        let weak = WeakBox<Tracked>()
        let counter = LiveCounter()
        let thread = try PosixThread {
            let object = Tracked(counter, id: 1)
            weak.object = object
            local.value = object
        }
        thread.join()
        #expect(weak.object == nil)
        #expect(counter.live.value == 0)
    }

    @Test("ThreadLocal releases the old value when it is replaced, and the default is lazy")
    func releasedOnReplace() throws {
        let counter = LiveCounter()
        let made = LockedValue(0)
        let local = try ThreadLocal { () -> Tracked in
            made.withLock { $0 += 1 }
            return Tracked(counter, id: 0)
        }
        let weak = WeakBox<Tracked>()
        #expect(!local.hasValue)
        #expect(made.withLock { $0 } == 0)
        weak.object = local.value
        #expect(made.withLock { $0 } == 1)
        #expect(weak.object != nil)
        local.value = Tracked(counter, id: 2)
        #expect(weak.object == nil)
        #expect(local.value.id == 2)
        weak.object = local.value
        local.removeValue()
        #expect(weak.object == nil)
        #expect(!local.hasValue)
        #expect(local.value.id == 0)
        #expect(made.withLock { $0 } == 2)
    }

    @Test("ThreadLocal's unset state, as pthread_getspecific's NULL: asking never creates the default")
    func unsetState() throws {
        let made = LockedValue(0)
        let local = try ThreadLocal { () -> Int in
            made.withLock { $0 += 1 }
            return 42
        }
        // "Has this thread set it?" on a fresh thread: no, and asking twice does not change the answer.
        let fresh = try PosixThread { () -> (Bool, Int?, Bool, Int?) in
            (local.hasValue, local.valueIfSet, local.hasValue, local.valueIfSet)
        }
        let answers = fresh.join()
        #expect(answers.0 == false && answers.1 == nil && answers.2 == false && answers.3 == nil)
        #expect(made.withLock { $0 } == 0)
        // Set on this thread: the value, without the default maker.
        local.value = 7
        #expect(local.valueIfSet == 7)
        #expect(local.hasValue)
        #expect(made.withLock { $0 } == 0)
        // Other threads are still unset.
        let other = try PosixThread { local.valueIfSet }
        #expect(other.join() == nil)
        // Removed: unset again; reading `value` makes the default, once.
        local.removeValue()
        #expect(local.valueIfSet == nil)
        #expect(local.value == 42)
        #expect(local.valueIfSet == 42)
        #expect(made.withLock { $0 } == 1)
        // An optional value that was set to nil is set (.some(nil)), not unset.
        let optional = try ThreadLocal<Int?> { 1 }
        optional.value = nil
        #expect(optional.hasValue)
        #expect(optional.valueIfSet.map { $0 == nil } == true)
    }

    @Test("dropping a ThreadLocal releases the values of threads that are still running, once")
    func releasedOnDrop() throws {
        let counter = LiveCounter()
        let weak = WeakBox<Tracked>()
        let stored = Semaphore()
        let finish = Semaphore()
        var local: ThreadLocal<Tracked?>? = try ThreadLocal { nil }
        let keep = Shared(local)
        @Sendable func store() {
            let object = Tracked(counter, id: 3)
            weak.object = object
            keep.value!.value = object
        }
        let thread = try PosixThread {
            store()  // the thread keeps no reference of its own
            keep.value = nil  // only the test holds the ThreadLocal now
            stored.signal()
            _ = finish.wait(timeout: testDeadline)
        }
        #expect(stored.wait(timeout: testDeadline))
        #expect(weak.object != nil)
        local = nil  // drop while the thread is alive and holds a value
        #expect(weak.object == nil)
        finish.signal()
        thread.join()  // the thread exits after the drop: nothing is released twice
        #expect(counter.live.value == 0)
    }

    @Test("many threads and ThreadLocals: every value is released exactly once")
    func churn() throws {
        let counter = LiveCounter()
        for round in 0..<5 {
            let local = try ThreadLocal { Tracked(counter, id: round) }
            let release = Semaphore()
            let threads = try (0..<4).map { _ in
                try PosixThread {
                    _ = local.value
                    _ = release.wait(timeout: testDeadline)
                }
            }
            _ = local.value
            if round % 2 == 0 {
                for _ in threads { release.signal() }
                for thread in threads { thread.join() }
            } else {
                // drop first, then let the threads exit
                _ = consume local
                for _ in threads { release.signal() }
                for thread in threads { thread.join() }
            }
        }
        // This thread's values for dropped ThreadLocals were released by the drops.
        #expect(counter.live.value == 0)
    }

    @Test("more live ThreadLocals than the per-thread cache has slots: every thread reads its own value of each")
    func moreThreadLocalsThanCacheSlots() throws {
        let count = 3 * Int(CTHR_TSD_CACHE_SLOTS) + 1
        let locals = try (0..<count).map { index in try ThreadLocal { index } }
        @Sendable func check(offset: Int) -> Bool {
            for (index, local) in locals.enumerated() where index % 2 == 0 { local.value = index + offset }
            var ok = true
            for pass in 0..<3 {
                // Forward, then backward: locals that share a slot take turns in it.
                let order = pass == 1 ? Array(locals.indices.reversed()) : Array(locals.indices)
                for index in order {
                    ok = ok && locals[index].value == (index % 2 == 0 ? index + offset : index)
                }
            }
            return ok
        }
        let results = LockedValue([Bool]())
        let threads = try (1...2).map { offset in
            try PosixThread { results.withLock { $0.append(check(offset: offset * 1000)) } }
        }
        let mine = check(offset: 0)
        for thread in threads { thread.join() }
        #expect(mine)
        #expect(results.withLock { $0 } == [true, true])
    }

    @Test("a dropped ThreadLocal's cached value never shows through a later ThreadLocal that takes its cache slot")
    func droppedThreadLocalNeverShowsThroughTheCache() throws {
        let outcome = LockedValue<(read: Int, hadValue: Bool)?>(nil)
        let thread = try PosixThread {
            var dropped: ThreadLocal<Int>? = try? ThreadLocal { 41 }
            guard let first = dropped else { return }
            first.value = 42
            let slot = first.cacheID % UInt64(CTHR_TSD_CACHE_SLOTS)
            guard first.value == 42 else { return }  // cached on this thread
            dropped = nil
            _ = consume first  // the ThreadLocal is gone; this thread's cache entry stays behind
            var later: [ThreadLocal<Int>] = []
            while later.count < 2 * Int(CTHR_TSD_CACHE_SLOTS) {
                guard let local = try? ThreadLocal({ 7 }) else { return }
                later.append(local)
                if local.cacheID % UInt64(CTHR_TSD_CACHE_SLOTS) == slot {
                    let hadValue = local.hasValue
                    let read = local.value
                    outcome.withLock { $0 = (read, hadValue) }
                    return
                }
            }
        }
        thread.join()
        let result = try #require(outcome.withLock { $0 })
        #expect(!result.hadValue)
        #expect(result.read == 7)
    }

    @Test("a value whose deinit uses a ThreadLocal at thread exit is handled (destructor rounds)")
    func deinitUsesThreadLocalAtExit() throws {
        final class Reentrant: @unchecked Sendable {
            let other: ThreadLocal<Tracked?>
            let weak: WeakBox<Tracked>
            let counter: LiveCounter
            init(other: ThreadLocal<Tracked?>, weak: WeakBox<Tracked>, counter: LiveCounter) {
                self.other = other
                self.weak = weak
                self.counter = counter
            }
            deinit {
                let object = Tracked(counter, id: 9)
                weak.object = object
                other.value = object  // a new value during thread exit: released in the next destructor round
            }
        }
        let counter = LiveCounter()
        let first = try ThreadLocal<Reentrant?> { nil }
        let second = try ThreadLocal<Tracked?> { nil }
        let weak = WeakBox<Tracked>()
        let thread = try PosixThread {
            first.value = Reentrant(other: second, weak: weak, counter: counter)
        }
        thread.join()
        #expect(weak.object == nil)
        #expect(counter.live.value == 0)
    }
}
