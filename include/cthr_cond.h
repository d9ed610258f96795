// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

// Condition variables on CLOCK_MONOTONIC (pthread_cond_*).
#ifndef CTHREADING_COND_H
#define CTHREADING_COND_H

#include "cthr_nullability.h"
#include <pthread.h>
#include <stdint.h>

#include "cthr_mutex.h"

#ifdef __cplusplus
extern "C" {
#endif

// A condition variable whose timed waits use CLOCK_MONOTONIC. Must not move after init.
typedef struct cthr_cond {
    pthread_cond_t raw;
} cthr_cond_t;

// Initializes *cond with the monotonic clock. Returns 0, EINVAL (NULL) or ENOMEM.
int cthr_cond_init(cthr_cond_t *_Nullable cond);

// Destroys a condition nobody waits on. Returns 0 or EINVAL (NULL). Destroying a condition that threads still wait
// on is undefined: glibc does not report EBUSY.
int cthr_cond_destroy(cthr_cond_t *_Nullable cond);

// Atomically unlocks `mutex` (held by the caller) and waits for a signal, then relocks. Spurious wake-ups happen:
// wait in a loop on a predicate. Returns 0, EINVAL (NULL) or EPERM (error-checking mutex not held).
int cthr_cond_wait(cthr_cond_t *_Nullable cond, cthr_mutex_t *_Nullable mutex);

// As `cthr_cond_wait`, giving up at `deadline_ns` (CLOCK_MONOTONIC; UINT64_MAX = forever). The mutex is held again
// on return either way. Returns 0 (woken), ETIMEDOUT, EINVAL or EPERM.
int cthr_cond_timedwait(cthr_cond_t *_Nullable cond, cthr_mutex_t *_Nullable mutex, uint64_t deadline_ns);

// As `cthr_cond_timedwait` with a deadline `timeout_ns` from now.
int cthr_cond_timedwait_relative(cthr_cond_t *_Nullable cond, cthr_mutex_t *_Nullable mutex, uint64_t timeout_ns);

// Wakes at least one waiter. Returns 0 or EINVAL (NULL).
int cthr_cond_signal(cthr_cond_t *_Nullable cond);

// Wakes every waiter. Returns 0 or EINVAL (NULL).
int cthr_cond_broadcast(cthr_cond_t *_Nullable cond);

#ifdef __cplusplus
}
#endif
#endif // CTHREADING_COND_H
