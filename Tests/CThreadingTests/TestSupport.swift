// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import CThreading
import Glibc
import Testing

/// Five seconds in nanoseconds: the deadline of every wait that is expected to succeed.
let generousTimeoutNs: UInt64 = 5_000_000_000

/// Heap storage for a C object or plain value shared between threads; its address never changes.
///
/// `@unchecked Sendable`: the stored values are either thread-safe C primitives (mutexes, semaphores, ...) or plain
/// values whose every access the test orders through such a primitive.
final class SharedCell<Value>: @unchecked Sendable {
    let pointer: UnsafeMutablePointer<Value>

    init(_ value: Value) {
        pointer = .allocate(capacity: 1)
        pointer.initialize(to: value)
    }

    deinit {
        pointer.deinitialize(count: 1)
        pointer.deallocate()
    }
}

/// A one-way signal between threads on a `cthr_sem_t`: `signal()` posts, `wait()` takes one post with a deadline.
///
/// `@unchecked Sendable`: the semaphore is thread-safe and never moves (heap-allocated).
final class Event: @unchecked Sendable {
    private let semaphore = UnsafeMutablePointer<cthr_sem_t>.allocate(capacity: 1)

    init() {
        let code = cthr_sem_init(semaphore, 0)
        precondition(code == 0, "cthr_sem_init failed: \(code)")
    }

    deinit {
        _ = cthr_sem_destroy(semaphore)
        semaphore.deallocate()
    }

    func signal() {
        _ = cthr_sem_post(semaphore)
    }

    /// Takes one signal, waiting `timeoutNs` at most; false when the deadline passed first.
    func wait(timeoutNs: UInt64 = generousTimeoutNs) -> Bool {
        cthr_sem_timedwait(semaphore, cthr_clock_deadline_after(timeoutNs)) == 0
    }
}

/// Starts a group of threads together: each calls `arriveAndWait()`, and `release(_:)` lets them all go once every
/// one has arrived, so their racy parts overlap.
final class StartGate: Sendable {
    private let arrived = Event()
    private let go = Event()

    /// Called by each racing thread; false if the go signal never came.
    func arriveAndWait() -> Bool {
        arrived.signal()
        return go.wait()
    }

    /// Waits until `count` threads arrived, then lets them go; false if some never arrived.
    func release(_ count: Int) -> Bool {
        for _ in 0..<count where !arrived.wait() {
            return false
        }
        for _ in 0..<count {
            go.signal()
        }
        return true
    }
}

/// The Swift closure a test thread runs, handed to the C body through the context pointer.
private final class ThreadBox {
    let body: @Sendable () -> UnsafeMutableRawPointer?
    let finished: Event

    init(body: @escaping @Sendable () -> UnsafeMutableRawPointer?, finished: Event) {
        self.body = body
        self.finished = finished
    }
}

/// The C thread body: takes back the retained box, runs the closure, then signals that it finished.
private let threadTrampoline: cthr_thread_body_t = { context in
    let box = Unmanaged<ThreadBox>.fromOpaque(context!).takeRetainedValue()
    let result = box.body()
    box.finished.signal()
    return result
}

/// A thread started by `spawn`: its handle and the event its body signals when it has returned.
struct TestThread: Sendable {
    let handle: pthread_t
    let finished: Event

    /// Joins the thread if its body finishes within `timeoutNs`; nil (a failure, not a hang) otherwise.
    func join(timeoutNs: UInt64 = generousTimeoutNs) -> UnsafeMutableRawPointer?? {
        guard finished.wait(timeoutNs: timeoutNs) else { return nil }
        var result: UnsafeMutableRawPointer?
        let code = cthr_thread_join(handle, &result)
        guard code == 0 else { return nil }
        return .some(result)
    }

    /// Joins and reports whether the thread finished in time.
    @discardableResult
    func joined(timeoutNs: UInt64 = generousTimeoutNs) -> Bool {
        join(timeoutNs: timeoutNs) != nil
    }
}

