// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import CThreading
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The memory orders of cthr_atomic.h, plus one value outside the enumeration (documented to act as SEQ_CST).
enum Order: CaseIterable, Sendable, CustomTestStringConvertible {
    case relaxed, acquire, release, acqRel, seqCst, outOfRange

    var c: cthr_memory_order_t {
        switch self {
        case .relaxed: return CTHR_RELAXED
        case .acquire: return CTHR_ACQUIRE
        case .release: return CTHR_RELEASE
        case .acqRel: return CTHR_ACQ_REL
        case .seqCst: return CTHR_SEQ_CST
        case .outOfRange: return cthr_memory_order_t(rawValue: 99)
        }
    }

    var testDescription: String { "\(self)" }
}

/// The integer widths of cthr_atomic.h.
enum Width: CaseIterable, Sendable, CustomTestStringConvertible {
    case u8, u16, u32, u64, i8, i16, i32, i64

    var ops: any IntegerAtomicOps.Type {
        switch self {
        case .u8: return U8Ops.self
        case .u16: return U16Ops.self
        case .u32: return U32Ops.self
        case .u64: return U64Ops.self
        case .i8: return I8Ops.self
        case .i16: return I16Ops.self
        case .i32: return I32Ops.self
        case .i64: return I64Ops.self
        }
    }

    var testDescription: String { "\(self)" }
}

/// Runs `body` with a fresh heap-allocated atomic of family `F` holding `initial`.
func withAtomic<F: IntegerAtomicOps, R>(
    _: F.Type,
    _ initial: F.Value,
    _ body: (UnsafeMutablePointer<F.Storage>) -> R
) -> R {
    let atomic = UnsafeMutablePointer<F.Storage>.allocate(capacity: 1)
    defer { atomic.deallocate() }
    F.initialize(atomic, initial)
    return body(atomic)
}

/// Load, store, exchange and the five fetch operations return the old value and leave the new one, at the limits.
func checkReadModifyWrite<F: IntegerAtomicOps>(_ f: F.Type, _ o: cthr_memory_order_t) {
    let max = F.Value.max
    let min = F.Value.min
    let allOnes = ~F.Value.zero
    let highBit = F.Value(truncatingIfNeeded: UInt64(1) << UInt64(F.Value.bitWidth - 1))
    withAtomic(f, 5) { a in
        #expect(F.load(a, o) == 5)
        F.store(a, 7, o)
        #expect(F.load(a, o) == 7)
        #expect(F.exchange(a, max, o) == 7)
        #expect(F.load(a, o) == max)

        // Wrap-around at the type's limits (two's complement for signed types).
        #expect(F.fetchAdd(a, 1, o) == max)
        #expect(F.load(a, o) == min)
        #expect(F.fetchSub(a, 1, o) == min)
        #expect(F.load(a, o) == max)
        #expect(F.fetchAdd(a, max, o) == max)
        #expect(F.load(a, o) == max &+ max)
        #expect(F.exchange(a, min, o) == max &+ max)
        #expect(F.fetchSub(a, max, o) == min)
        #expect(F.load(a, o) == min &- max)

        // Bitwise operations, on low bits and on the top bit.
        F.store(a, 0b1100, o)
        #expect(F.fetchAnd(a, 0b1010, o) == 0b1100)
        #expect(F.load(a, o) == 0b1000)
        #expect(F.fetchOr(a, 0b0011, o) == 0b1000)
        #expect(F.load(a, o) == 0b1011)
        #expect(F.fetchXor(a, 0b1111, o) == 0b1011)
        #expect(F.load(a, o) == 0b0100)
        F.store(a, 0, o)
        #expect(F.fetchOr(a, highBit, o) == 0)
        #expect(F.load(a, o) == highBit)
        #expect(F.fetchXor(a, allOnes, o) == highBit)
        #expect(F.load(a, o) == ~highBit)
        #expect(F.fetchAnd(a, highBit, o) == ~highBit)
        #expect(F.load(a, o) == 0)
        #expect(F.fetchXor(a, allOnes, o) == 0)
        #expect(F.load(a, o) == allOnes)
    }
}

