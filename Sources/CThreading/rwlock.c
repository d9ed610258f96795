// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <time.h>

#include "cthr_clock.h"
#include "cthr_rwlock.h"

// The calling thread's read holds (see the header): up to CTHR_RWLOCK_TRACKED locks with a count each, and a count
// of holds on locks beyond those, which are not checked. Initial-exec: two instructions to reach it.
struct cthr_rwlock_holds {
    const cthr_rwlock_t *lock[CTHR_RWLOCK_TRACKED];
    int count[CTHR_RWLOCK_TRACKED];
    int untracked;
};
static __thread struct cthr_rwlock_holds cthr_rwlock_held __attribute__((tls_model("initial-exec")));

static inline int cthr_rwlock_slot(const cthr_rwlock_t *lock) {
    for (int index = 0; index < CTHR_RWLOCK_TRACKED; index++) {
        if (cthr_rwlock_held.lock[index] == lock && cthr_rwlock_held.count[index] > 0) return index;
    }
    return -1;
}

// Records a read hold the caller just took.
static inline void cthr_rwlock_note_read(const cthr_rwlock_t *lock) {
    int slot = cthr_rwlock_slot(lock);
    if (slot < 0) {
        for (int index = 0; index < CTHR_RWLOCK_TRACKED; index++) {
            if (cthr_rwlock_held.count[index] == 0) {
                slot = index;
                cthr_rwlock_held.lock[index] = lock;
                break;
            }
        }
    }
    if (slot < 0) {
        cthr_rwlock_held.untracked++;
    } else {
        cthr_rwlock_held.count[slot]++;
    }
}

int cthr_rwlock_read_holds(const cthr_rwlock_t *lock) {
    if (lock == NULL) return 0;
    int slot = cthr_rwlock_slot(lock);
    return slot < 0 ? 0 : cthr_rwlock_held.count[slot];
}

int cthr_rwlock_init(cthr_rwlock_t *lock, int kind) {
    if (lock == NULL) {
        return EINVAL;
    }
    int preference;
    switch (kind) {
    case CTHR_RWLOCK_PREFER_READER:
        preference = PTHREAD_RWLOCK_PREFER_READER_NP;
        break;
    case CTHR_RWLOCK_PREFER_WRITER:
        preference = PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP;
        break;
    default:
        return EINVAL;
    }
    pthread_rwlockattr_t attr;
    int error = pthread_rwlockattr_init(&attr);
    if (error != 0) {
        return error;
    }
    error = pthread_rwlockattr_setkind_np(&attr, preference);
    if (error == 0) {
        error = pthread_rwlock_init(&lock->raw, &attr);
    }
    (void)pthread_rwlockattr_destroy(&attr);
    return error;
}

int cthr_rwlock_destroy(cthr_rwlock_t *lock) {
    if (lock == NULL) {
        return EINVAL;
    }
    // glibc's pthread_rwlock_destroy never reports a held lock; a write try-lock does: it fails while anyone
    // (the caller included) holds the lock in either mode.
    int error = pthread_rwlock_trywrlock(&lock->raw);
    if (error != 0) {
        return (error == EBUSY || error == EDEADLK) ? EBUSY : error;
    }
    (void)pthread_rwlock_unlock(&lock->raw);
    return pthread_rwlock_destroy(&lock->raw);
}

int cthr_rwlock_rdlock(cthr_rwlock_t *lock) {
    if (lock == NULL) {
        return EINVAL;
    }
    int error = pthread_rwlock_rdlock(&lock->raw);
    if (error == 0) cthr_rwlock_note_read(lock);
    return error;
}

int cthr_rwlock_wrlock(cthr_rwlock_t *lock) {
    if (lock == NULL) {
        return EINVAL;
    }
    if (cthr_rwlock_slot(lock) >= 0) return EDEADLK;
    return pthread_rwlock_wrlock(&lock->raw);
}

int cthr_rwlock_tryrdlock(cthr_rwlock_t *lock) {
    if (lock == NULL) {
        return EINVAL;
    }
    int error = pthread_rwlock_tryrdlock(&lock->raw);
    if (error == 0) cthr_rwlock_note_read(lock);
    return error;
}

int cthr_rwlock_trywrlock(cthr_rwlock_t *lock) {
    if (lock == NULL) {
        return EINVAL;
    }
    if (cthr_rwlock_slot(lock) >= 0) return EDEADLK;
    return pthread_rwlock_trywrlock(&lock->raw);
}

int cthr_rwlock_timedrdlock(cthr_rwlock_t *lock, uint64_t deadline_ns) {
    if (lock == NULL) {
        return EINVAL;
    }
    int error;
    if (deadline_ns == UINT64_MAX) {
        error = pthread_rwlock_rdlock(&lock->raw);
    } else {
        struct timespec deadline = cthr_clock_timespec(deadline_ns);
        error = pthread_rwlock_clockrdlock(&lock->raw, CLOCK_MONOTONIC, &deadline);
    }
    if (error == 0) cthr_rwlock_note_read(lock);
    return error;
}

int cthr_rwlock_timedwrlock(cthr_rwlock_t *lock, uint64_t deadline_ns) {
    if (lock == NULL) {
        return EINVAL;
    }
    if (cthr_rwlock_slot(lock) >= 0) return EDEADLK;
    if (deadline_ns == UINT64_MAX) {
        return pthread_rwlock_wrlock(&lock->raw);
    }
    struct timespec deadline = cthr_clock_timespec(deadline_ns);
    return pthread_rwlock_clockwrlock(&lock->raw, CLOCK_MONOTONIC, &deadline);
}

int cthr_rwlock_unlock(cthr_rwlock_t *lock) {
    if (lock == NULL) {
        return EINVAL;
    }
    int slot = cthr_rwlock_slot(lock);
    if (slot >= 0) cthr_rwlock_held.count[slot]--;  // a read hold released through the generic call
    return pthread_rwlock_unlock(&lock->raw);
}

int cthr_rwlock_rdunlock(cthr_rwlock_t *lock) {
    if (lock == NULL) {
        return EINVAL;
    }
    int slot = cthr_rwlock_slot(lock);
    if (slot >= 0) {
        cthr_rwlock_held.count[slot]--;
    } else if (cthr_rwlock_held.untracked > 0) {
        cthr_rwlock_held.untracked--;  // one of the holds beyond the table: not checked
    } else {
        return EPERM;
    }
    return pthread_rwlock_unlock(&lock->raw);
}