/// Starts `body` on a new thread through `cthr_thread_create`. Returns the C result and, on success, the thread.
func spawn(
    stackSize: Int = 0,
    detached: Bool = false,
    name: String? = nil,
    _ body: @escaping @Sendable () -> UnsafeMutableRawPointer?
) -> (code: Int32, thread: TestThread?) {
    let finished = Event()
    let context = Unmanaged.passRetained(ThreadBox(body: body, finished: finished)).toOpaque()
    var handle = pthread_t()
    func create(_ cName: UnsafePointer<CChar>?) -> Int32 {
        var attributes = cthr_thread_attr_t(stack_size: stackSize, detached: detached ? 1 : 0, name: cName)
        return cthr_thread_create(&handle, &attributes, threadTrampoline, context)
    }
    let code = name.map { $0.withCString { create($0) } } ?? create(nil)
    guard code == 0 else {
        // The body never runs, so the box is still ours to release.
        Unmanaged<ThreadBox>.fromOpaque(context).release()
        return (code, nil)
    }
    return (code, TestThread(handle: handle, finished: finished))
}

/// Starts a thread running `body` (returning nil) and asserts nothing: callers check `code`.
func spawnVoid(_ body: @escaping @Sendable () -> Void) -> TestThread? {
    spawn {
        body()
        return nil
    }.thread
}

/// Nanoseconds elapsed since `start` (a `cthr_clock_now_ns()` reading).
func elapsedNs(since start: UInt64) -> UInt64 {
    cthr_clock_now_ns() - start
}

/// The NUL-terminated string in `buffer`, decoded as UTF-8.
func string(fromCString buffer: [CChar]) -> String {
    String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
}

/// A fixed number of heap slots shared between threads, one per thread, so each thread writes only its own slot.
///
/// `@unchecked Sendable`: threads write disjoint slots, and the test reads them only after joining the writers.
final class SharedSlots<Element>: @unchecked Sendable {
    let pointer: UnsafeMutablePointer<Element>
    let count: Int

    init(repeating value: Element, count: Int) {
        self.count = count
        pointer = .allocate(capacity: count)
        pointer.initialize(repeating: value, count: count)
    }

    deinit {
        pointer.deinitialize(count: count)
        pointer.deallocate()
    }

    subscript(index: Int) -> Element {
        get { pointer[index] }
        set { pointer[index] = newValue }
    }

    var values: [Element] { Array(UnsafeBufferPointer(start: pointer, count: count)) }
}

/// Whether this test process runs under the thread sanitizer (its runtime exports `__tsan_init`).
let threadSanitizerIsActive: Bool = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "__tsan_init") != nil

/// Expects the forked `child` to exit normally with status 0 within `generousTimeoutNs` (polling every millisecond;
/// a child still running then is killed and reaped). A child that reports a failed step through its exit code shows
/// it in the failed expectation.
func expectCleanExit(of child: pid_t, sourceLocation: SourceLocation = #_sourceLocation) {
    var status: Int32 = 0
    var reaped: pid_t = 0
    let deadline = cthr_clock_deadline_after(generousTimeoutNs)
    while reaped == 0 && cthr_clock_now_ns() < deadline {
        reaped = waitpid(child, &status, WNOHANG)
        if reaped == 0 { _ = cthr_sleep_ns(1_000_000) }
    }
    if reaped == 0 {
        kill(child, SIGKILL)
        _ = waitpid(child, &status, 0)
    }
    #expect(reaped == child, sourceLocation: sourceLocation)
    #expect(status & 0x7f == 0, "killed by signal \(status & 0x7f)", sourceLocation: sourceLocation)  // WIFEXITED
    #expect((status >> 8) & 0xff == 0, "exit code \((status >> 8) & 0xff)", sourceLocation: sourceLocation)
}