/// Compare-exchange: failure writes the observed value back and changes nothing; success stores `desired`.
func checkCompareExchange<F: IntegerAtomicOps>(
    _ f: F.Type,
    weak: Bool,
    _ s: cthr_memory_order_t,
    _ fail: cthr_memory_order_t
) {
    withAtomic(f, F.Value.min) { a in
        var expected = F.Value.max
        #expect(!F.compareExchange(a, &expected, 1, weak: weak, s, fail))
        #expect(expected == F.Value.min)
        #expect(F.load(a, CTHR_SEQ_CST) == F.Value.min)

        // `expected` now holds the current value: the exchange succeeds (a weak one possibly after spurious failures).
        var attempts = 0
        while !F.compareExchange(a, &expected, F.Value.max, weak: weak, s, fail) {
            attempts += 1
            #expect(weak, "a strong compare-exchange failed with the right expected value")
            #expect(expected == F.Value.min)
            if attempts > 1_000 || !weak { break }
        }
        #expect(expected == F.Value.min)
        #expect(F.load(a, CTHR_SEQ_CST) == F.Value.max)
    }
}

/// A weak compare-exchange retry loop computing `x = x * 3 + 1` (wrapping) ten times.
func checkWeakRetryLoop<F: IntegerAtomicOps>(_ f: F.Type) {
    withAtomic(f, 1) { a in
        var model: F.Value = 1
        for _ in 0..<10 {
            var observed = F.load(a, CTHR_RELAXED)
            var attempts = 0
            while !F.compareExchange(a, &observed, observed &* 3 &+ 1, weak: true, CTHR_ACQ_REL, CTHR_ACQUIRE) {
                attempts += 1
                if attempts > 1_000 { break }
            }
            #expect(attempts <= 1_000)
            model = model &* 3 &+ 1
        }
        #expect(F.load(a, CTHR_SEQ_CST) == model)
    }
}

/// State shared by the threads of `runTogether`: the start barrier (atomics in heap memory) and the body.
///
/// `@unchecked Sendable`: every stored property is immutable; the pointees are only touched through atomics.
final class Launch: @unchecked Sendable {
    let arrived = UnsafeMutablePointer<cthr_atomic_u32_t>.allocate(capacity: 1)
    let go = UnsafeMutablePointer<cthr_atomic_u32_t>.allocate(capacity: 1)
    let deadline: UInt64
    let body: @Sendable (Int) -> Void

    init(body: @escaping @Sendable (Int) -> Void) {
        cthr_atomic_u32_init(arrived, 0)
        cthr_atomic_u32_init(go, 0)
        deadline = cthr_clock_deadline_after(10_000_000_000)
        self.body = body
    }

    deinit {
        arrived.deallocate()
        go.deallocate()
    }
}

/// One thread's argument for `runTogether`.
final class LaunchArgument {
    let launch: Launch
    let index: Int

    init(launch: Launch, index: Int) {
        self.launch = launch
        self.index = index
    }
}

