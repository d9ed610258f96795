// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

#define _GNU_SOURCE
#include <errno.h>
#include <linux/futex.h>
#include <sched.h>
#include <stddef.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "cthr_atomic.h"
#include "cthr_clock.h"
#include "cthr_futex.h"

int cthr_futex_wait(uint32_t *word, uint32_t expected, uint64_t deadline_ns) {
    if (word == NULL) {
        return EINVAL;
    }
    // FUTEX_WAIT_BITSET takes an absolute deadline, on CLOCK_MONOTONIC unless FUTEX_CLOCK_REALTIME is given, so
    // a wait restarted after EINTR keeps the same deadline. NULL means no deadline.
    struct timespec deadline;
    struct timespec *timeout = NULL;
    if (deadline_ns != UINT64_MAX) {
        deadline = cthr_clock_timespec(deadline_ns);
        timeout = &deadline;
    }
    long result = syscall(SYS_futex, word, FUTEX_WAIT_BITSET_PRIVATE, expected, timeout, NULL,
                          FUTEX_BITSET_MATCH_ANY);
    return result == 0 ? 0 : errno;
}

int cthr_futex_wake(uint32_t *word, int32_t count, int32_t *woken) {
    if (word == NULL || count < 0) {
        return EINVAL;
    }
    long result = syscall(SYS_futex, word, FUTEX_WAKE_PRIVATE, count, NULL, NULL, 0);
    if (result < 0) {
        return errno;
    }
    if (woken != NULL) {
        *woken = (int32_t)result;
    }
    return 0;
}

// The pauses of a spin round double up to 2^CTHR_FUTEX_BACKOFF_DOUBLINGS (see cthr_futex.h).
#ifndef CTHR_FUTEX_BACKOFF_DOUBLINGS
#define CTHR_FUTEX_BACKOFF_DOUBLINGS 5
#endif

bool cthr_futex_backoff(int round, int spins, int spin_yields_from, int yields, uint64_t deadline_ns) {
    if (round < spins) {
        int pauses = round < CTHR_FUTEX_BACKOFF_DOUBLINGS ? 1 << round : 1 << CTHR_FUTEX_BACKOFF_DOUBLINGS;
        for (int pause = 0; pause < pauses; pause++) cthr_cpu_relax();
        if (round >= spin_yields_from) (void)sched_yield();
        return true;
    }
    if (round >= spins + yields) return false;
    if (deadline_ns != UINT64_MAX && cthr_clock_now_ns() >= deadline_ns) return false;
    (void)sched_yield();
    return true;
}
