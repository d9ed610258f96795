// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

// Atomics with every memory order explicit: load, store, exchange, compare-exchange (strong and weak), fetch-add,
// fetch-sub, fetch-and, fetch-or and fetch-xor for 8-, 16-, 32- and 64-bit integers (signed and unsigned) and
// pointers; thread and signal fences; a cache-line-padded counter slot; and `cthr_cpu_relax` for spin loops.
//
// Why plain structs: Swift cannot import `_Atomic(T)`, so every atomic here is a plain struct holding a naturally
// aligned `T value` (for example `cthr_atomic_u32_t`). Swift sees an ordinary struct; the operations below are the
// only way the value should be touched once other threads can see it (reading `value` directly is a data race).
// Zero-initialised memory is a valid atomic holding 0 / NULL. An atomic must not move while other threads use it:
// in Swift, put it in heap memory (`UnsafeMutablePointer.allocate`, `ManagedBuffer` tail storage), never in a `var`
// whose address is taken with `&` for the duration of one call only.
//
// Why the `__atomic_*` builtins and not <stdatomic.h> here: the operations are `static inline` (they are the hot path
// of the worker pools and the benchmarks) and this header is also meant for C++ servers. <stdatomic.h> and
// `_Atomic` are not C++ before C++23 (and in C++23 they name `std::atomic`, which cannot be cast from a plain `T *`),
// whereas GCC's and Clang's `__atomic_*` builtins work on plain `T` in C and C++ alike. They implement exactly the
// C11/C++11 memory model: Clang's and GCC's own <stdatomic.h> are thin wrappers over the same builtins, and
// `Sources/CThreading/atomic.c` proves the correspondence with `_Static_assert`s (every `__ATOMIC_*` order equals its
// `memory_order_*`, every plain struct has the size and alignment of the matching `_Atomic(T)`, and every width is
// always lock-free). Importing <stdatomic.h> into Swift works on this toolchain too (Swift 6.3.1, checked); it is
// avoided for the C++ reason, not because of the clang importer.
//
// Memory orders: every operation takes `cthr_memory_order_t` explicitly. `memory_order_consume` is not offered:
// every compiler implements it as acquire (C++17 discourages it, P0371), its dependency-ordering rules cannot be
// expressed across the Swift boundary, and offering it would promise something no implementation delivers.
//
// Invalid orders never crash and are never undefined: they are clamped before use, by these documented rules.
// - Load (and the failure order of a compare-exchange, which is a load): RELEASE becomes RELAXED and ACQ_REL becomes
//   ACQUIRE. This is the rule C++11 itself uses to derive a failure order from a success order
//   ([atomics.types.operations]): the release half has no meaning for a load and is dropped, the acquire half kept.
// - Store: ACQUIRE becomes RELAXED and ACQ_REL becomes RELEASE (symmetrically, the acquire half is dropped).
// - Compare-exchange whose failure order is stronger than its success order (undefined in C11, allowed since C++17,
//   P0418): the SUCCESS order is strengthened to cover it (RELAXED + ACQUIRE failure -> ACQUIRE, RELEASE + ACQUIRE
//   failure -> ACQ_REL, anything + SEQ_CST failure -> SEQ_CST). The failure order is never weakened.
// - A value outside the enumeration (a C caller casting an integer) is treated as SEQ_CST, the strongest order.
// Read-modify-write operations and fences accept all five orders as they are.
//
// Contract shared by every operation: `atomic` (and `expected`) must point to valid, suitably aligned memory; NULL
// is not checked (these functions return the value, not an errno, and sit on hot paths) and is marked `_Nonnull`
// for Swift. All operations are lock-free on x86-64 and arm64 (asserted at build time in atomic.c).
#ifndef CTHREADING_ATOMIC_H
#define CTHREADING_ATOMIC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

// Nullability annotations are a Clang extension; GCC builds of C and C++ servers see nothing.
#if defined(__clang__)
#define CTHR_ATOMIC_NONNULL _Nonnull
#define CTHR_ATOMIC_NULLABLE _Nullable
#else
#define CTHR_ATOMIC_NONNULL
#define CTHR_ATOMIC_NULLABLE
#endif

// The size of a cache line on x86-64 and on most arm64 cores (the unit of coherence: two variables in one line
// written by two cores make the line bounce between them, "false sharing").
#define CTHR_CACHE_LINE 64

