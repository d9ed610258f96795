// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <time.h>
#include <unistd.h>

#include "cthr_clock.h"
#include "cthr_futex.h"
#include "cthr_sem.h"
#include "cthr_tsan.h"

// Tries before a waiter registers and sleeps (see cthr_sem_timedwait): `CTHR_SEM_SPINS` with doubling pauses between
// them, then `CTHR_SEM_YIELDS` with a sched_yield (`cthr_futex_backoff`; as the condition does, no yields among the
// pauses: a unit usually comes back from a thread running on another CPU).
#ifndef CTHR_SEM_SPINS
#define CTHR_SEM_SPINS 10
#endif
#ifndef CTHR_SEM_YIELDS
#define CTHR_SEM_YIELDS 8
#endif

_Static_assert(CTHR_SEM_VALUE_MAX == (unsigned int)INT_MAX, "the maximum is SEM_VALUE_MAX (INT_MAX)");
_Static_assert(sizeof(cthr_sem_t) == sizeof(uint64_t), "one 64-bit word");

// The value: the low half of the word, the futex word sleepers wait on.
static inline uint32_t *cthr_sem_value_word(cthr_sem_t *sem) {
    return (uint32_t *)&sem->data.value;
}

unsigned int cthr_sem_value_max(void) {
    return CTHR_SEM_VALUE_MAX;
}

int cthr_sem_init(cthr_sem_t *sem, unsigned int value) {
    if (sem == NULL || value > CTHR_SEM_VALUE_MAX) {
        return EINVAL;
    }
    cthr_atomic_u64_store(&sem->data, (uint64_t)value, CTHR_RELAXED);
    return 0;
}

int cthr_sem_destroy(cthr_sem_t *sem) {
    if (sem == NULL) {
        return EINVAL;
    }
    return 0;
}

int cthr_sem_trywait(cthr_sem_t *sem) {
    if (sem == NULL) {
        return EINVAL;
    }
    return cthr_sem_fast_trywait(sem) ? 0 : EAGAIN;
}

// Takes a unit and leaves the waiters in one compare-exchange, if the value is above 0.
static inline bool cthr_sem_take_registered(cthr_sem_t *sem) {
    uint64_t word = cthr_atomic_u64_load(&sem->data, CTHR_RELAXED);
    while ((uint32_t)word != 0) {
        if (cthr_atomic_u64_compare_exchange_weak(&sem->data, &word, word - 1 - CTHR_SEM_WAITER_ONE, CTHR_ACQUIRE,
                                                  CTHR_RELAXED)) {
            return true;
        }
    }
    return false;
}

int cthr_sem_timedwait(cthr_sem_t *sem, uint64_t deadline_ns) {
    if (sem == NULL) {
        return EINVAL;
    }
    // A unit that comes back within a short hold is taken without a sleep and the poster's wake-up system call. A
    // thread stops trying as soon as a waiter is registered: it queues behind the sleepers instead of competing
    // with the one a post wakes.
    for (int round = 0;; round++) {
        if (cthr_sem_fast_trywait(sem)) {
            CTHR_TSAN_ACQUIRE(sem);
            return 0;
        }
        if ((cthr_atomic_u64_load(&sem->data, CTHR_RELAXED) >> 32) != 0) break;
        if (!cthr_futex_backoff(round, CTHR_SEM_SPINS, CTHR_SEM_SPINS, CTHR_SEM_YIELDS, deadline_ns)) break;
    }
    // Register, then look at the value before every sleep: a post that comes after the registration sees the
    // waiter and wakes one sleeper; the futex compares the value with 0 atomically with going to sleep.
    cthr_atomic_u64_fetch_add(&sem->data, CTHR_SEM_WAITER_ONE, CTHR_SEQ_CST);
    for (;;) {
        if (cthr_sem_take_registered(sem)) break;
        int rc = cthr_futex_wait(cthr_sem_value_word(sem), 0u, deadline_ns);
        if (rc == ETIMEDOUT) {
            // A post may have come with the timeout (and woken this thread, or found it awake): take that unit
            // rather than leave it while another thread sleeps.
            if (cthr_sem_take_registered(sem)) break;
            cthr_atomic_u64_fetch_sub(&sem->data, CTHR_SEM_WAITER_ONE, CTHR_RELAXED);
            return ETIMEDOUT;
        }
        // Woken, EAGAIN (the value was not 0) or EINTR (a signal handler ran; the deadline is absolute): look again.
    }
    // ThreadSanitizer sees the compare-exchanges (acquire after the poster's release); the annotation states the
    // hand-off for the futex path too, as the sem_t wrapper did (TSan does not see futex sleeps).
    CTHR_TSAN_ACQUIRE(sem);
    return 0;
}

int cthr_sem_wait(cthr_sem_t *sem) {
    return cthr_sem_timedwait(sem, UINT64_MAX);
}

int cthr_sem_post(cthr_sem_t *sem) {
    if (sem == NULL) {
        return EINVAL;
    }
    // Paired with the acquire in cthr_sem_timedwait.
    CTHR_TSAN_RELEASE(sem);
    uint64_t word = cthr_atomic_u64_load(&sem->data, CTHR_RELAXED);
    do {
        if ((uint32_t)word >= CTHR_SEM_VALUE_MAX) return EOVERFLOW;
    } while (!cthr_atomic_u64_compare_exchange_weak(&sem->data, &word, word + 1, CTHR_SEQ_CST, CTHR_RELAXED));
    if ((word >> 32) != 0) {
        (void)cthr_futex_wake(cthr_sem_value_word(sem), 1, NULL);
    }
    return 0;
}

int cthr_sem_getvalue(cthr_sem_t *sem, int *out) {
    if (sem == NULL || out == NULL) {
        return EINVAL;
    }
    *out = (int)(uint32_t)cthr_atomic_u64_load(&sem->data, CTHR_RELAXED);
    return 0;
}

void cthr_sem_register_waiter(cthr_sem_t *sem) {
    (void)cthr_atomic_u64_fetch_add(&sem->data, CTHR_SEM_WAITER_ONE, CTHR_SEQ_CST);
}

void cthr_sem_unregister_waiter(cthr_sem_t *sem) {
    (void)cthr_atomic_u64_fetch_sub(&sem->data, CTHR_SEM_WAITER_ONE, CTHR_SEQ_CST);
}

uint32_t cthr_sem_waiter_count(const cthr_sem_t *sem) {
    if (sem == NULL) return 0;
    return (uint32_t)(cthr_atomic_u64_load(&sem->data, CTHR_RELAXED) >> 32);
}
