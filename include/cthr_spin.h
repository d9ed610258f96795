// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

// A test-and-test-and-set spin lock whose word holds the owner's thread id, with `pause` and bounded backoff that
// yields the CPU, so it stays usable when threads outnumber cores.
//
// The uncontended paths are `static inline` here so Swift inlines them: locking is one compare-exchange (0 to the
// caller's id, acquire), unlocking a load of the word (is it exactly the caller's id?) and one release store of 0.
// Owning the lock means the word holds your kernel thread id (`cthr_lock_self`, cached per thread), so relocking
// and unlocking by a non-owner are detected for free, as in `cthr_lock_t`. Word layout:
//   bits 0-29  owner thread id (0 = free)
//   bit  30    SLOW: every fast path fails and the caller takes its slow path (statistics); only changed by the
//              owner, since only the owner writes the word while it is held
#ifndef CTHREADING_SPIN_H
#define CTHREADING_SPIN_H

#include "cthr_lock.h"
#include "cthr_nullability.h"
#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define CTHR_SPIN_OWNER_MASK 0x3fffffffu
#define CTHR_SPIN_SLOW 0x40000000u

// A spin lock: owner id | SLOW. Zero-initialised is a valid free lock. Must not move while in use.
typedef struct cthr_spin {
    cthr_atomic_u32_t state;
} cthr_spin_t;

// Takes a free lock with one compare-exchange (acquire). Returns false when the lock is held or its SLOW bit is
// set: the caller then calls `cthr_spin_lock`.
static inline bool cthr_spin_fast_lock(cthr_spin_t *_Nonnull lock) {
    uint32_t expected = 0;
    return cthr_atomic_u32_compare_exchange_strong(&lock->state, &expected, cthr_lock_self(), CTHR_ACQUIRE,
                                                   CTHR_RELAXED);
}

// Releases a lock the caller holds (without the SLOW bit): a load that checks the word is exactly the caller's id,
// then one release store of 0 (only the owner writes a held word, so nothing can change between the two). Returns
// false without changing anything otherwise (not the owner, or SLOW set): the caller then calls `cthr_spin_unlock`.
static inline bool cthr_spin_fast_unlock(cthr_spin_t *_Nonnull lock) {
    if (cthr_atomic_u32_load(&lock->state, CTHR_RELAXED) != cthr_lock_self()) return false;
    cthr_atomic_u32_store(&lock->state, 0, CTHR_RELEASE);
    return true;
}

// Initializes *lock as free. Returns 0 or EINVAL (NULL).
int cthr_spin_init(cthr_spin_t *_Nullable lock);

// Takes the lock (keeping its SLOW bit), spinning with `pause`, then backing off, then yielding. Returns 0,
// EDEADLK (the caller holds it; nothing changes) or EINVAL (NULL).
int cthr_spin_lock(cthr_spin_t *_Nullable lock);

// Takes the lock if free (whatever its SLOW bit). Returns 0, EBUSY (held, by the caller too) or EINVAL.
int cthr_spin_trylock(cthr_spin_t *_Nullable lock);

// Releases the lock held by the caller, keeping its SLOW bit (release store). Returns 0, EINVAL (NULL) or EPERM
// (the caller does not hold it: free, or held by another thread; nothing changes).
int cthr_spin_unlock(cthr_spin_t *_Nullable lock);

// The id of the thread holding the lock, 0 when free or for NULL (relaxed load: a snapshot).
uint32_t cthr_spin_owner(const cthr_spin_t *_Nullable lock);

// Sets (`on` true) or clears the SLOW bit. The caller must hold the lock. Returns 0, EINVAL (NULL) or EPERM.
int cthr_spin_set_slow(cthr_spin_t *_Nullable lock, bool on);

#ifdef __cplusplus
}
#endif
#endif // CTHREADING_SPIN_H