// Alignment and size of `cthr_padded_u64_t`: two cache lines. Intel cores since Sandy Bridge run an "adjacent line"
// (spatial) prefetcher that fetches 64-byte lines in aligned 128-byte pairs, so two counters 64 bytes apart still
// interfere; Apple's arm64 cores have 128-byte lines. This is why crossbeam's `CachePadded` and folly's
// `hardware_destructive_interference_size` use 128 on x86-64 and aarch64. We follow them: 64 bytes more per slot is
// cheap next to a contended line. Other architectures use `CTHR_CACHE_LINE`.
#if defined(__x86_64__) || defined(__aarch64__) || defined(__arm64__)
#define CTHR_PADDED_SLOT_SIZE 128
#else
#define CTHR_PADDED_SLOT_SIZE CTHR_CACHE_LINE
#endif

// Memory orders of the C11/C++11 model (`memory_order_*`), without consume (see above).
typedef enum cthr_memory_order {
    CTHR_RELAXED = 0,   // atomicity only, no ordering (memory_order_relaxed)
    CTHR_ACQUIRE = 1,   // later accesses stay after this load (memory_order_acquire)
    CTHR_RELEASE = 2,   // earlier accesses stay before this store (memory_order_release)
    CTHR_ACQ_REL = 3,   // both, for read-modify-write operations (memory_order_acq_rel)
    CTHR_SEQ_CST = 4,   // acq_rel plus one total order of all SEQ_CST operations (memory_order_seq_cst)
} cthr_memory_order_t;

// --- Order mapping and clamping (internal; names start with `cthr__`) -------------------------------------------

// Maps an order for a read-modify-write operation or a fence. Out-of-range values give SEQ_CST.
static inline int cthr__order_rmw(cthr_memory_order_t order) {
    switch (order) {
    case CTHR_RELAXED: return __ATOMIC_RELAXED;
    case CTHR_ACQUIRE: return __ATOMIC_ACQUIRE;
    case CTHR_RELEASE: return __ATOMIC_RELEASE;
    case CTHR_ACQ_REL: return __ATOMIC_ACQ_REL;
    default: return __ATOMIC_SEQ_CST;
    }
}

// Maps an order for a load: RELEASE -> RELAXED, ACQ_REL -> ACQUIRE, out of range -> SEQ_CST.
static inline int cthr__order_load(cthr_memory_order_t order) {
    switch (order) {
    case CTHR_RELAXED: return __ATOMIC_RELAXED;
    case CTHR_ACQUIRE: return __ATOMIC_ACQUIRE;
    case CTHR_RELEASE: return __ATOMIC_RELAXED;
    case CTHR_ACQ_REL: return __ATOMIC_ACQUIRE;
    default: return __ATOMIC_SEQ_CST;
    }
}

// Maps an order for a store: ACQUIRE -> RELAXED, ACQ_REL -> RELEASE, out of range -> SEQ_CST.
static inline int cthr__order_store(cthr_memory_order_t order) {
    switch (order) {
    case CTHR_RELAXED: return __ATOMIC_RELAXED;
    case CTHR_ACQUIRE: return __ATOMIC_RELAXED;
    case CTHR_RELEASE: return __ATOMIC_RELEASE;
    case CTHR_ACQ_REL: return __ATOMIC_RELEASE;
    default: return __ATOMIC_SEQ_CST;
    }
}

// Success order of a compare-exchange, strengthened so that it is at least as strong as the (already load-clamped)
// failure order `failure`: RELAXED+ACQUIRE -> ACQUIRE, RELEASE+ACQUIRE -> ACQ_REL, anything+SEQ_CST -> SEQ_CST.
static inline int cthr__order_cas_success(cthr_memory_order_t success, int failure) {
    int s = cthr__order_rmw(success);
    if (failure == __ATOMIC_SEQ_CST) {
        return __ATOMIC_SEQ_CST;
    }
    if (failure == __ATOMIC_ACQUIRE) {
        if (s == __ATOMIC_RELAXED) {
            return __ATOMIC_ACQUIRE;
        }
        if (s == __ATOMIC_RELEASE) {
            return __ATOMIC_ACQ_REL;
        }
    }
    return s;
}

// --- Generators ----------------------------------------------------------------------------------------------------

// Declares `cthr_atomic_<name>_compare_exchange_<kind>` (strong, or weak: it may fail spuriously): stores `desired`
// if the value is *expected, else loads the value into *expected; returns whether it stored.
#define CTHR__ATOMIC_CAS(name, T, kind, is_weak)                                                                      \
    static inline bool cthr_atomic_##name##_compare_exchange_##kind(                                                  \
        cthr_atomic_##name##_t *CTHR_ATOMIC_NONNULL atomic, T *CTHR_ATOMIC_NONNULL expected, T desired,               \
        cthr_memory_order_t success, cthr_memory_order_t failure) {                                                   \
        int f = cthr__order_load(failure);                                                                            \
        return __atomic_compare_exchange_n(&atomic->value, expected, desired, is_weak,                                \
                                           cthr__order_cas_success(success, f), f);                                   \
    }