/// Runs `body(i)` for i in 0..<count on POSIX threads that start together (each signals "arrived", then waits for
/// "go"); every wait has a 10 s deadline. Returns whether all threads were created and arrived in time (a thread
/// that misses the deadline skips its body, so the caller's totals fail too).
func runTogether(_ count: Int, _ body: @escaping @Sendable (Int) -> Void) -> Bool {
    let launch = Launch(body: body)
    var threads: [pthread_t] = []
    var created = true
    for index in 0..<count {
        let argument = Unmanaged.passRetained(LaunchArgument(launch: launch, index: index)).toOpaque()
        var thread = pthread_t()
        let rc = pthread_create(
            &thread,
            nil,
            { raw in
                let argument = Unmanaged<LaunchArgument>.fromOpaque(raw!).takeRetainedValue()
                let launch = argument.launch
                _ = cthr_atomic_u32_fetch_add(launch.arrived, 1, CTHR_RELEASE)
                while cthr_atomic_u32_load(launch.go, CTHR_ACQUIRE) == 0 {
                    if cthr_clock_now_ns() > launch.deadline { return nil }
                    cthr_cpu_relax()
                }
                launch.body(argument.index)
                return nil
            },
            argument
        )
        if rc != 0 {
            Unmanaged<LaunchArgument>.fromOpaque(argument).release()
            created = false
            break
        }
        threads.append(thread)
    }
    var arrivedInTime = false
    while cthr_clock_now_ns() < launch.deadline {
        if cthr_atomic_u32_load(launch.arrived, CTHR_ACQUIRE) == UInt32(threads.count) {
            arrivedInTime = true
            break
        }
        sched_yield()
    }
    cthr_atomic_u32_store(launch.go, 1, CTHR_RELEASE)
    for thread in threads {
        pthread_join(thread, nil)
    }
    return created && arrivedInTime
}

@Suite struct AtomicTests {
    @Test(
        "load/store/exchange/fetch_* return the old value and wrap at the limits",
        arguments: Width.allCases,
        Order.allCases
    )
    func readModifyWrite(width: Width, order: Order) {
        checkReadModifyWrite(width.ops, order.c)
    }

    @Test(
        "compare-exchange (strong) succeeds and fails with the observed value written back",
        arguments: Width.allCases
    )
    func compareExchangeStrong(width: Width) {
        for success in Order.allCases {
            for failure in Order.allCases {
                checkCompareExchange(width.ops, weak: false, success.c, failure.c)
            }
        }
    }

    @Test(
        "compare-exchange (weak) succeeds within a retry loop and fails with the observed value written back",
        arguments: Width.allCases
    )
    func compareExchangeWeak(width: Width) {
        for success in Order.allCases {
            for failure in Order.allCases {
                checkCompareExchange(width.ops, weak: true, success.c, failure.c)
            }
        }
        checkWeakRetryLoop(width.ops)
    }

    @Test("zero-initialised atomics hold zero and mirror the size and alignment of their integer")
    func layout() {
        var zero = cthr_atomic_u64_t()
        #expect(cthr_atomic_u64_load(&zero, CTHR_SEQ_CST) == 0)
        var null = cthr_atomic_ptr_t()
        #expect(cthr_atomic_ptr_load(&null, CTHR_SEQ_CST) == nil)
        #expect(MemoryLayout<cthr_atomic_u8_t>.size == 1 && MemoryLayout<cthr_atomic_u8_t>.alignment == 1)
        #expect(MemoryLayout<cthr_atomic_i16_t>.size == 2 && MemoryLayout<cthr_atomic_i16_t>.alignment == 2)
        #expect(MemoryLayout<cthr_atomic_u32_t>.size == 4 && MemoryLayout<cthr_atomic_u32_t>.alignment == 4)
        #expect(MemoryLayout<cthr_atomic_i64_t>.size == 8 && MemoryLayout<cthr_atomic_i64_t>.alignment == 8)
        #expect(MemoryLayout<cthr_atomic_ptr_t>.size == MemoryLayout<UnsafeRawPointer>.size)
        #expect(MemoryLayout<cthr_atomic_ptr_t>.alignment == MemoryLayout<UnsafeRawPointer>.alignment)
    }

    @Test("pointer load/store/exchange/compare-exchange/fetch_add (byte offsets)", arguments: Order.allCases)
    func pointerOperations(order: Order) {
        let o = order.c
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: 64, alignment: 16)
        defer { buffer.deallocate() }
        let a = UnsafeMutablePointer<cthr_atomic_ptr_t>.allocate(capacity: 1)
        defer { a.deallocate() }

        cthr_atomic_ptr_init(a, nil)
        #expect(cthr_atomic_ptr_load(a, o) == nil)
        cthr_atomic_ptr_store(a, buffer, o)
        #expect(cthr_atomic_ptr_load(a, o) == buffer)
        #expect(cthr_atomic_ptr_exchange(a, buffer + 8, o) == buffer)
        #expect(cthr_atomic_ptr_load(a, o) == buffer + 8)

