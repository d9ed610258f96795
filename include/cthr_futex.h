// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

// Linux futexes on a 32-bit word (FUTEX_WAIT_BITSET with CLOCK_MONOTONIC, FUTEX_WAKE), process-private:
// the building block of the worker pools' parking.
#ifndef CTHREADING_FUTEX_H
#define CTHREADING_FUTEX_H

#include "cthr_nullability.h"
#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

// Sleeps while *word == expected, until woken or `deadline_ns` (CLOCK_MONOTONIC; UINT64_MAX = forever).
// Returns 0 (woken, or maybe spuriously), EAGAIN (*word != expected on entry), ETIMEDOUT, EINTR or EINVAL (NULL).
int cthr_futex_wait(uint32_t *_Nullable word, uint32_t expected, uint64_t deadline_ns);

// Wakes up to `count` threads sleeping on `word` (INT32_MAX for all). Stores how many were woken in *woken
// (may be NULL). Returns 0 or EINVAL.
int cthr_futex_wake(uint32_t *_Nullable word, int32_t count, int32_t *_Nullable woken);

// One round of the short wait before a futex sleep, for a caller that just looked and did not find what it waits
// for (a free lock, a unit, a signal). Rounds 0 to `spins` - 1 pause the CPU 1, 2, 4, ... times, doubling up to 32
// (10 rounds: about 190 pauses, some 4 us), so the caller looks at the shared line seldom and the thread that will
// release it keeps it meanwhile; from round `spin_yields_from` on (`spins` or more: never) each of them also gives
// the processor up once with sched_yield (a thread runnable on this CPU, the holder perhaps, runs now instead of
// after the spin; with none, the call returns at once). The next `yields` rounds only yield. Returns true when the
// caller should look again, false (without waiting) once the rounds are used up or, before a yield-only round,
// `deadline_ns` (CLOCK_MONOTONIC; UINT64_MAX = none) has passed: the caller then sleeps or gives up. The policy of
// the lock (which yields from the third round: it waits for a holder that may need this CPU), its condition and the
// semaphore (which do not: they wait for a signal that usually comes from another running thread): a wait that ends
// within a few microseconds costs no sleep and the other side no wake-up system call.
bool cthr_futex_backoff(int round, int spins, int spin_yields_from, int yields, uint64_t deadline_ns);

#ifdef __cplusplus
}
#endif
#endif // CTHREADING_FUTEX_H
