// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import CTestSupport
import CThreading
import Glibc
import Testing

@Suite struct ThreadTests {
    @Test func exitValueComesBackThroughJoin() throws {
        let (code, thread) = spawn { UnsafeMutableRawPointer(bitPattern: 0x5EED) }
        #expect(code == 0)
        let result = try #require(thread?.join())
        #expect(result == UnsafeMutableRawPointer(bitPattern: 0x5EED))
    }

    @Test func joinWithNullResultPointerIsAccepted() throws {
        let (code, thread) = spawn { nil }
        #expect(code == 0)
        let started = try #require(thread)
        #expect(started.finished.wait())
        #expect(cthr_thread_join(started.handle, nil) == 0)
    }

    @Test func detachedThreadRuns() {
        let ran = Event()
        let (code, thread) = spawn(detached: true) {
            ran.signal()
            return nil
        }
        #expect(code == 0)
        #expect(thread != nil)
        #expect(ran.wait())
    }

    @Test func detachAfterStartLetsTheThreadFinish() throws {
        let release = Event()
        let (code, thread) = spawn {
            _ = release.wait()
            return nil
        }
        #expect(code == 0)
        let started = try #require(thread)
        #expect(cthr_thread_detach(started.handle) == 0)
        // Joining or detaching it again would be undefined (the thread sanitizer aborts on it), so the test only
        // checks that the detached thread still runs to the end.
        release.signal()
        #expect(started.finished.wait())
    }

    @Test(arguments: [1 << 20, 8 << 20, 0, 42, 1_234_567])
    func requestedStackSizeIsHonoured(requested: Int) throws {
        let reported = SharedCell<Int>(0)
        let status = SharedCell<Int32>(-1)
        let (code, thread) = spawn(stackSize: requested) {
            var size = 0
            status.pointer.pointee = cthr_thread_current_stack_size(&size)
            reported.pointer.pointee = size
            return nil
        }
        #expect(code == 0)
        #expect(try #require(thread).joined())
        #expect(status.pointer.pointee == 0)
        #expect(reported.pointer.pointee >= requested)
        #expect(reported.pointer.pointee >= cthr_thread_stack_min())
    }

    @Test(arguments: [Int(bitPattern: UInt(UInt.max)), 1 << 50])
    func absurdStackSizeReturnsAnError(requested: Int) {
        let ran = SharedCell<Bool>(false)
        let (code, thread) = spawn(stackSize: requested) {
            ran.pointer.pointee = true
            return nil
        }
        #expect([EINVAL, EAGAIN, ENOMEM].contains(code))
        #expect(thread == nil)
        #expect(ran.pointer.pointee == false)
    }

    @Test func stackSizeForRoundsUpAndSaturates() {
        let page = Int(sysconf(Int32(_SC_PAGESIZE)))
        let minimum = cthr_thread_stack_min()
        #expect(minimum > 0)
        #expect(cthr_thread_stack_size_for(0) == 0)
        #expect(cthr_thread_stack_size_for(1) == minimum)
        #expect(cthr_thread_stack_size_for(minimum + 1) == minimum + page)
        #expect(cthr_thread_stack_size_for(1 << 20) == 1 << 20)
        #expect(cthr_thread_stack_size_for(1_234_567) % page == 0)
        #expect(cthr_thread_stack_size_for(1_234_567) >= 1_234_567)
        // size_t comes to Swift as Int: read the saturated result back as the unsigned value it is.
        let saturated = UInt(bitPattern: cthr_thread_stack_size_for(Int(bitPattern: UInt.max)))
        #expect(saturated % UInt(page) == 0)
        #expect(saturated > UInt.max - UInt(page))
    }

    @Test func nameIsVisibleInsideTheThreadBeforeTheBodyRuns() throws {
        let seen = SharedCell<String>("")
        let (code, thread) = spawn(name: "cthr-worker") {
            var buffer = [CChar](repeating: 0, count: Int(CTHR_THREAD_NAME_MAX) + 1)
            if cthr_thread_get_name(&buffer, buffer.count) == 0 {
                seen.pointer.pointee = string(fromCString: buffer)
            }
            return nil
        }
        #expect(code == 0)
        #expect(try #require(thread).joined())
        #expect(seen.pointer.pointee == "cthr-worker")
    }

    @Test func longNameIsTruncatedNotRejected() throws {
        let seen = SharedCell<String>("")
        let (code, thread) = spawn(name: "a-very-long-thread-name-indeed") {
            var buffer = [CChar](repeating: 0, count: 64)
            if cthr_thread_get_name(&buffer, buffer.count) == 0 {
                seen.pointer.pointee = string(fromCString: buffer)
            }
            return nil
        }
        #expect(code == 0)
        #expect(try #require(thread).joined())
        #expect(seen.pointer.pointee == "a-very-long-thr")
    }

    @Test func setAndGetNameOnTheCurrentThread() throws {
        let results = SharedCell<[Int32]>([])
        let seen = SharedCell<String>("")
        let spawned = spawnVoid {
            var small = [CChar](repeating: 0, count: 3)
            var buffer = [CChar](repeating: 0, count: 16)
            results.pointer.pointee = [
                cthr_thread_set_name("renamed"),
                cthr_thread_get_name(&buffer, buffer.count),
                cthr_thread_get_name(&small, small.count),
                cthr_thread_set_name(nil),
                cthr_thread_get_name(nil, 16),
            ]
            seen.pointer.pointee = string(fromCString: buffer)
        }
        let thread = try #require(spawned)
        #expect(thread.joined())
        #expect(results.pointer.pointee == [0, 0, ERANGE, EINVAL, EINVAL])
        #expect(seen.pointer.pointee == "renamed")
    }

