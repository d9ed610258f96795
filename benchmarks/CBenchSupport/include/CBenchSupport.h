// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

// Benchmark-only C helpers: the reference compare-exchange spin lock (the hardware floor for a lock), raw liburcu
// grace periods and cheap clocks. Not part of the Threading API; nothing here is exported by the library products.
#ifndef CBENCHSUPPORT_H
#define CBENCHSUPPORT_H

#include <sched.h>
#include <stdint.h>
#include <time.h>

// Spin-lock word: 0 = free, 1 = held. Allocate it on the heap (it must not move) and zero it before use.
typedef int32_t cthr_bench_spin_word_t;

// Relaxes the CPU inside a spin loop (`pause` on x86, `yield` on ARM); never blocks.
static inline void cthr_bench_cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__) || defined(__arm__)
    __asm__ __volatile__("yield");
#endif
}

// Acquires the spin lock: one compare-exchange (acquire) on the fast path; while held, spins on a relaxed load
// with `pause` and yields the CPU every 128 spins so an oversubscribed run makes progress. Always succeeds.
static inline void cthr_bench_spin_lock(cthr_bench_spin_word_t *word) {
    for (;;) {
        int32_t expected = 0;
        if (__atomic_compare_exchange_n(word, &expected, 1, 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED)) {
            return;
        }
        unsigned spins = 0;
        while (__atomic_load_n(word, __ATOMIC_RELAXED) != 0) {
            if (++spins < 128) {
                cthr_bench_cpu_relax();
            } else {
                spins = 0;
                sched_yield();
            }
        }
    }
}

// Releases the spin lock with one release store. The caller must hold it.
static inline void cthr_bench_spin_unlock(cthr_bench_spin_word_t *word) {
    __atomic_store_n(word, 0, __ATOMIC_RELEASE);
}

// Returns CLOCK_MONOTONIC in nanoseconds (vDSO, no system call).
static inline uint64_t cthr_bench_now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

// Returns the CPU time consumed by the calling thread in nanoseconds (CLOCK_THREAD_CPUTIME_ID).
static inline uint64_t cthr_bench_thread_cpu_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

// Returns the number of CPUs this process may run on (sched_getaffinity), at least 1.
int cthr_bench_available_cpus(void);

// Waits for one grace period with liburcu's own synchronize_rcu (memb flavour, the one CThreading uses), called
// directly: the reference for RCU.synchronize(). Must not be called inside a read section (it would never return).
void cthr_bench_urcu_synchronize(void);

#endif // CBENCHSUPPORT_H
