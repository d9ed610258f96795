// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

// A test-and-test-and-set spin lock on C11 atomics, with `pause` and bounded backoff that yields the CPU, so it
// stays usable when threads outnumber cores.
#ifndef CTHREADING_SPIN_H
#define CTHREADING_SPIN_H

#include "cthr_nullability.h"
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

// A spin lock: 0 = free, 1 = held. Zero-initialised is a valid free lock. Must not move while in use.
typedef struct cthr_spin {
    uint32_t state;
} cthr_spin_t;

// Initializes *lock as free. Returns 0 or EINVAL (NULL).
int cthr_spin_init(cthr_spin_t *_Nullable lock);

// Takes the lock, spinning with `pause`, then backing off, then yielding. Returns 0 or EINVAL (NULL).
int cthr_spin_lock(cthr_spin_t *_Nullable lock);

// Takes the lock if free. Returns 0, EBUSY or EINVAL.
int cthr_spin_trylock(cthr_spin_t *_Nullable lock);

// Releases the lock (release store). Returns 0, EINVAL (NULL) or EPERM (the lock was free). Any thread may release
// a held lock (there is no owner); two threads racing to release the same lock is undefined.
int cthr_spin_unlock(cthr_spin_t *_Nullable lock);

#ifdef __cplusplus
}
#endif
#endif // CTHREADING_SPIN_H
