// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

#define _GNU_SOURCE
#include <errno.h>
#include <stdatomic.h>
#include <stdint.h>

#include "cthr_futex.h"
#include "cthr_once.h"
#include "cthr_thread.h"

// The flag's fields are plain integers in the header (Swift cannot import _Atomic) and atomics here.
_Static_assert(sizeof(_Atomic uint32_t) == sizeof(uint32_t), "_Atomic uint32_t must mirror uint32_t");
_Static_assert(_Alignof(_Atomic uint32_t) == _Alignof(uint32_t), "_Atomic uint32_t must mirror uint32_t");
_Static_assert(sizeof(_Atomic int32_t) == sizeof(int32_t), "_Atomic int32_t must mirror int32_t");
_Static_assert(_Alignof(_Atomic int32_t) == _Alignof(int32_t), "_Atomic int32_t must mirror int32_t");

enum {
    CTHR_ONCE_NOT_RUN = 0,
    CTHR_ONCE_RUNNING = 1,
    CTHR_ONCE_DONE = 2,  // cthr_once_fast_done in the header tests this value
};

int cthr_once_init(cthr_once_t *once) {
    if (once == NULL) {
        return EINVAL;
    }
    atomic_init((_Atomic uint32_t *)&once->state, CTHR_ONCE_NOT_RUN);
    atomic_init((_Atomic int32_t *)&once->owner, 0);
    return 0;
}

int cthr_once_run(cthr_once_t *once, cthr_once_body_t body, void *context) {
    if (once == NULL || body == NULL) {
        return EINVAL;
    }
    _Atomic uint32_t *state = (_Atomic uint32_t *)&once->state;
    _Atomic int32_t *owner = (_Atomic int32_t *)&once->owner;
    for (;;) {
        // Acquire: a caller that sees DONE also sees everything the body wrote.
        uint32_t seen = atomic_load_explicit(state, memory_order_acquire);
        if (seen == CTHR_ONCE_DONE) {
            return 0;
        }
        if (seen == CTHR_ONCE_NOT_RUN) {
            uint32_t expected = CTHR_ONCE_NOT_RUN;
            if (atomic_compare_exchange_strong_explicit(state, &expected, CTHR_ONCE_RUNNING, memory_order_acquire,
                                                        memory_order_acquire)) {
                // Only this thread reads its own id back in program order, which is all recursion detection
                // needs; other threads may see 0 or this id, and neither equals their own.
                atomic_store_explicit(owner, (int32_t)cthr_thread_id(), memory_order_relaxed);
                body(context);
                atomic_store_explicit(owner, 0, memory_order_relaxed);
                atomic_store_explicit(state, CTHR_ONCE_DONE, memory_order_release);
                (void)cthr_futex_wake(&once->state, INT32_MAX, NULL);
                return 0;
            }
            continue;
        }
        // RUNNING: the body is in progress, maybe on this very thread (a recursive call would wait forever).
        if (atomic_load_explicit(owner, memory_order_relaxed) == (int32_t)cthr_thread_id()) {
            return EDEADLK;
        }
        // Sleeps only while the word is still RUNNING; any wake-up (done, spurious, signal) re-checks above.
        (void)cthr_futex_wait(&once->state, CTHR_ONCE_RUNNING, UINT64_MAX);
    }
}

bool cthr_once_done(const cthr_once_t *once) {
    if (once == NULL) {
        return false;
    }
    return atomic_load_explicit((const _Atomic uint32_t *)&once->state, memory_order_acquire) == CTHR_ONCE_DONE;
}