// Declares the atomic struct for `T` and its operations common to integers and pointers. See the family comment
// blocks below for the contract of each generated function.
#define CTHR__ATOMIC_COMMON(name, T)                                                                                  \
    typedef struct cthr_atomic_##name {                                                                               \
        T value __attribute__((aligned(sizeof(T))));                                                                  \
    } cthr_atomic_##name##_t;                                                                                         \
                                                                                                                      \
    static inline void cthr_atomic_##name##_init(cthr_atomic_##name##_t *CTHR_ATOMIC_NONNULL atomic, T value) {      \
        __atomic_store_n(&atomic->value, value, __ATOMIC_RELAXED);                                                    \
    }                                                                                                                 \
                                                                                                                      \
    static inline T cthr_atomic_##name##_load(const cthr_atomic_##name##_t *CTHR_ATOMIC_NONNULL atomic,              \
                                              cthr_memory_order_t order) {                                            \
        return __atomic_load_n(&atomic->value, cthr__order_load(order));                                              \
    }                                                                                                                 \
                                                                                                                      \
    static inline void cthr_atomic_##name##_store(cthr_atomic_##name##_t *CTHR_ATOMIC_NONNULL atomic, T value,       \
                                                  cthr_memory_order_t order) {                                        \
        __atomic_store_n(&atomic->value, value, cthr__order_store(order));                                            \
    }                                                                                                                 \
                                                                                                                      \
    static inline T cthr_atomic_##name##_exchange(cthr_atomic_##name##_t *CTHR_ATOMIC_NONNULL atomic, T value,       \
                                                  cthr_memory_order_t order) {                                        \
        return __atomic_exchange_n(&atomic->value, value, cthr__order_rmw(order));                                    \
    }                                                                                                                 \
                                                                                                                      \
    CTHR__ATOMIC_CAS(name, T, strong, false)                                                                          \
    CTHR__ATOMIC_CAS(name, T, weak, true)

// Declares `cthr_atomic_<name>_<op>` for `op` one of fetch_add, fetch_sub, fetch_and, fetch_or and fetch_xor: applies
// the operation and returns the old value. (`op` is the whole name: `and`, `or` and `xor` alone are operators in C++.)
#define CTHR__ATOMIC_RMW(name, T, op)                                                                                 \
    static inline T cthr_atomic_##name##_##op(cthr_atomic_##name##_t *CTHR_ATOMIC_NONNULL atomic, T operand,          \
                                              cthr_memory_order_t order) {                                            \
        return __atomic_##op(&atomic->value, operand, cthr__order_rmw(order));                                        \
    }

// Declares the common operations plus the integer read-modify-write operations for integer type `T`.
#define CTHR__ATOMIC_INTEGER(name, T)                                                                                 \
    CTHR__ATOMIC_COMMON(name, T)                                                                                      \
    CTHR__ATOMIC_RMW(name, T, fetch_add)                                                                              \
    CTHR__ATOMIC_RMW(name, T, fetch_sub)                                                                              \
    CTHR__ATOMIC_RMW(name, T, fetch_and)                                                                              \
    CTHR__ATOMIC_RMW(name, T, fetch_or)                                                                               \
    CTHR__ATOMIC_RMW(name, T, fetch_xor)

