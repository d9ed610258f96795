// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

// A futex counting semaphore with inlined uncontended paths and timed waits on CLOCK_MONOTONIC.
//
// The protocol is glibc's 64-bit `sem_t` (nptl/sem_waitcommon.c, sem_post.c), written here so that its fast paths
// inline into Swift and its timed wait needs no `sem_clockwait` (which ThreadSanitizer does not intercept). One
// 64-bit word holds the value (low 32 bits, the futex word) and the number of registered waiters (high 32 bits):
//   wait, fast     load; while value > 0: compare-exchange value - 1 (acquire). No system call.
//   wait, spin     while no waiter is registered: the fast path again, 10 times with doubling pauses between
//                  (`cthr_futex_backoff`), then 8 times with a sched_yield (as the futex lock does: a unit that comes back soon is taken with no sleep
//                  and no wake-up system call; glibc's sem_wait does not spin).
//   wait, slow     fetch-add waiters + 1; loop: while value > 0, compare-exchange (value - 1, waiters - 1) together
//                  (acquire: success); else futex-wait on the value while it is 0 (until the deadline). After a
//                  timeout, one more look at the value before leaving (fetch-sub waiters - 1), so a post that came
//                  with the timeout is not left behind while another thread sleeps.
//   post           compare-exchange value + 1 (release; EOVERFLOW at the maximum); if the word it replaced counted
//                  waiters: futex-wake one. No system call when nobody waits.
// formal/semaphore.pml checks the protocol (no token taken twice, no lost wake-up, with timeouts).
#ifndef CTHREADING_SEM_H
#define CTHREADING_SEM_H

#include "cthr_atomic.h"
#include "cthr_nullability.h"
#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "cthr_sem_t puts the value (the futex word) in the low half of a 64-bit word: little-endian only"
#endif

// Largest value a semaphore holds (SEM_VALUE_MAX of glibc, INT_MAX).
#define CTHR_SEM_VALUE_MAX 0x7fffffffu
// One registered waiter, in the word.
#define CTHR_SEM_WAITER_ONE ((uint64_t)1 << 32)

// A counting semaphore: value (low 32 bits, the futex word) | waiters << 32. Zero-initialised is a valid semaphore
// with value 0. Must not move while in use.
typedef struct cthr_sem {
    cthr_atomic_u64_t data;
} cthr_sem_t;

// Largest initial value or count (SEM_VALUE_MAX).
unsigned int cthr_sem_value_max(void);

// Initializes *sem with count `value`. Returns 0 or EINVAL (NULL, value > cthr_sem_value_max()).
int cthr_sem_init(cthr_sem_t *_Nullable sem, unsigned int value);

// Destroys a semaphore nobody waits on. Returns 0 or EINVAL.
int cthr_sem_destroy(cthr_sem_t *_Nullable sem);

// Takes one unit if the value is above 0 (compare-exchange, acquire): the inlined fast path. Returns false when
// the value is 0.
static inline bool cthr_sem_fast_trywait(cthr_sem_t *_Nonnull sem) {
    uint64_t word = cthr_atomic_u64_load(&sem->data, CTHR_RELAXED);
    while ((uint32_t)word != 0) {
        if (cthr_atomic_u64_compare_exchange_weak(&sem->data, &word, word - 1, CTHR_ACQUIRE, CTHR_RELAXED)) {
            return true;
        }
    }
    return false;
}

// Returns one unit (compare-exchange, release): the inlined fast path. Returns false without changing anything
// when the value is at the maximum or a waiter is registered: the caller then calls `cthr_sem_post`, which wakes
// one (or reports EOVERFLOW).
static inline bool cthr_sem_fast_post(cthr_sem_t *_Nonnull sem) {
    uint64_t word = cthr_atomic_u64_load(&sem->data, CTHR_RELAXED);
    while ((word >> 32) == 0 && (uint32_t)word < CTHR_SEM_VALUE_MAX) {
        if (cthr_atomic_u64_compare_exchange_weak(&sem->data, &word, word + 1, CTHR_RELEASE, CTHR_RELAXED)) {
            return true;
        }
    }
    return false;
}

// Decrements, waiting while the count is 0 (restarts after signals). Returns 0 or EINVAL.
int cthr_sem_wait(cthr_sem_t *_Nullable sem);

// Decrements if the count is above 0. Returns 0, EAGAIN (count is 0) or EINVAL.
int cthr_sem_trywait(cthr_sem_t *_Nullable sem);

// Decrements, waiting until `deadline_ns` on CLOCK_MONOTONIC at most (a futex wait with an absolute deadline;
// UINT64_MAX = forever). A deadline in the past still takes an available unit. Returns 0, ETIMEDOUT or EINVAL.
int cthr_sem_timedwait(cthr_sem_t *_Nullable sem, uint64_t deadline_ns);

// Increments, waking one waiter if one is registered. Returns 0, EINVAL or EOVERFLOW (count at
// cthr_sem_value_max(); nothing changes).
int cthr_sem_post(cthr_sem_t *_Nullable sem);

// Stores the current count in *out. Returns 0 or EINVAL.
int cthr_sem_getvalue(cthr_sem_t *_Nullable sem, int *_Nullable out);

// Registers (and unregisters) a waiter that is not a thread: a task suspended in the Swift layer's async wait, which
// sleeps on its own list instead of the futex. While one is registered, every post takes the slow path
// (`cthr_sem_fast_post` returns false), so its caller can hand the unit to the task. Sequentially consistent.
void cthr_sem_register_waiter(cthr_sem_t *_Nonnull sem);
void cthr_sem_unregister_waiter(cthr_sem_t *_Nonnull sem);

// The number of threads registered as waiting (a relaxed snapshot, for tests); 0 for NULL.
uint32_t cthr_sem_waiter_count(const cthr_sem_t *_Nullable sem);

#ifdef __cplusplus
}
#endif
#endif // CTHREADING_SEM_H
