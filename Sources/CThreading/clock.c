// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

#define _GNU_SOURCE
#include <errno.h>
#include <time.h>

#include "cthr_clock.h"

int cthr_sleep_ns(uint64_t ns) {
    struct timespec deadline = cthr_clock_timespec(cthr_clock_deadline_after(ns));
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &deadline, NULL) == EINTR) {
    }
    return 0;
}