    @Test func identityQueries() throws {
        let facts = SharedCell<(Bool, Bool, Bool, pid_t, pid_t)>((true, false, false, 0, 0))
        let spawned = spawnVoid {
            let me = cthr_thread_self()
            facts.pointer.pointee = (
                cthr_thread_is_main(),
                cthr_thread_equal(me, pthread_self()),
                cthr_thread_yield() == 0,
                cthr_thread_id(),
                cthr_thread_id()
            )
        }
        let thread = try #require(spawned)
        #expect(thread.joined())
        let (isMain, equalSelf, yielded, cachedId, secondRead) = facts.pointer.pointee
        #expect(isMain == false)
        #expect(equalSelf)
        #expect(yielded)
        #expect(cachedId == secondRead)
        #expect(cachedId > 0)
        #expect(cachedId != getpid())
        #expect(cthr_thread_equal(thread.handle, cthr_thread_self()) == false)
        #expect(cthr_thread_is_main() == (cthr_thread_id() == getpid()))
    }

    @Test(.disabled(if: threadSanitizerIsActive, "TSan does not support multi-threaded fork children"))
    func forkedChildIsItsOwnMainThread() {
        // Fill this thread's id cache first: the child inherits it and must not report the parent's id.
        let parentId = cthr_thread_id()
        let child = fork()
        if child == 0 {
            // Only system calls and _exit in the child of a multithreaded process.
            _exit(cthr_thread_is_main() && cthr_thread_id() == getpid() && cthr_thread_id() != parentId ? 0 : 1)
        }
        #expect(child > 0)
        guard child > 0 else { return }
        expectCleanExit(of: child)
    }

    /// A forked child's first thread gets the Swift runtime's cached thread ids reset (libswiftCore's and
    /// libswift_Concurrency's once-lock caches, both loaded here); a process that was not forked reports none.
    @Test(.disabled(if: threadSanitizerIsActive, "TSan does not support multi-threaded fork children"))
    func forkResetsTheRuntimesThreadIdCaches() {
        #expect(cthr_fork_reset_thread_id_caches() == 0)
        let child = fork()
        if child == 0 { _exit(cthr_fork_reset_thread_id_caches() >= 2 ? 0 : 1) }
        #expect(child > 0)
        guard child > 0 else { return }
        expectCleanExit(of: child)
    }

    /// `cthr_cpu_count` reads the calling thread's mask: a thread pinned to one CPU counts one, whatever the main
    /// thread may use.
    @Test func cpuCountFollowsTheCallingThreadsMask() throws {
        let outcome = SharedCell<(set: Int32, count: Int32)>((-1, -1))
        let spawned = spawnVoid {
            let set = cthr_test_pin_to_one_cpu()
            outcome.pointer.pointee = (set, cthr_cpu_count())
        }
        let thread = try #require(spawned)
        #expect(thread.joined())
        #expect(outcome.pointer.pointee.set == 0)
        #expect(outcome.pointer.pointee.count == 1)
        #expect(cthr_cpu_count() >= 1)
    }

    @Test func niceGetAndSetPerThread() throws {
        var mainBefore: Int32 = 0
        #expect(cthr_thread_get_nice(&mainBefore) == 0)
        let outcome = SharedCell<[Int32]>([])
        let spawned = spawnVoid {
            var start: Int32 = 0
            var after: Int32 = 0
            var restored: Int32 = 0
            let get1 = cthr_thread_get_nice(&start)
            let target = min(start + 1, 19)
            let set = cthr_thread_set_nice(target)
            let get2 = cthr_thread_get_nice(&after)
            // Going back down raises priority, which an unprivileged process may be refused.
            let raise = cthr_thread_set_nice(start)
            _ = cthr_thread_get_nice(&restored)
            outcome.pointer.pointee = [get1, set, get2, after - target, raise, raise == 0 ? restored - start : 0]
        }
        let thread = try #require(spawned)
        #expect(thread.joined())
        let values = outcome.pointer.pointee
        #expect(values.count == 6)
        #expect(values.prefix(4) == [0, 0, 0, 0])
        #expect([0, EACCES, EPERM].contains(values[4]))
        #expect(values[5] == 0)
        var mainAfter: Int32 = 0
        #expect(cthr_thread_get_nice(&mainAfter) == 0)
        #expect(mainAfter == mainBefore)
    }

    @Test func badArgumentsReturnEINVAL() {
        var handle = pthread_t()
        let body: cthr_thread_body_t = { _ in nil }
        var size = 0
        #expect(cthr_thread_create(nil, nil, body, nil) == EINVAL)
        #expect(cthr_thread_create(&handle, nil, nil, nil) == EINVAL)
        #expect(cthr_thread_current_stack_size(nil) == EINVAL)
        #expect(cthr_thread_current_stack_size(&size) == 0)
        #expect(size > 0)
        #expect(cthr_thread_set_nice(20) == EINVAL)
        #expect(cthr_thread_set_nice(-21) == EINVAL)
        #expect(cthr_thread_get_nice(nil) == EINVAL)
    }

    // The thread sanitizer's pthread_join interceptor forgets the thread after a failed self-join, and the later
    // real join then aborts inside the sanitizer; the C behaviour is checked in every other configuration.
    @Test(.disabled(if: threadSanitizerIsActive, "TSan aborts on a join after a failed self-join"))
    func joiningYourselfIsADeadlock() throws {
        let code = SharedCell<Int32>(-1)
        let spawned = spawnVoid {
            code.pointer.pointee = cthr_thread_join(cthr_thread_self(), nil)
        }
        let thread = try #require(spawned)
        #expect(thread.joined())
        #expect(code.pointer.pointee == EDEADLK)
    }
}
