// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <stddef.h>

#include "cthr_spin.h"

// Longest run of `pause` instructions between two looks at the lock word; past it the waiter yields the CPU
// instead, so the holder can run even when threads outnumber cores.
#define CTHR_SPIN_BACKOFF_CAP 64u

int cthr_spin_init(cthr_spin_t *lock) {
    if (lock == NULL) {
        return EINVAL;
    }
    cthr_atomic_u32_store(&lock->state, 0u, CTHR_RELAXED);
    return 0;
}

// Takes the lock if its owner field is 0, keeping the SLOW bit; returns true and updates *word otherwise.
static inline bool cthr_spin_attempt(cthr_spin_t *lock, uint32_t self, uint32_t *word) {
    while ((*word & CTHR_SPIN_OWNER_MASK) == 0) {
        if (cthr_atomic_u32_compare_exchange_weak(&lock->state, word, *word | self, CTHR_ACQUIRE, CTHR_RELAXED)) {
            return true;
        }
    }
    return false;
}

int cthr_spin_lock(cthr_spin_t *lock) {
    if (lock == NULL) {
        return EINVAL;
    }
    uint32_t self = cthr_lock_self();
    uint32_t word = cthr_atomic_u32_load(&lock->state, CTHR_RELAXED);
    if ((word & CTHR_SPIN_OWNER_MASK) == self) {
        return EDEADLK;
    }
    unsigned backoff = 1;
    for (;;) {
        if (cthr_spin_attempt(lock, self, &word)) {
            return 0;
        }
        // Test: wait with plain loads (the cache line stays shared) until the lock looks free.
        while ((word & CTHR_SPIN_OWNER_MASK) != 0) {
            if (backoff <= CTHR_SPIN_BACKOFF_CAP) {
                for (unsigned i = 0; i < backoff; i++) {
                    cthr_cpu_relax();
                }
                backoff <<= 1;
            } else {
                (void)sched_yield();
            }
            word = cthr_atomic_u32_load(&lock->state, CTHR_RELAXED);
        }
    }
}

int cthr_spin_trylock(cthr_spin_t *lock) {
    if (lock == NULL) {
        return EINVAL;
    }
    uint32_t word = cthr_atomic_u32_load(&lock->state, CTHR_RELAXED);
    return cthr_spin_attempt(lock, cthr_lock_self(), &word) ? 0 : EBUSY;
}

int cthr_spin_unlock(cthr_spin_t *lock) {
    if (lock == NULL) {
        return EINVAL;
    }
    // Only the owner writes a held word, so nothing changes it between this load and the store below.
    uint32_t word = cthr_atomic_u32_load(&lock->state, CTHR_RELAXED);
    if ((word & CTHR_SPIN_OWNER_MASK) != cthr_lock_self()) {
        return EPERM;
    }
    cthr_atomic_u32_store(&lock->state, word & CTHR_SPIN_SLOW, CTHR_RELEASE);
    return 0;
}

uint32_t cthr_spin_owner(const cthr_spin_t *lock) {
    if (lock == NULL) return 0;
    return cthr_atomic_u32_load(&lock->state, CTHR_RELAXED) & CTHR_SPIN_OWNER_MASK;
}

int cthr_spin_set_slow(cthr_spin_t *lock, bool on) {
    if (lock == NULL) return EINVAL;
    uint32_t word = cthr_atomic_u32_load(&lock->state, CTHR_RELAXED);
    if ((word & CTHR_SPIN_OWNER_MASK) != cthr_lock_self()) return EPERM;
    cthr_atomic_u32_store(&lock->state, (word & ~CTHR_SPIN_SLOW) | (on ? CTHR_SPIN_SLOW : 0), CTHR_RELAXED);
    return 0;
}