        // fetch_add adds BYTES (never scaled) and returns the old pointer; negative offsets go back.
        #expect(cthr_atomic_ptr_fetch_add(a, 3, o) == buffer + 8)
        #expect(cthr_atomic_ptr_load(a, o) == buffer + 11)
        #expect(cthr_atomic_ptr_fetch_add(a, -11, o) == buffer + 11)
        #expect(cthr_atomic_ptr_load(a, o) == buffer)

        var expected: UnsafeMutableRawPointer? = buffer + 1
        #expect(!cthr_atomic_ptr_compare_exchange_strong(a, &expected, nil, o, o))
        #expect(expected == buffer)
        #expect(cthr_atomic_ptr_compare_exchange_strong(a, &expected, nil, o, o))
        #expect(cthr_atomic_ptr_load(a, o) == nil)

        expected = buffer
        #expect(!cthr_atomic_ptr_compare_exchange_weak(a, &expected, buffer + 2, o, o))
        #expect(expected == nil)
        var attempts = 0
        while !cthr_atomic_ptr_compare_exchange_weak(a, &expected, buffer + 2, o, o) && attempts < 1_000 {
            #expect(expected == nil)
            attempts += 1
        }
        #expect(cthr_atomic_ptr_load(a, o) == buffer + 2)
    }

    @Test("orders map to C11 memory_order values; out-of-range values act as seq_cst")
    func orderMapping() {
        // The C11 ABI values: relaxed 0, consume 1 (not offered), acquire 2, release 3, acq_rel 4, seq_cst 5.
        #expect(cthr_atomic_c11_order(CTHR_RELAXED) == 0)
        #expect(cthr_atomic_c11_order(CTHR_ACQUIRE) == 2)
        #expect(cthr_atomic_c11_order(CTHR_RELEASE) == 3)
        #expect(cthr_atomic_c11_order(CTHR_ACQ_REL) == 4)
        #expect(cthr_atomic_c11_order(CTHR_SEQ_CST) == 5)
        #expect(cthr_atomic_c11_order(cthr_memory_order_t(rawValue: 99)) == 5)
    }

    @Test("every width is lock-free; other sizes are not atomics")
    func lockFree() {
        for size in [1, 2, 4, 8, MemoryLayout<UnsafeRawPointer>.size] {
            #expect(cthr_atomic_is_lock_free(size), "size \(size)")
        }
        #expect(!cthr_atomic_is_lock_free(3))
        #expect(!cthr_atomic_is_lock_free(16))
    }

    @Test("a ThreadSanitizer acquire takes any address, or none")
    func tsanAcquireTakesAnyAddress() {
        var word = 0
        withUnsafePointer(to: &word) { cthr_tsan_acquire($0) }
        cthr_tsan_acquire(nil)
    }

    @Test("fences accept every order")
    func fencesAcceptEveryOrder() {
        for order in Order.allCases {
            cthr_atomic_thread_fence(order.c)
            cthr_atomic_signal_fence(order.c)
        }
        cthr_cpu_relax()
    }

    @Test("padded slots are CTHR_PADDED_SLOT_SIZE bytes, counter first; the allocator aligns them")
    func paddedSlotLayout() throws {
        let size = Int(CTHR_PADDED_SLOT_SIZE)
        #expect(CTHR_CACHE_LINE == 64)
        #expect(size == 128)  // x86-64 (this project's platform): two lines, see cthr_atomic.h
        #expect(size % Int(CTHR_CACHE_LINE) == 0)
        #expect(MemoryLayout<cthr_padded_u64_t>.size == size)
        #expect(MemoryLayout<cthr_padded_u64_t>.stride == size)

        var allocated: UnsafeMutablePointer<cthr_padded_u64_t>?
        #expect(cthr_padded_u64_alloc(4, &allocated) == 0)
        let slots = try #require(allocated)
        defer { cthr_padded_u64_free(slots) }
        for i in 0..<4 {
            let slot = slots + i
            #expect(Int(bitPattern: slot) % size == 0)
            let counter = cthr_padded_u64_atomic(slot)
            #expect(UnsafeMutableRawPointer(counter) == UnsafeMutableRawPointer(slot))
            #expect(cthr_atomic_u64_load(counter, CTHR_RELAXED) == 0)  // zeroed
            cthr_atomic_u64_init(counter, UInt64(i))
        }
        #expect(Int(bitPattern: slots + 1) - Int(bitPattern: slots) == size)
        for i in 0..<4 {
            #expect(cthr_atomic_u64_fetch_add(cthr_padded_u64_atomic(slots + i), 10, CTHR_RELAXED) == UInt64(i))
            #expect(cthr_atomic_u64_load(cthr_padded_u64_atomic(slots + i), CTHR_RELAXED) == UInt64(i) + 10)
        }
    }

    @Test("the padded-slot allocator rejects bad arguments with EINVAL")
    func paddedSlotAllocatorErrors() {
        var slots: UnsafeMutablePointer<cthr_padded_u64_t>?
        #expect(cthr_padded_u64_alloc(0, &slots) == EINVAL)
        #expect(slots == nil)
        #expect(cthr_padded_u64_alloc(Int.max, &slots) == EINVAL)
        #expect(slots == nil)
        #expect(cthr_padded_u64_alloc(1, nil) == EINVAL)
        cthr_padded_u64_free(nil)
    }
}

