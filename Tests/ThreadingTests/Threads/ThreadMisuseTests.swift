// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import CTestSupport
import CThreading
import Glibc
import Synchronization
import Testing

@testable import Threading

/// Bad input and misuse of threads whose outcome is a value or a thrown error (the object stays usable);
/// the table in <doc:Misuse> lists each case.
@Suite struct ThreadMisuseTests {
    @Test func sleepForNegativeOrZeroReturnsAtOnce() {
        let start = ContinuousClock.now
        PosixThread.sleep(for: .seconds(-5))
        PosixThread.sleep(for: .zero)
        PosixThread.sleep(for: .nanoseconds(-1))
        #expect(ContinuousClock.now - start < .seconds(5))
    }

    @Test func overlongThreadNameIsTruncatedNotRefused() throws {
        let name = String(repeating: "n", count: 100)
        let thread = try PosixThread(name: name) { PosixThread.currentName }
        #expect(thread.name == name)
        #expect(thread.join() == String(repeating: "n", count: 15))
    }

    @Test func tinyStackSizeIsRaisedToTheMinimum() throws {
        let thread = try PosixThread(stackSize: 1) { (try? PosixThread.currentStackSize()) ?? 0 }
        #expect(thread.join() >= PosixThread.minimumStackSize)
    }

    /// A stack size of 0 means the system default, as `nil` does (and as in Foundation's `Thread`), not the minimum.
    @Test func zeroStackSizeMeansTheSystemDefault() throws {
        let zero = try PosixThread(stackSize: 0) { (try? PosixThread.currentStackSize()) ?? 0 }
        let unset = try PosixThread { (try? PosixThread.currentStackSize()) ?? 0 }
        let zeroSize = zero.join()
        let defaultSize = unset.join()
        #expect(zeroSize == defaultSize)
        #expect(zeroSize > PosixThread.minimumStackSize, "the system default is larger than the minimum")
    }

    /// The smallest stack a thread can ask for still runs Swift code that makes the runtime build a type's
    /// metadata on that thread (a generic type no other code of the process used: its first use is here). On the
    /// system's bare minimum (16 KiB, part of it taken by thread-local storage) that instantiation, which follows the
    /// thread's registration with the runtime, overflowed the stack. In a child process, since an overflow kills the
    /// process.
    @Test func theSmallestStackRunsAFirstUseOfAGenericType() async {
        await #expect(processExitsWith: .success) {
            let thread = try PosixThread(stackSize: 1) { () -> Int in
                var table: [TinyStackKey<TinyStackKey<Int>>: [TinyStackKey<String>]] = [:]
                for index in 0..<64 { table[TinyStackKey(TinyStackKey(index)), default: []].append(TinyStackKey("")) }
                return table.count
            }
            guard await thread.join() == 64 else { exit(2) }
        }
    }

    /// Thread-specific keys run out at `PTHREAD_KEYS_MAX`: `ThreadLocal.init` throws `tryAgain` (in a child
    /// process, since exhausting the keys would disturb the other tests).
    @Test func threadLocalKeyExhaustionThrows() async {
        await #expect(processExitsWith: .success) {
            var locals: [ThreadLocal<Int>] = []
            for _ in 0..<4_096 {
                do {
                    locals.append(try ThreadLocal { 0 })
                } catch {
                    guard ThreadingError.tryAgain ~= error, locals.count > 100 else { exit(2) }
                    // Freeing one makes room again.
                    locals.removeLast()
                    guard (try? ThreadLocal { 1 }) != nil else { exit(3) }
                    exit(0)
                }
            }
            exit(4)
        }
    }
}

/// A generic key used only by the smallest-stack test, so that its metadata is first built on that test's thread.
private struct TinyStackKey<Value: Hashable & Sendable>: Hashable, Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}
