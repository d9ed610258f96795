// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

// Thread-specific data keys (pthread_key_*).
#ifndef CTHREADING_TSD_H
#define CTHREADING_TSD_H

#include "cthr_nullability.h"
#include <pthread.h>
#include <stdint.h>

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

// A per-thread cache in front of the keys, for the hot read of Threading's `ThreadLocal`: a read that hits it is one
// load from the thread's own static TLS and a compare, with no call (`pthread_getspecific` is a call into libc and
// a check of the key's sequence number). Each cached variable has an id from `cthr_tsd_cache_id`, unique for the
// life of the process, so an entry left behind by a variable that no longer exists can never match a later one:
// nothing has to be cleared in other threads when a variable goes away. The entry of id `i` is slot
// `i % CTHR_TSD_CACHE_SLOTS`; two live variables with the same slot take turns (a miss goes back to the key).
#define CTHR_TSD_CACHE_SLOTS 32u

typedef struct cthr_tsd_cache_entry {
    uint64_t id;            // 0: empty
    void *_Nullable value;  // what the variable's key holds for this thread
} cthr_tsd_cache_entry_t;

// The calling thread's cache. Initial-exec, so two instructions away; only its own thread touches it.
extern __thread cthr_tsd_cache_entry_t cthr_tsd_cache[CTHR_TSD_CACHE_SLOTS] __attribute__((tls_model("initial-exec")));

// A new id for a cached variable: never 0, never handed out twice.
uint64_t cthr_tsd_cache_id(void);

// The value cached by the calling thread for `id`, or NULL (not cached: read the key).
static inline void *_Nullable cthr_tsd_cache_get(uint64_t id) {
    cthr_tsd_cache_entry_t *entry = &cthr_tsd_cache[id % CTHR_TSD_CACHE_SLOTS];
    return entry->id == id ? entry->value : NULL;
}

// Caches `value` for `id` in the calling thread (replacing whatever shared its slot).
static inline void cthr_tsd_cache_set(uint64_t id, void *_Nullable value) {
    cthr_tsd_cache_entry_t *entry = &cthr_tsd_cache[id % CTHR_TSD_CACHE_SLOTS];
    entry->id = id;
    entry->value = value;
}

// Forgets every entry of the calling thread (at thread exit, before the cached values are released).
void cthr_tsd_cache_clear(void);

#ifdef __cplusplus
}
#endif
#endif // CTHREADING_TSD_H