/// Concurrency: exact totals under contention, and fences ordering a message between two threads.
@Suite(.serialized) struct AtomicConcurrencyTests {
    static let threads = 4
    static let iterations = 100_000

    /// Heap memory for the counters shared by the threads of one test.
    ///
    /// `@unchecked Sendable`: the pointers are immutable and their pointees are only accessed through atomics.
    final class Counters: @unchecked Sendable {
        let u64 = UnsafeMutablePointer<cthr_atomic_u64_t>.allocate(capacity: 1)
        let u16 = UnsafeMutablePointer<cthr_atomic_u16_t>.allocate(capacity: 1)
        let u8 = UnsafeMutablePointer<cthr_atomic_u8_t>.allocate(capacity: 1)
        let i32 = UnsafeMutablePointer<cthr_atomic_i32_t>.allocate(capacity: 1)
        let casCounter = UnsafeMutablePointer<cthr_atomic_u64_t>.allocate(capacity: 1)
        let slots: UnsafeMutablePointer<cthr_padded_u64_t>

        init() {
            var allocated: UnsafeMutablePointer<cthr_padded_u64_t>?
            let rc = cthr_padded_u64_alloc(AtomicConcurrencyTests.threads, &allocated)
            precondition(rc == 0, "cthr_padded_u64_alloc failed: \(rc)")
            slots = allocated!
            cthr_atomic_u64_init(u64, 0)
            cthr_atomic_u16_init(u16, 0)
            cthr_atomic_u8_init(u8, 0)
            cthr_atomic_i32_init(i32, 0)
            cthr_atomic_u64_init(casCounter, 0)
            for i in 0..<AtomicConcurrencyTests.threads {
                cthr_atomic_u64_init(cthr_padded_u64_atomic(slots + i), 0)
            }
        }

        deinit {
            u64.deallocate()
            u16.deallocate()
            u8.deallocate()
            i32.deallocate()
            casCounter.deallocate()
            cthr_padded_u64_free(slots)
        }
    }

