// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

#include <errno.h>
#include <pthread.h>

#include "cthr_tsd.h"

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
