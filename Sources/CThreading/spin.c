// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <stdatomic.h>

#include "cthr_spin.h"

// The lock word is declared as a plain uint32_t in the header (Swift cannot import _Atomic) and accessed here as
// _Atomic uint32_t, which must have the same size and alignment and be lock-free.
_Static_assert(sizeof(_Atomic uint32_t) == sizeof(uint32_t), "_Atomic uint32_t must mirror uint32_t");
_Static_assert(_Alignof(_Atomic uint32_t) == _Alignof(uint32_t), "_Atomic uint32_t must mirror uint32_t");
_Static_assert(ATOMIC_INT_LOCK_FREE == 2, "32-bit atomics must be lock-free");

// Longest run of `pause` instructions between two looks at the lock word; past it the waiter yields the CPU
// instead, so the holder can run even when threads outnumber cores.
#define CTHR_SPIN_BACKOFF_CAP 64u

static inline _Atomic uint32_t *cthr_spin_word(cthr_spin_t *lock) {
    return (_Atomic uint32_t *)&lock->state;
}

static inline void cthr_spin_pause(void) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield" ::: "memory");
#else
    atomic_signal_fence(memory_order_seq_cst);
#endif
}

int cthr_spin_init(cthr_spin_t *lock) {
    if (lock == NULL) {
        return EINVAL;
    }
    atomic_init(cthr_spin_word(lock), 0u);
    return 0;
}

int cthr_spin_lock(cthr_spin_t *lock) {
    if (lock == NULL) {
        return EINVAL;
    }
    _Atomic uint32_t *word = cthr_spin_word(lock);
    // Fast path: one exchange when the lock is free.
    if (atomic_exchange_explicit(word, 1u, memory_order_acquire) == 0u) {
        return 0;
    }
    unsigned backoff = 1;
    for (;;) {
        // Test: wait with plain loads (the cache line stays shared) until the lock looks free.
        while (atomic_load_explicit(word, memory_order_relaxed) != 0u) {
            if (backoff <= CTHR_SPIN_BACKOFF_CAP) {
                for (unsigned i = 0; i < backoff; i++) {
                    cthr_spin_pause();
                }
                backoff <<= 1;
            } else {
                (void)sched_yield();
            }
        }
        // Test-and-set: only now try to take it.
        if (atomic_exchange_explicit(word, 1u, memory_order_acquire) == 0u) {
            return 0;
        }
    }
}

int cthr_spin_trylock(cthr_spin_t *lock) {
    if (lock == NULL) {
        return EINVAL;
    }
    _Atomic uint32_t *word = cthr_spin_word(lock);
    if (atomic_load_explicit(word, memory_order_relaxed) != 0u) {
        return EBUSY;
    }
    return atomic_exchange_explicit(word, 1u, memory_order_acquire) == 0u ? 0 : EBUSY;
}

int cthr_spin_unlock(cthr_spin_t *lock) {
    if (lock == NULL) {
        return EINVAL;
    }
    _Atomic uint32_t *word = cthr_spin_word(lock);
    // A free lock is reported, not "unlocked" again. Only the holder may unlock, so nobody else can change a held
    // word between this load and the store below; two threads racing to unlock one lock is undefined.
    if (atomic_load_explicit(word, memory_order_relaxed) == 0u) {
        return EPERM;
    }
    atomic_store_explicit(word, 0u, memory_order_release);
    return 0;
}
