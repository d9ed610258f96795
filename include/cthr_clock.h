// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

// Monotonic time, the one clock every timed operation of CThreading uses.
#ifndef CTHREADING_CLOCK_H
#define CTHREADING_CLOCK_H

#include <stdint.h>
#include <time.h>

#ifdef __cplusplus
extern "C" {
#endif

// Nanoseconds on CLOCK_MONOTONIC (not affected by wall-clock changes). Never fails on Linux.
static inline uint64_t cthr_clock_now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

// Converts an absolute CLOCK_MONOTONIC deadline in nanoseconds to a timespec for the pthread *clock* calls.
static inline struct timespec cthr_clock_timespec(uint64_t deadline_ns) {
    struct timespec ts;
    ts.tv_sec = (time_t)(deadline_ns / 1000000000u);
    ts.tv_nsec = (long)(deadline_ns % 1000000000u);
    return ts;
}

// Deadline `timeout_ns` from now, saturating at UINT64_MAX (which every timed call treats as "no deadline").
static inline uint64_t cthr_clock_deadline_after(uint64_t timeout_ns) {
    uint64_t now = cthr_clock_now_ns();
    return (UINT64_MAX - now < timeout_ns) ? UINT64_MAX : now + timeout_ns;
}

// Sleeps the calling thread for `ns` nanoseconds (restarting after signals). Returns 0.
int cthr_sleep_ns(uint64_t ns);

#ifdef __cplusplus
}
#endif
#endif // CTHREADING_CLOCK_H