// --- Integer atomics -----------------------------------------------------------------------------------------------
//
// For each NAME/T pair below (u8/uint8_t, u16/uint16_t, u32/uint32_t, u64/uint64_t, i8/int8_t, i16/int16_t,
// i32/int32_t, i64/int64_t) this header defines:
//
// typedef struct cthr_atomic_NAME { T value; } cthr_atomic_NAME_t;
//     A `T` read and written only atomically; aligned to sizeof(T). Zero-initialised = holds 0.
// void cthr_atomic_NAME_init(cthr_atomic_NAME_t *atomic, T value);
//     Sets the value before the atomic is shared (a relaxed store; publish it with a release or a fence).
// T cthr_atomic_NAME_load(const cthr_atomic_NAME_t *atomic, cthr_memory_order_t order);
//     Returns the current value. RELEASE is clamped to RELAXED, ACQ_REL to ACQUIRE.
// void cthr_atomic_NAME_store(cthr_atomic_NAME_t *atomic, T value, cthr_memory_order_t order);
//     Replaces the value. ACQUIRE is clamped to RELAXED, ACQ_REL to RELEASE.
// T cthr_atomic_NAME_exchange(cthr_atomic_NAME_t *atomic, T value, cthr_memory_order_t order);
//     Replaces the value and returns the OLD value, in one atomic step.
// bool cthr_atomic_NAME_compare_exchange_strong(cthr_atomic_NAME_t *atomic, T *expected, T desired,
//                                              cthr_memory_order_t success, cthr_memory_order_t failure);
//     If the value equals *expected, stores `desired` (with `success` order) and returns true; otherwise writes the
//     value it observed into *expected (with `failure` order) and returns false. Never fails spuriously. Orders are
//     clamped as documented at the top (failure as a load; success strengthened to cover failure).
// bool cthr_atomic_NAME_compare_exchange_weak(...same parameters...);
//     As strong, but may fail spuriously (return false with *expected set to a value equal to the old one) even when
//     the values are equal; cheaper on LL/SC machines (arm64 without LSE). Use it in a retry loop.
// T cthr_atomic_NAME_fetch_add(cthr_atomic_NAME_t *atomic, T operand, cthr_memory_order_t order);
// T cthr_atomic_NAME_fetch_sub(...); T cthr_atomic_NAME_fetch_and(...); T cthr_atomic_NAME_fetch_or(...);
// T cthr_atomic_NAME_fetch_xor(...);
//     Apply +, -, &, |, ^ with `operand` and return the OLD value, in one atomic step. Addition and subtraction wrap
//     around modulo 2^bits for signed types too (two's complement, as C11 7.17.7.5 specifies; never undefined).
CTHR__ATOMIC_INTEGER(u8, uint8_t)
CTHR__ATOMIC_INTEGER(u16, uint16_t)
CTHR__ATOMIC_INTEGER(u32, uint32_t)
CTHR__ATOMIC_INTEGER(u64, uint64_t)
CTHR__ATOMIC_INTEGER(i8, int8_t)
CTHR__ATOMIC_INTEGER(i16, int16_t)
CTHR__ATOMIC_INTEGER(i32, int32_t)
CTHR__ATOMIC_INTEGER(i64, int64_t)

// --- Pointer atomics -------------------------------------------------------------------------------------------------
//
// typedef struct cthr_atomic_ptr { void *value; } cthr_atomic_ptr_t;
//     A pointer read and written only atomically (Swift: `UnsafeMutableRawPointer?`). Zero-initialised = NULL.
// void cthr_atomic_ptr_init(cthr_atomic_ptr_t *atomic, void *value);
// void *cthr_atomic_ptr_load(const cthr_atomic_ptr_t *atomic, cthr_memory_order_t order);
// void cthr_atomic_ptr_store(cthr_atomic_ptr_t *atomic, void *value, cthr_memory_order_t order);
// void *cthr_atomic_ptr_exchange(cthr_atomic_ptr_t *atomic, void *value, cthr_memory_order_t order);
// bool cthr_atomic_ptr_compare_exchange_strong(cthr_atomic_ptr_t *atomic, void **expected, void *desired,
//                                             cthr_memory_order_t success, cthr_memory_order_t failure);
// bool cthr_atomic_ptr_compare_exchange_weak(...same parameters...);
//     Same contracts as the integer family above (orders clamped the same way; compare-exchange compares the
//     addresses and writes the observed pointer back through `expected` on failure).
CTHR__ATOMIC_COMMON(ptr, void *CTHR_ATOMIC_NULLABLE)

// Adds `bytes` (a BYTE offset, negative to go back; never scaled by a pointee size, since the pointee is `void`) to
// the pointer and returns the OLD pointer, in one atomic step. Use it to bump-allocate from a buffer.
static inline void *CTHR_ATOMIC_NULLABLE cthr_atomic_ptr_fetch_add(cthr_atomic_ptr_t *CTHR_ATOMIC_NONNULL atomic,
                                                                    ptrdiff_t bytes, cthr_memory_order_t order) {
    return __atomic_fetch_add(&atomic->value, bytes, cthr__order_rmw(order));
}

// --- Fences ----------------------------------------------------------------------------------------------------------

// A memory fence between threads (atomic_thread_fence): orders this thread's memory accesses around it as `order`
// says, pairing with atomic operations or fences of other threads. RELAXED is a no-op. Every order is valid.
static inline void cthr_atomic_thread_fence(cthr_memory_order_t order) {
    __atomic_thread_fence(cthr__order_rmw(order));
}

