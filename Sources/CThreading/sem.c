// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <semaphore.h>
#include <time.h>

#include "cthr_clock.h"
#include "cthr_sem.h"
#include "cthr_tsan.h"

unsigned int cthr_sem_value_max(void) {
    return (unsigned int)SEM_VALUE_MAX;
}

int cthr_sem_init(cthr_sem_t *sem, unsigned int value) {
    if (sem == NULL || value > cthr_sem_value_max()) {
        return EINVAL;
    }
    return sem_init(&sem->raw, 0, value) == 0 ? 0 : errno;
}

int cthr_sem_destroy(cthr_sem_t *sem) {
    if (sem == NULL) {
        return EINVAL;
    }
    return sem_destroy(&sem->raw) == 0 ? 0 : errno;
}

int cthr_sem_wait(cthr_sem_t *sem) {
    if (sem == NULL) {
        return EINVAL;
    }
    // EINTR only means a signal handler ran; the contract is to keep waiting.
    while (sem_wait(&sem->raw) != 0) {
        if (errno != EINTR) {
            return errno;
        }
    }
    return 0;
}

int cthr_sem_trywait(cthr_sem_t *sem) {
    if (sem == NULL) {
        return EINVAL;
    }
    return sem_trywait(&sem->raw) == 0 ? 0 : errno;
}

int cthr_sem_timedwait(cthr_sem_t *sem, uint64_t deadline_ns) {
    if (sem == NULL) {
        return EINVAL;
    }
    if (deadline_ns == UINT64_MAX) {
        return cthr_sem_wait(sem);
    }
    struct timespec deadline = cthr_clock_timespec(deadline_ns);
    // The deadline is absolute, so restarting after a signal does not extend the wait.
    while (sem_clockwait(&sem->raw, CLOCK_MONOTONIC, &deadline) != 0) {
        if (errno != EINTR) {
            return errno;
        }
    }
    // ThreadSanitizer does not intercept sem_clockwait, so it would not see that the unit taken here was posted
    // after the poster's writes: acquire what cthr_sem_post released.
    CTHR_TSAN_ACQUIRE(sem);
    return 0;
}

int cthr_sem_post(cthr_sem_t *sem) {
    if (sem == NULL) {
        return EINVAL;
    }
    // Paired with the acquire in cthr_sem_timedwait (the intercepted sem_wait and sem_trywait need no help).
    CTHR_TSAN_RELEASE(sem);
    return sem_post(&sem->raw) == 0 ? 0 : errno;
}

int cthr_sem_getvalue(cthr_sem_t *sem, int *out) {
    if (sem == NULL || out == NULL) {
        return EINVAL;
    }
    return sem_getvalue(&sem->raw, out) == 0 ? 0 : errno;
}
