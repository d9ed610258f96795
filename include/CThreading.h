// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

// Umbrella header of CThreading, the C layer of Threading.
//
// Conventions for every declaration below:
// - every symbol starts with `cthr_` (types end in `_t`, constants are `CTHR_`);
// - a function that can fail returns 0 on success or an errno value (never -1 + errno); it never aborts, prints
//   or retries: the caller decides. Pure queries (self, equality, "is main") return their answer directly;
// - NULL pointers, invalid kinds and invalid sizes give EINVAL;
// - objects (mutexes, conditions, locks, semaphores, once flags) must not move after init: allocate them on the heap.
// Timed operations take absolute deadlines in nanoseconds on CLOCK_MONOTONIC (see `cthr_clock_now_ns`).
#ifndef CTHREADING_H
#define CTHREADING_H

#include "cthr_clock.h"
#include "cthr_thread.h"
#include "cthr_tsd.h"
#include "cthr_mutex.h"
#include "cthr_cond.h"
#include "cthr_rwlock.h"
#include "cthr_spin.h"
#include "cthr_sem.h"
#include "cthr_futex.h"
#include "cthr_lock.h"
#include "cthr_atomic.h"
#include "cthr_once.h"
#include "cthr_rcu.h"

#endif // CTHREADING_H
