// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

#include <errno.h>
#include <stddef.h>
#include <stdint.h>

#include "cthr_lock.h"
#include "cthr_rlock.h"

int cthr_rlock_init(cthr_rlock_t *lock) {
    if (lock == NULL) return EINVAL;
    lock->depth = 0;
    return cthr_lock_init(&lock->lock);
}

// When the caller owns the lock: one more level (EAGAIN at the limit). Only the owner reaches `depth`.
static int cthr_rlock_nest(cthr_rlock_t *lock) {
    if (lock->depth >= CTHR_RLOCK_MAX_DEPTH) return EAGAIN;
    lock->depth++;
    return 0;
}

int cthr_rlock_trylock(cthr_rlock_t *lock) {
    if (lock == NULL) return EINVAL;
    int rc = cthr_lock_trylock(&lock->lock);
    return rc == EDEADLK ? cthr_rlock_nest(lock) : rc;
}

int cthr_rlock_lock_slow(cthr_rlock_t *lock, uint64_t deadline_ns) {
    if (lock == NULL) return EINVAL;
    // The caller's own hold (in a forked child's first thread, also one its forking thread had: see
    // `cthr_lock_held_by_caller`) nests.
    if (cthr_lock_held_by_caller(&lock->lock)) return cthr_rlock_nest(lock);
    // Not the owner: the futex lock's slow path (it cannot report EDEADLK, since the caller does not hold it).
    return cthr_lock_lock_slow(&lock->lock, deadline_ns);
}

int cthr_rlock_unlock_slow(cthr_rlock_t *lock) {
    if (lock == NULL) return EINVAL;
    if (!cthr_lock_held_by_caller(&lock->lock)) return EPERM;
    if (lock->depth != 0) {
        lock->depth--;
        return 0;
    }
    return cthr_lock_unlock_slow(&lock->lock);
}

uint32_t cthr_rlock_held_depth(const cthr_rlock_t *lock) {
    if (lock == NULL || !cthr_lock_held_by_caller(&lock->lock)) return 0;
    return lock->depth + 1;
}

_Static_assert(offsetof(cthr_rlock_t, lock) == 0, "RecursiveLock reaches the futex lock at offset 0");
