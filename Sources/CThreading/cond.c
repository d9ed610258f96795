// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

#include <errno.h>
#include <pthread.h>
#include <time.h>

#include "cthr_clock.h"
#include "cthr_cond.h"

int cthr_cond_init(cthr_cond_t *cond) {
    if (cond == NULL) {
        return EINVAL;
    }
    pthread_condattr_t attr;
    int error = pthread_condattr_init(&attr);
    if (error != 0) {
        return error;
    }
    error = pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    if (error == 0) {
        error = pthread_cond_init(&cond->raw, &attr);
    }
    (void)pthread_condattr_destroy(&attr);
    return error;
}

int cthr_cond_destroy(cthr_cond_t *cond) {
    if (cond == NULL) {
        return EINVAL;
    }
    return pthread_cond_destroy(&cond->raw);
}

int cthr_cond_wait(cthr_cond_t *cond, cthr_mutex_t *mutex) {
    if (cond == NULL || mutex == NULL) {
        return EINVAL;
    }
    return pthread_cond_wait(&cond->raw, &mutex->raw);
}

int cthr_cond_timedwait(cthr_cond_t *cond, cthr_mutex_t *mutex, uint64_t deadline_ns) {
    if (cond == NULL || mutex == NULL) {
        return EINVAL;
    }
    if (deadline_ns == UINT64_MAX) {
        return pthread_cond_wait(&cond->raw, &mutex->raw);
    }
    // The condition was created with CLOCK_MONOTONIC, so the absolute deadline is read on that clock.
    struct timespec deadline = cthr_clock_timespec(deadline_ns);
    return pthread_cond_timedwait(&cond->raw, &mutex->raw, &deadline);
}

int cthr_cond_timedwait_relative(cthr_cond_t *cond, cthr_mutex_t *mutex, uint64_t timeout_ns) {
    return cthr_cond_timedwait(cond, mutex, cthr_clock_deadline_after(timeout_ns));
}

int cthr_cond_signal(cthr_cond_t *cond) {
    if (cond == NULL) {
        return EINVAL;
    }
    return pthread_cond_signal(&cond->raw);
}

int cthr_cond_broadcast(cthr_cond_t *cond) {
    if (cond == NULL) {
        return EINVAL;
    }
    return pthread_cond_broadcast(&cond->raw);
}
