// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <time.h>

#include "cthr_clock.h"
#include "cthr_rwlock.h"

int cthr_rwlock_init(cthr_rwlock_t *lock, int kind) {
    if (lock == NULL) {
        return EINVAL;
    }
    int preference;
    switch (kind) {
    case CTHR_RWLOCK_PREFER_READER:
        preference = PTHREAD_RWLOCK_PREFER_READER_NP;
        break;
    case CTHR_RWLOCK_PREFER_WRITER:
        preference = PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP;
        break;
    default:
        return EINVAL;
    }
    pthread_rwlockattr_t attr;
    int error = pthread_rwlockattr_init(&attr);
    if (error != 0) {
        return error;
    }
    error = pthread_rwlockattr_setkind_np(&attr, preference);
    if (error == 0) {
        error = pthread_rwlock_init(&lock->raw, &attr);
    }
    (void)pthread_rwlockattr_destroy(&attr);
    return error;
}

int cthr_rwlock_destroy(cthr_rwlock_t *lock) {
    if (lock == NULL) {
        return EINVAL;
    }
    // glibc's pthread_rwlock_destroy never reports a held lock; a write try-lock does: it fails while anyone
    // (the caller included) holds the lock in either mode.
    int error = pthread_rwlock_trywrlock(&lock->raw);
    if (error != 0) {
        return (error == EBUSY || error == EDEADLK) ? EBUSY : error;
    }
    (void)pthread_rwlock_unlock(&lock->raw);
    return pthread_rwlock_destroy(&lock->raw);
}

int cthr_rwlock_rdlock(cthr_rwlock_t *lock) {
    if (lock == NULL) {
        return EINVAL;
    }
    return pthread_rwlock_rdlock(&lock->raw);
}

int cthr_rwlock_wrlock(cthr_rwlock_t *lock) {
    if (lock == NULL) {
        return EINVAL;
    }
    return pthread_rwlock_wrlock(&lock->raw);
}

int cthr_rwlock_tryrdlock(cthr_rwlock_t *lock) {
    if (lock == NULL) {
        return EINVAL;
    }
    return pthread_rwlock_tryrdlock(&lock->raw);
}

int cthr_rwlock_trywrlock(cthr_rwlock_t *lock) {
    if (lock == NULL) {
        return EINVAL;
    }
    return pthread_rwlock_trywrlock(&lock->raw);
}

int cthr_rwlock_timedrdlock(cthr_rwlock_t *lock, uint64_t deadline_ns) {
    if (lock == NULL) {
        return EINVAL;
    }
    if (deadline_ns == UINT64_MAX) {
        return pthread_rwlock_rdlock(&lock->raw);
    }
    struct timespec deadline = cthr_clock_timespec(deadline_ns);
    return pthread_rwlock_clockrdlock(&lock->raw, CLOCK_MONOTONIC, &deadline);
}

int cthr_rwlock_timedwrlock(cthr_rwlock_t *lock, uint64_t deadline_ns) {
    if (lock == NULL) {
        return EINVAL;
    }
    if (deadline_ns == UINT64_MAX) {
        return pthread_rwlock_wrlock(&lock->raw);
    }
    struct timespec deadline = cthr_clock_timespec(deadline_ns);
    return pthread_rwlock_clockwrlock(&lock->raw, CLOCK_MONOTONIC, &deadline);
}

int cthr_rwlock_unlock(cthr_rwlock_t *lock) {
    if (lock == NULL) {
        return EINVAL;
    }
    return pthread_rwlock_unlock(&lock->raw);
}
