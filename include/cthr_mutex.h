// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

// Mutexes (pthread_mutex_*): normal, error-checking, recursive and priority-inheriting.
#ifndef CTHREADING_MUTEX_H
#define CTHREADING_MUTEX_H

#include "cthr_nullability.h"
#include <pthread.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

// Mutex kinds for `cthr_mutex_init`.
typedef enum cthr_mutex_kind {
    CTHR_MUTEX_NORMAL = 0,          // fastest; relocking deadlocks, unlocking unowned is undefined
    CTHR_MUTEX_ERRORCHECK = 1,      // relock gives EDEADLK, unlock by a non-owner gives EPERM
    CTHR_MUTEX_RECURSIVE = 2,       // the owner may relock; unlock as many times as locked
    CTHR_MUTEX_PRIO_INHERIT = 3,    // error-checking + PTHREAD_PRIO_INHERIT: the owner inherits a waiter's priority
} cthr_mutex_kind_t;

// A mutex. Must not move after `cthr_mutex_init` (allocate it on the heap).
typedef struct cthr_mutex {
    pthread_mutex_t raw;
} cthr_mutex_t;

// Initializes *mutex as `kind`. Returns 0, EINVAL (NULL, unknown kind), ENOTSUP (PI not supported) or ENOMEM.
int cthr_mutex_init(cthr_mutex_t *_Nullable mutex, int kind);

// Destroys an unlocked mutex. Returns 0, EINVAL (NULL) or EBUSY (still locked).
int cthr_mutex_destroy(cthr_mutex_t *_Nullable mutex);

// Locks, waiting as long as needed. Returns 0, EINVAL (NULL), EDEADLK (error-checking/PI kinds: already owner),
// EAGAIN (recursive: too many levels).
int cthr_mutex_lock(cthr_mutex_t *_Nullable mutex);

// Locks if free. Returns 0, EBUSY (held, including by the caller for non-recursive kinds) or EINVAL.
int cthr_mutex_trylock(cthr_mutex_t *_Nullable mutex);

// Locks, waiting until `deadline_ns` on CLOCK_MONOTONIC at most (pthread_mutex_clocklock; UINT64_MAX = forever).
// A deadline in the past still takes a free mutex. Returns 0, ETIMEDOUT, EDEADLK (as lock) or EINVAL.
int cthr_mutex_timedlock(cthr_mutex_t *_Nullable mutex, uint64_t deadline_ns);

// Unlocks. Returns 0, EINVAL (NULL), or EPERM (error-checking/recursive/PI kinds: the caller is not the owner).
int cthr_mutex_unlock(cthr_mutex_t *_Nullable mutex);

#ifdef __cplusplus
}
#endif
#endif // CTHREADING_MUTEX_H
