// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

// A counting semaphore (POSIX sem_t, process-private) with timed waits on CLOCK_MONOTONIC.
#ifndef CTHREADING_SEM_H
#define CTHREADING_SEM_H

#include "cthr_nullability.h"
#include <semaphore.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

// A counting semaphore. Must not move after init.
typedef struct cthr_sem {
    sem_t raw;
} cthr_sem_t;

// Largest initial value or count (SEM_VALUE_MAX).
unsigned int cthr_sem_value_max(void);

// Initializes *sem with count `value`. Returns 0 or EINVAL (NULL, value > cthr_sem_value_max()).
int cthr_sem_init(cthr_sem_t *_Nullable sem, unsigned int value);

// Destroys a semaphore nobody waits on. Returns 0 or EINVAL.
int cthr_sem_destroy(cthr_sem_t *_Nullable sem);

// Decrements, waiting while the count is 0 (restarts after signals). Returns 0 or EINVAL.
int cthr_sem_wait(cthr_sem_t *_Nullable sem);

// Decrements if the count is above 0. Returns 0, EAGAIN (count is 0) or EINVAL.
int cthr_sem_trywait(cthr_sem_t *_Nullable sem);

// Decrements, waiting until `deadline_ns` on CLOCK_MONOTONIC at most (sem_clockwait; UINT64_MAX = forever).
// Returns 0, ETIMEDOUT or EINVAL.
int cthr_sem_timedwait(cthr_sem_t *_Nullable sem, uint64_t deadline_ns);

// Increments, waking one waiter. Returns 0, EINVAL or EOVERFLOW (count at cthr_sem_value_max()).
int cthr_sem_post(cthr_sem_t *_Nullable sem);

// Stores the current count in *out. Returns 0 or EINVAL.
int cthr_sem_getvalue(cthr_sem_t *_Nullable sem, int *_Nullable out);

#ifdef __cplusplus
}
#endif
#endif // CTHREADING_SEM_H
