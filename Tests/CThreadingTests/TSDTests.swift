// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import CThreading
import Glibc
import Testing

/// Destructor used by the tests: each value is a `cthr_sem_t *` that the destructor posts.
private let postSemaphore: cthr_tsd_destructor_t = { value in
    _ = cthr_sem_post(value.assumingMemoryBound(to: cthr_sem_t.self))
}

@Suite struct TSDTests {
    @Test func valuesArePerThread() throws {
        var key = pthread_key_t()
        #expect(cthr_tsd_create(&key, nil) == 0)
        defer { _ = cthr_tsd_delete(key) }
        let sharedKey = key
        let gate = StartGate()
        let seen = SharedSlots<Int>(repeating: 0, count: 2)
        let threads = (1...2).map { index in
            spawnVoid {
                _ = cthr_tsd_set(sharedKey, UnsafeRawPointer(bitPattern: index))
                // Both threads have set their value before either reads it back.
                guard gate.arriveAndWait() else { return }
                seen[index - 1] = Int(bitPattern: cthr_tsd_get(sharedKey))
            }
        }
        #expect(gate.release(2))
        for thread in threads {
            #expect(try #require(thread).joined())
        }
        #expect(seen.values == [1, 2])
        #expect(cthr_tsd_get(key) == nil)
    }

    @Test func destructorRunsAtThreadExit() throws {
        var key = pthread_key_t()
        #expect(cthr_tsd_create(&key, postSemaphore) == 0)
        defer { _ = cthr_tsd_delete(key) }
        let semaphore = SharedCell(cthr_sem_t())
        #expect(cthr_sem_init(semaphore.pointer, 0) == 0)
        defer { _ = cthr_sem_destroy(semaphore.pointer) }
        let sharedKey = key
        let setResult = SharedCell<Int32>(-1)
        let valueAfterSet = SharedCell<Bool>(false)
        let spawned = spawnVoid {
            setResult.pointer.pointee = cthr_tsd_set(sharedKey, semaphore.pointer)
            valueAfterSet.pointer.pointee = cthr_tsd_get(sharedKey) == UnsafeMutableRawPointer(semaphore.pointer)
        }
        let thread = try #require(spawned)
        #expect(thread.joined())
        #expect(setResult.pointer.pointee == 0)
        #expect(valueAfterSet.pointer.pointee)
        // The join returned after the thread ran its destructors: the semaphore was posted exactly once.
        #expect(cthr_sem_trywait(semaphore.pointer) == 0)
        #expect(cthr_sem_trywait(semaphore.pointer) == EAGAIN)
    }

    @Test func destructorSkipsNullValues() throws {
        var key = pthread_key_t()
        #expect(cthr_tsd_create(&key, postSemaphore) == 0)
        defer { _ = cthr_tsd_delete(key) }
        let sharedKey = key
        let spawned = spawnVoid {
            // Never set, or reset to NULL: the destructor must not run (it would crash on a NULL semaphore).
            _ = cthr_tsd_set(sharedKey, nil)
        }
        #expect(try #require(spawned).joined())
    }

    @Test func badArgumentsReturnEINVAL() {
        var key = pthread_key_t()
        #expect(cthr_tsd_create(nil, nil) == EINVAL)
        #expect(cthr_tsd_create(&key, nil) == 0)
        #expect(cthr_tsd_delete(key) == 0)
        // A deleted key is no longer valid.
        #expect(cthr_tsd_delete(key) == EINVAL)
        #expect(cthr_tsd_set(key, UnsafeRawPointer(bitPattern: 1)) == EINVAL)
        #expect(cthr_tsd_get(key) == nil)
    }
}
