// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

#include <errno.h>
#include <pthread.h>
#include <string.h>

#include "cthr_atomic.h"
#include "cthr_tsd.h"

__thread cthr_tsd_cache_entry_t cthr_tsd_cache[CTHR_TSD_CACHE_SLOTS] __attribute__((tls_model("initial-exec")));

static cthr_atomic_u64_t cthr_tsd_cache_next_id = {0};

int cthr_tsd_create(pthread_key_t *out, cthr_tsd_destructor_t destructor) {
    if (out == NULL) {
        return EINVAL;
    }
    return pthread_key_create(out, (void (*)(void *))destructor);
}

int cthr_tsd_delete(pthread_key_t key) {
    return pthread_key_delete(key);
}

int cthr_tsd_set(pthread_key_t key, const void *value) {
    return pthread_setspecific(key, value);
}

uint64_t cthr_tsd_cache_id(void) {
    return cthr_atomic_u64_fetch_add(&cthr_tsd_cache_next_id, 1, CTHR_RELAXED) + 1;
}

void cthr_tsd_cache_clear(void) {
    memset(cthr_tsd_cache, 0, sizeof(cthr_tsd_cache));
}