// A compiler-only fence (atomic_signal_fence): orders accesses as seen by a signal handler running on this same
// thread; emits no CPU instruction. Every order is valid.
static inline void cthr_atomic_signal_fence(cthr_memory_order_t order) {
    __atomic_signal_fence(cthr__order_rmw(order));
}

// --- Padded slot -----------------------------------------------------------------------------------------------------

// A 64-bit atomic counter alone in its own CTHR_PADDED_SLOT_SIZE-byte block, so that an array of slots, one per
// thread or stripe, never puts two counters in one cache line (or one adjacent-line-prefetch pair). Operate on it
// through `cthr_padded_u64_atomic` and the `cthr_atomic_u64_*` functions. Zero-initialised = holds 0.
//
// Sized, not aligned, by the type: its alignment is the counter's (8). Swift's clang importer drops any C struct
// aligned to more than 16 bytes (checked on Swift 6.3.1: `aligned(64)` and `aligned(128)` structs are not imported),
// and a Swift-only view with a different layout would break C structs that embed slots. So the ALIGNMENT comes from
// the allocation: `cthr_padded_u64_alloc` (or, in Swift, `UnsafeMutableRawPointer.allocate(byteCount:alignment:)`
// with alignment CTHR_PADDED_SLOT_SIZE; in C, `_Alignas(CTHR_PADDED_SLOT_SIZE)` on a static array). Because the size
// is exactly one block, every slot of an aligned array is aligned too.
typedef struct cthr_padded_u64 {
    cthr_atomic_u64_t atomic;
    uint8_t padding[CTHR_PADDED_SLOT_SIZE - sizeof(cthr_atomic_u64_t)];
} cthr_padded_u64_t;

// The atomic counter inside `slot` (never NULL for a valid slot).
static inline cthr_atomic_u64_t *CTHR_ATOMIC_NONNULL cthr_padded_u64_atomic(cthr_padded_u64_t *CTHR_ATOMIC_NONNULL
                                                                                slot) {
    return &slot->atomic;
}

// --- Spinning --------------------------------------------------------------------------------------------------------

// A hint for the body of a spin-wait loop: `pause` on x86 (saves power, lets the sibling hyperthread run and avoids
// the memory-order mis-speculation penalty when the loop exits), `yield` on arm64, a compiler barrier elsewhere.
// Does not give up the CPU to the scheduler (that is `cthr_thread_yield`).
static inline void cthr_cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__) || defined(__arm64__)
    __asm__ __volatile__("yield" ::: "memory");
#else
    __asm__ __volatile__("" ::: "memory");
#endif
}

// --- Out of line (atomic.c) ------------------------------------------------------------------------------------------

// The C11 `memory_order` value (as an int) that `order` maps to for read-modify-write operations, so tests and
// C callers can check the mapping; out-of-range values give memory_order_seq_cst. Never fails.
int cthr_atomic_c11_order(cthr_memory_order_t order);

// Whether an atomic of `size` bytes (1, 2, 4, 8 or sizeof(void *)) is lock-free on this machine, asked of C11's
// `atomic_is_lock_free`. Any other size gives false. Never fails.
bool cthr_atomic_is_lock_free(size_t size);

// Allocates `count` zeroed slots aligned to CTHR_PADDED_SLOT_SIZE and stores the first in *slots (NULL on failure).
// Release them with `cthr_padded_u64_free`. Returns 0, EINVAL (NULL `slots`, `count` 0 or too large) or ENOMEM.
int cthr_padded_u64_alloc(size_t count, cthr_padded_u64_t *CTHR_ATOMIC_NULLABLE *CTHR_ATOMIC_NULLABLE slots);

// Frees slots from `cthr_padded_u64_alloc` (NULL is ignored). Never fails.
void cthr_padded_u64_free(cthr_padded_u64_t *CTHR_ATOMIC_NULLABLE slots);

// ThreadSanitizer. True when this library was built with it (`-fsanitize=thread`), else false.
extern const bool cthr_tsan_active;

// Orders what the calling thread does next after everything another thread did before it released `addr` to
// ThreadSanitizer (`__tsan_release`): for an ordering that ThreadSanitizer cannot see because the code that makes it
// is not instrumented (another runtime's atomics). Does nothing outside ThreadSanitizer builds. Never fails.
void cthr_tsan_acquire(const void *CTHR_ATOMIC_NULLABLE addr);

#ifdef __cplusplus
}
#endif
#endif // CTHREADING_ATOMIC_H
