// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

// Thread-specific data keys (pthread_key_*).
#ifndef CTHREADING_TSD_H
#define CTHREADING_TSD_H

#include "cthr_nullability.h"
#include <pthread.h>

#ifdef __cplusplus
extern "C" {
#endif

// Called at thread exit with the thread's non-NULL value for a key.
typedef void (*cthr_tsd_destructor_t)(void *_Nonnull value);

// Creates a key whose per-thread values start NULL; `destructor` (may be NULL) runs at thread exit for each
// non-NULL value. Returns 0, EINVAL (NULL out), EAGAIN (keys exhausted: PTHREAD_KEYS_MAX) or ENOMEM.
int cthr_tsd_create(pthread_key_t *_Nullable out, cthr_tsd_destructor_t _Nullable destructor);

// Deletes a key. Destructors are NOT called for values still set (POSIX); the Swift layer releases them itself.
// Returns 0 or EINVAL.
int cthr_tsd_delete(pthread_key_t key);

// The calling thread's value for `key` (NULL if never set). Inline, so a read from Swift is one libc call.
static inline void *_Nullable cthr_tsd_get(pthread_key_t key) {
    return pthread_getspecific(key);
}

// Sets the calling thread's value for `key` (the old value is not destroyed). Returns 0, EINVAL or ENOMEM.
int cthr_tsd_set(pthread_key_t key, const void *_Nullable value);

#ifdef __cplusplus
}
#endif
#endif // CTHREADING_TSD_H
