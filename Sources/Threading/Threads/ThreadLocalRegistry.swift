// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import CThreading

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

// How ThreadLocal releases every value exactly once, without pthread key destructors:
//
// - Each thread's value for one ThreadLocal lives in a cell. The ThreadLocal's own pthread key maps the thread to
//   its cell (unretained), and the thread's cache (`cthr_tsd_cache`, keyed by the ThreadLocal's never-reused id)
//   remembers the same pointer, so a read is one TLS load. A cache entry of a dropped ThreadLocal is never matched
//   again; the thread's own entries are forgotten at its exit, before its cells are released.
// - One process-wide key (never deleted) holds a record per thread listing its cells (retained). Its destructor
//   runs at thread exit and releases the values of the cells whose ThreadLocal still exists.
// - Each ThreadLocal keeps a registry of its live cells. When the ThreadLocal is dropped it marks them dead and
//   releases their values, on the dropping thread; threads that exit later skip dead cells.
// - Which side releases a value is decided under `threadLocalLock`: a cell is live exactly while its `registry` is
//   set. Cells are objects kept alive by the thread's record, so neither side can see a freed cell, and no
//   destructor is ever attached to a key that gets deleted (glibc may run a deleted key's destructor concurrently
//   with `pthread_key_delete`).

/// Guards every registry and the `registry` field of every cell.
let threadLocalLock = MutexLock(name: "ThreadLocal registry")

/// One thread's value for one ``ThreadLocal`` (the non-generic part).
@usableFromInline
class ThreadLocalCell: @unchecked Sendable {
    /// The owning ThreadLocal's registry while both the thread and the ThreadLocal live; `nil` once the cell is
    /// dead. Guarded by `threadLocalLock`.
    var registry: ThreadLocalRegistry?

    /// The ThreadLocal's key; valid while `registry` is set.
    let key: pthread_key_t

    init(key: pthread_key_t) {
        self.key = key
    }

    /// Releases the value (called once, by whichever side the lock decided).
    func clear() {}
}

/// A cell holding a `Value`.
///
/// The value lives in its own allocation, reached through a pointer: a read from ``ThreadLocal/value`` (inlined
/// into the caller) then needs no exclusivity check of a class property. Only the owning thread touches it, except
/// `clear()`, which runs once the owning thread can no longer reach the cell (decided under `threadLocalLock`).
@usableFromInline
final class ThreadLocalTypedCell<Value>: ThreadLocalCell, @unchecked Sendable {
    @usableFromInline
    let storage: UnsafeMutablePointer<Value?>

    override init(key: pthread_key_t) {
        storage = .allocate(capacity: 1)
        storage.initialize(to: nil)
        super.init(key: key)
    }

    deinit {
        storage.deinitialize(count: 1)
        storage.deallocate()
    }

    @inlinable
    var value: Value? {
        get { storage.pointee }
        set { storage.pointee = newValue }
    }

    override func clear() {
        value = nil
    }
}

/// The live cells of one ``ThreadLocal``, guarded by `threadLocalLock`.
final class ThreadLocalRegistry: @unchecked Sendable {
    var cells: [ObjectIdentifier: ThreadLocalCell] = [:]
}

/// The cells of one thread, released at thread exit. Touched only by its thread.
final class ThreadLocalThreadRecord {
    var cells: [ThreadLocalCell] = []
}

/// The process-wide key holding each thread's record; its destructor releases the thread's live values.
let threadLocalRecordKey: pthread_key_t = {
    var key = pthread_key_t()
    let code = cthr_tsd_create(&key) { pointer in
        let record = Unmanaged<ThreadLocalThreadRecord>.fromOpaque(pointer).takeRetainedValue()
        cthr_tsd_cache_clear()  // this thread's destructors that read a ThreadLocal again go through its key
        var released: [ThreadLocalCell] = []
        threadLocalLock.withLock {
            for cell in record.cells {
                guard let registry = cell.registry else { continue }
                registry.cells[ObjectIdentifier(cell)] = nil
                cell.registry = nil
                // The key is live (its ThreadLocal has not marked the cell dead), so clearing it is safe; later
                // ThreadLocal accesses by this thread's destructors then start a fresh cell.
                _ = cthr_tsd_set(cell.key, nil)
                released.append(cell)
            }
        }
        // Outside the lock: a value's deinit may use ThreadLocals again.
        for cell in released { cell.clear() }
    }
    require(code == 0, "ThreadLocal: pthread_key_create for the thread records failed with \(errnoName(code))")
    return key
}()

/// The calling thread's record, created on first use. Call with `threadLocalLock` held.
func currentThreadLocalRecord() -> ThreadLocalThreadRecord {
    if let pointer = cthr_tsd_get(threadLocalRecordKey) {
        return Unmanaged<ThreadLocalThreadRecord>.fromOpaque(pointer).takeUnretainedValue()
    }
    let record = ThreadLocalThreadRecord()
    let code = cthr_tsd_set(threadLocalRecordKey, Unmanaged.passRetained(record).toOpaque())
    require(code == 0, "ThreadLocal: pthread_setspecific failed with \(errnoName(code))")
    return record
}
