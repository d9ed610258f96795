// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

// Reader-writer locks (pthread_rwlock_*), reader- or writer-preferring.
#ifndef CTHREADING_RWLOCK_H
#define CTHREADING_RWLOCK_H

#include "cthr_nullability.h"
#include <pthread.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

// Preference for `cthr_rwlock_init`.
typedef enum cthr_rwlock_kind {
    CTHR_RWLOCK_PREFER_READER = 0,  // glibc default: readers may starve a writer
    CTHR_RWLOCK_PREFER_WRITER = 1,  // PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP: a waiting writer blocks new readers
} cthr_rwlock_kind_t;

// A reader-writer lock. Must not move after init.
typedef struct cthr_rwlock {
    pthread_rwlock_t raw;
} cthr_rwlock_t;

// Initializes *lock with `kind`. Returns 0, EINVAL (NULL, unknown kind) or ENOMEM.
int cthr_rwlock_init(cthr_rwlock_t *_Nullable lock, int kind);

// Destroys an unlocked lock. Returns 0, EINVAL (NULL) or EBUSY (held by anyone, checked with a write try-lock since
// glibc does not detect it; a thread locking it concurrently with destroy is undefined).
int cthr_rwlock_destroy(cthr_rwlock_t *_Nullable lock);

// Read holds are tracked per thread (a small thread-local table of the locks the thread holds for reading, with a
// count each), in every build: no shared counter, so readers on different cores write nothing in common. With it,
// a read unlock by a thread that holds no read hold is refused (EPERM) instead of corrupting the lock, and a write
// request by a thread that holds a read hold (an upgrade, which would wait for itself) is refused (EDEADLK). A
// thread holding more than CTHR_RWLOCK_TRACKED distinct locks for reading at once is tracked by count only for the
// extra ones (their unlocks are not checked).
#define CTHR_RWLOCK_TRACKED 8

// Takes a shared (read) hold. Returns 0, EINVAL, EAGAIN (too many readers) or EDEADLK (caller holds it for writing).
int cthr_rwlock_rdlock(cthr_rwlock_t *_Nullable lock);

// Takes the exclusive (write) hold. Returns 0, EINVAL or EDEADLK (caller already holds it, for writing or reading).
int cthr_rwlock_wrlock(cthr_rwlock_t *_Nullable lock);

// Read hold if available now. Returns 0, EBUSY or EINVAL.
int cthr_rwlock_tryrdlock(cthr_rwlock_t *_Nullable lock);

// Write hold if available now. Returns 0, EBUSY, EDEADLK (caller holds it for reading) or EINVAL.
int cthr_rwlock_trywrlock(cthr_rwlock_t *_Nullable lock);

// Read hold, waiting until `deadline_ns` on CLOCK_MONOTONIC at most (pthread_rwlock_clockrdlock).
// Returns 0, ETIMEDOUT, EDEADLK or EINVAL.
int cthr_rwlock_timedrdlock(cthr_rwlock_t *_Nullable lock, uint64_t deadline_ns);

// Write hold, waiting until `deadline_ns` on CLOCK_MONOTONIC at most (pthread_rwlock_clockwrlock).
// Returns 0, ETIMEDOUT, EDEADLK (caller holds it, for writing or reading) or EINVAL.
int cthr_rwlock_timedwrlock(cthr_rwlock_t *_Nullable lock, uint64_t deadline_ns);

// Releases the caller's hold: a tracked read hold if the caller has one, else its write hold. Returns 0 or EINVAL
// (NULL). Unlocking a lock the caller does not hold is undefined (glibc does not check): release read holds with
// `cthr_rwlock_rdunlock`, which refuses a stray unlock; the Swift layer tracks the writer.
int cthr_rwlock_unlock(cthr_rwlock_t *_Nullable lock);

// Releases one of the caller's read holds. Returns 0, EINVAL (NULL) or EPERM (the caller holds no read hold on it;
// nothing changes).
int cthr_rwlock_rdunlock(cthr_rwlock_t *_Nullable lock);

// How many read holds the calling thread has on `lock` (as tracked; 0 for NULL).
int cthr_rwlock_read_holds(const cthr_rwlock_t *_Nullable lock);

#ifdef __cplusplus
}
#endif
#endif // CTHREADING_RWLOCK_H
