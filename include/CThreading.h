// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

// Umbrella header of CThreading, the C layer of Threading.
//
// Conventions for every declaration below:
// - every symbol starts with `cthr_` (types end in `_t`, constants are `CTHR_`);
// - a function that can fail returns 0 on success or an errno value (never -1 + errno); it never aborts or
//   prints, and never retries a call that failed: the caller decides. Pure queries (self, equality, "is main")
//   return their answer directly;
// - a wait cut short by a signal handler (EINTR) is not a failure: the function resumes waiting until its
//   deadline. The one exception is cthr_futex_wait, the raw futex call, which reports EINTR to its caller;
// - NULL pointers, invalid kinds and invalid sizes (zero where a count is required, a count or capacity beyond what
//   the object can hold, a negative size converted to size_t) give EINVAL. The one deliberate exception: an output
//   buffer too small for the result gives ERANGE, like pthread_getname_np (cthr_thread_get_name, even with a
//   capacity of 0);
// - objects (mutexes, conditions, locks, semaphores, once flags) must not move after init: allocate them on the heap.
// Timed operations take absolute deadlines in nanoseconds on CLOCK_MONOTONIC (see `cthr_clock_now_ns`).
//
// Building against these headers from C or C++: they need the POSIX.1-2008 declarations of <pthread.h> and <time.h>
// (the default of GCC and Clang, `-std=gnu11` or later; with a strict `-std=c11`, define _POSIX_C_SOURCE=200809L).
// Outside SwiftPM, `scripts/c-package.sh install PREFIX` installs the library with a pkg-config file:
// `cc server.c $(pkg-config --cflags --libs --static cthreading)` (see examples/c/counters.c).
#ifndef CTHREADING_H
#define CTHREADING_H

#include "cthr_clock.h"
#include "cthr_thread.h"
#include "cthr_tsd.h"
#include "cthr_mutex.h"
#include "cthr_rwlock.h"
#include "cthr_spin.h"
#include "cthr_sem.h"
#include "cthr_futex.h"
#include "cthr_lock.h"
#include "cthr_rlock.h"
#include "cthr_atomic.h"
#include "cthr_once.h"
#include "cthr_rcu.h"

#endif // CTHREADING_H
