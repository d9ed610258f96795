// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import Testing

@testable import Threading

/// The deadline of every wait in these tests that is expected to succeed: a deadlock fails instead of hanging.
let testDeadline: Duration = .seconds(20)

/// A mutable box shared between test threads; every access is ordered by the lock under test (or a join).
///
/// `@unchecked Sendable`: the tests synchronize each access themselves; that is what they check.
final class Shared<Value>: @unchecked Sendable {
    var value: Value
    init(_ value: Value) { self.value = value }
}

/// Runs `count` threads that start their racy part together (each signals "arrived", then waits for "go"), then
/// joins them all; records an issue and returns false if any thread does not arrive or finish within the deadline.
@discardableResult
func runTogether(
    _ count: Int,
    sourceLocation: SourceLocation = #_sourceLocation,
    _ body: @escaping @Sendable (Int) -> Void
) -> Bool {
    let arrived = Semaphore()
    let go = Semaphore()
    let finished = Semaphore()
    var handles: [PosixThread<Void>] = []
    for index in 0..<count {
        do {
            let thread = try PosixThread(name: "racer-\(index)") {
                arrived.signal()
                guard go.wait(timeout: testDeadline) else { return }
                body(index)
                finished.signal()
            }
            handles.append(thread)
        } catch {
            Issue.record("thread \(index) could not start: \(error)", sourceLocation: sourceLocation)
            return false
        }
    }
    for _ in 0..<count {
        guard arrived.wait(timeout: testDeadline) else {
            Issue.record("a thread did not arrive in time", sourceLocation: sourceLocation)
            return false
        }
    }
    for _ in 0..<count { go.signal() }
    var allFinished = true
    for _ in 0..<count where !finished.wait(timeout: testDeadline) {
        allFinished = false
        break
    }
    guard allFinished else {
        Issue.record("threads did not finish in time (deadlock?)", sourceLocation: sourceLocation)
        while let handle = handles.popLast() { handle.detach() }
        return false
    }
    while let handle = handles.popLast() { handle.join() }
    return true
}

/// Signals `released` from its `deinit`: a release that happens on another thread can be waited for with a deadline.
final class ReleaseProbe: Sendable {
    let released: Semaphore
    init(_ released: Semaphore) { self.released = released }
    deinit { released.signal() }
}

/// A weak reference that can cross threads (the tests read it after a join or under a lock).
final class WeakBox<Object: AnyObject>: @unchecked Sendable {
    weak var object: Object?
    init(_ object: Object? = nil) { self.object = object }
}
