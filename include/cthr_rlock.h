// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

// A recursive lock: CThreading's futex lock (`cthr_lock_t`, owner's thread id in the word) plus a nesting depth.
//
// The pool of Threading's `RecursiveLock`. Ownership costs nothing extra: the owner is the word of the futex
// lock, so "does the caller already hold it?" is the fast path's load of the word, and the depth is a plain field
// that only the owner reads or writes (ownership passes with the lock word's acquire and release, so the field needs
// no atomic). The first acquisition is a load and one compare-exchange, a nested one a load and an increment, a
// nested release a load and a decrement, the last release `cthr_lock_fast_unlock`.
#ifndef CTHREADING_RLOCK_H
#define CTHREADING_RLOCK_H

#include "cthr_lock.h"
#include "cthr_nullability.h"
#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

// Deepest nesting: acquisitions beyond it are refused with EAGAIN (pthread's recursive mutex uses the same code).
#define CTHR_RLOCK_MAX_DEPTH 0xfffffffeu

// A recursive lock: initialise with `cthr_rlock_init` or all fields zero (free). Must not move while in use.
typedef struct cthr_rlock {
    cthr_lock_t lock;  // the futex lock; its word holds the owner's id (and SLOW)
    uint32_t depth;    // nested acquisitions beyond the first; read and written only by the owner
} cthr_rlock_t;

// Initializes *lock as free. Returns 0 or EINVAL (NULL).
int cthr_rlock_init(cthr_rlock_t *_Nullable lock);

// Takes the lock, or one more level of it: a load, then one compare-exchange when free; when the caller owns it
// (the load read the caller's id), an increment of `depth`. Returns false (nothing changed) when another
// thread holds it, SLOW or REGISTERED is set or the depth is at its limit: the caller then calls
// `cthr_rlock_lock_slow`.
static inline bool cthr_rlock_fast_lock(cthr_rlock_t *_Nonnull lock) {
    uint32_t self = cthr_lock_self();
    uint32_t expected = cthr_atomic_u32_load(&lock->lock.word, CTHR_RELAXED);
    if (expected == 0) {
        if (cthr_atomic_u32_compare_exchange_strong(&lock->lock.word, &expected, self, CTHR_ACQUIRE, CTHR_RELAXED)) {
            return true;
        }
        cthr_lock_count_fast_miss();
    }
    if (expected == self && lock->depth < CTHR_RLOCK_MAX_DEPTH) {
        lock->depth++;
        return true;
    }
    return false;
}

// Releases one level of a lock the caller holds (SLOW clear): a nested level is a decrement of `depth`, the last
// one `cthr_lock_fast_unlock`. Returns false (nothing changed) when the word is not the caller's id alone: the
// caller then calls `cthr_rlock_unlock_slow`, which diagnoses a foreign unlock (and releases a word with HANDOFF).
static inline bool cthr_rlock_fast_unlock(cthr_rlock_t *_Nonnull lock) {
    // The owner field and SLOW change only under the owner.
    if (cthr_atomic_u32_load(&lock->lock.word, CTHR_RELAXED) != cthr_lock_self()) return false;
    if (lock->depth != 0) {
        lock->depth--;
        return true;
    }
    return cthr_lock_fast_unlock(&lock->lock);
}

// Takes the lock if possible without waiting (one more level when the caller holds it). Returns 0, EBUSY (another
// thread holds it), EAGAIN (the depth is at its limit) or EINVAL (NULL).
int cthr_rlock_trylock(cthr_rlock_t *_Nullable lock);

// Takes the lock or one more level of it, waiting until `deadline_ns` on CLOCK_MONOTONIC at most (UINT64_MAX =
// forever; a deadline in the past still takes a free lock). Returns 0, ETIMEDOUT, EAGAIN (depth limit) or EINVAL.
int cthr_rlock_lock_slow(cthr_rlock_t *_Nullable lock, uint64_t deadline_ns);

// Releases one level of the lock, keeping SLOW. Returns 0, EPERM (the caller does not hold it; nothing changes)
// or EINVAL (NULL).
int cthr_rlock_unlock_slow(cthr_rlock_t *_Nullable lock);

// The nesting depth the caller holds (1 for a single hold), or 0 when the caller does not hold the lock or NULL. As
// for the plain lock (`cthr_lock_held_by_caller`), a forked child's first thread holds what its forking thread held;
// it nests and releases such a hold like its own.
uint32_t cthr_rlock_held_depth(const cthr_rlock_t *_Nullable lock);

#ifdef __cplusplus
}
#endif
#endif // CTHREADING_RLOCK_H