    @Test("4 threads x 100,000 relaxed fetch_add/fetch_sub give exact totals at every width")
    func relaxedFetchAddTotals() {
        let c = Counters()
        let started = runTogether(Self.threads) { index in
            let slot = cthr_padded_u64_atomic(c.slots + index)
            for _ in 0..<Self.iterations {
                _ = cthr_atomic_u64_fetch_add(c.u64, 1, CTHR_RELAXED)
                _ = cthr_atomic_u16_fetch_add(c.u16, 1, CTHR_RELAXED)
                _ = cthr_atomic_u8_fetch_add(c.u8, 1, CTHR_RELAXED)
                _ = cthr_atomic_i32_fetch_sub(c.i32, 1, CTHR_RELAXED)
                _ = cthr_atomic_u64_fetch_add(slot, 1, CTHR_RELAXED)
            }
        }
        #expect(started)
        let total = Self.threads * Self.iterations
        #expect(cthr_atomic_u64_load(c.u64, CTHR_RELAXED) == UInt64(total))
        #expect(cthr_atomic_u16_load(c.u16, CTHR_RELAXED) == UInt16(total % 65_536))
        #expect(cthr_atomic_u8_load(c.u8, CTHR_RELAXED) == UInt8(total % 256))
        #expect(cthr_atomic_i32_load(c.i32, CTHR_RELAXED) == Int32(-total))
        for i in 0..<Self.threads {
            #expect(cthr_atomic_u64_load(cthr_padded_u64_atomic(c.slots + i), CTHR_RELAXED) == UInt64(Self.iterations))
        }
    }

    @Test("4 threads incrementing through weak compare-exchange retry loops lose no update")
    func weakCompareExchangeTotals() {
        let c = Counters()
        let perThread = 20_000
        let started = runTogether(Self.threads) { _ in
            for _ in 0..<perThread {
                var observed = cthr_atomic_u64_load(c.casCounter, CTHR_RELAXED)
                while !cthr_atomic_u64_compare_exchange_weak(
                    c.casCounter,
                    &observed,
                    observed + 1,
                    CTHR_RELAXED,
                    CTHR_RELAXED
                ) {
                    cthr_cpu_relax()
                }
            }
        }
        #expect(started)
        #expect(cthr_atomic_u64_load(c.casCounter, CTHR_SEQ_CST) == UInt64(Self.threads * perThread))
    }

    @Test("release/acquire fences order a relaxed message between two threads")
    func fencesPublishAMessage() {
        let c = Counters()  // u64: payload, casCounter: flag, i32: what the reader saw
        let rounds = 1_000
        let started = runTogether(2) { index in
            for round in 1...rounds {
                if index == 0 {
                    // Writer: payload, release fence, flag; then wait for the reader to consume it.
                    cthr_atomic_u64_store(c.u64, UInt64(round) * 7, CTHR_RELAXED)
                    cthr_atomic_thread_fence(CTHR_RELEASE)
                    cthr_atomic_u64_store(c.casCounter, UInt64(round), CTHR_RELAXED)
                    let deadline = cthr_clock_deadline_after(10_000_000_000)
                    while cthr_atomic_i32_load(c.i32, CTHR_RELAXED) != Int32(round) {
                        if cthr_clock_now_ns() > deadline { return }
                        sched_yield()  // two cores shared with other work: let the other side run
                    }
                } else {
                    // Reader: flag, acquire fence, payload must be the one published with this flag.
                    let deadline = cthr_clock_deadline_after(10_000_000_000)
                    while cthr_atomic_u64_load(c.casCounter, CTHR_RELAXED) != UInt64(round) {
                        if cthr_clock_now_ns() > deadline { return }
                        sched_yield()  // two cores shared with other work: let the other side run
                    }
                    cthr_atomic_thread_fence(CTHR_ACQUIRE)
                    if cthr_atomic_u64_load(c.u64, CTHR_RELAXED) != UInt64(round) * 7 {
                        _ = cthr_atomic_u16_fetch_add(c.u16, 1, CTHR_RELAXED)  // a torn message
                    }
                    cthr_atomic_i32_store(c.i32, Int32(round), CTHR_RELAXED)
                }
            }
        }
        #expect(started)
        #expect(cthr_atomic_i32_load(c.i32, CTHR_SEQ_CST) == Int32(rounds))
        #expect(cthr_atomic_u16_load(c.u16, CTHR_SEQ_CST) == 0)
    }
}
