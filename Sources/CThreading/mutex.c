// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <time.h>

#include "cthr_clock.h"
#include "cthr_mutex.h"

int cthr_mutex_init(cthr_mutex_t *mutex, int kind) {
    if (mutex == NULL) {
        return EINVAL;
    }
    int type;
    int protocol = PTHREAD_PRIO_NONE;
    switch (kind) {
    case CTHR_MUTEX_NORMAL:
        type = PTHREAD_MUTEX_NORMAL;
        break;
    case CTHR_MUTEX_ERRORCHECK:
        type = PTHREAD_MUTEX_ERRORCHECK;
        break;
    case CTHR_MUTEX_RECURSIVE:
        type = PTHREAD_MUTEX_RECURSIVE;
        break;
    case CTHR_MUTEX_PRIO_INHERIT:
        type = PTHREAD_MUTEX_ERRORCHECK;
        protocol = PTHREAD_PRIO_INHERIT;
        break;
    default:
        return EINVAL;
    }
    pthread_mutexattr_t attr;
    int error = pthread_mutexattr_init(&attr);
    if (error != 0) {
        return error;
    }
    error = pthread_mutexattr_settype(&attr, type);
    if (error == 0 && protocol != PTHREAD_PRIO_NONE) {
        error = pthread_mutexattr_setprotocol(&attr, protocol);
    }
    if (error == 0) {
        error = pthread_mutex_init(&mutex->raw, &attr);
    }
    (void)pthread_mutexattr_destroy(&attr);
    return error;
}

int cthr_mutex_destroy(cthr_mutex_t *mutex) {
    if (mutex == NULL) {
        return EINVAL;
    }
    return pthread_mutex_destroy(&mutex->raw);
}

int cthr_mutex_lock(cthr_mutex_t *mutex) {
    if (mutex == NULL) {
        return EINVAL;
    }
    return pthread_mutex_lock(&mutex->raw);
}

int cthr_mutex_trylock(cthr_mutex_t *mutex) {
    if (mutex == NULL) {
        return EINVAL;
    }
    int error = pthread_mutex_trylock(&mutex->raw);
    // glibc answers EDEADLK when the owner of a priority-inheriting mutex tries it again; the contract reports
    // every "held, including by you" as EBUSY, whatever the kind.
    return error == EDEADLK ? EBUSY : error;
}

// The CLOCK_REALTIME instant that corresponds to the CLOCK_MONOTONIC `deadline_ns` right now (a past deadline maps
// to "now", which still lets the lock be taken when free).
static struct timespec cthr_realtime_for_monotonic(uint64_t deadline_ns) {
    uint64_t now_mono = cthr_clock_now_ns();
    uint64_t remaining = deadline_ns > now_mono ? deadline_ns - now_mono : 0;
    struct timespec now_real;
    clock_gettime(CLOCK_REALTIME, &now_real);
    uint64_t real_ns = (uint64_t)now_real.tv_sec * 1000000000u + (uint64_t)now_real.tv_nsec;
    uint64_t target = (UINT64_MAX - real_ns < remaining) ? UINT64_MAX : real_ns + remaining;
    return cthr_clock_timespec(target);
}

int cthr_mutex_timedlock(cthr_mutex_t *mutex, uint64_t deadline_ns) {
    if (mutex == NULL) {
        return EINVAL;
    }
    if (deadline_ns == UINT64_MAX) {
        return pthread_mutex_lock(&mutex->raw);
    }
    struct timespec deadline = cthr_clock_timespec(deadline_ns);
    int error = pthread_mutex_clocklock(&mutex->raw, CLOCK_MONOTONIC, &deadline);
    if (error == EINVAL) {
        // Priority-inheriting mutexes sleep in the kernel (FUTEX_LOCK_PI), which only takes a CLOCK_MONOTONIC
        // deadline through FUTEX_LOCK_PI2 (Linux 5.14+); without it glibc rejects the monotonic clock with EINVAL.
        // Only then fall back to pthread_mutex_timedlock with the equivalent CLOCK_REALTIME deadline: that wait
        // is affected by wall-clock changes made while it sleeps. For other kinds, EINVAL comes back unchanged
        // from the fallback too (same validation), so the fallback never hides a real error.
        struct timespec real_deadline = cthr_realtime_for_monotonic(deadline_ns);
        error = pthread_mutex_timedlock(&mutex->raw, &real_deadline);
    }
    return error;
}

int cthr_mutex_unlock(cthr_mutex_t *mutex) {
    if (mutex == NULL) {
        return EINVAL;
    }
    return pthread_mutex_unlock(&mutex->raw);
}
