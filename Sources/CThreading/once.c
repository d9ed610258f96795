// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>

#include "cthr_atomic.h"
#include "cthr_futex.h"
#include "cthr_once.h"
#include "cthr_thread.h"

enum {
    CTHR_ONCE_NOT_RUN = 0,
    CTHR_ONCE_RUNNING = 1,
    CTHR_ONCE_DONE = 2,  // cthr_once_fast_done in the header tests this value
};

int cthr_once_init(cthr_once_t *once) {
    if (once == NULL) {
        return EINVAL;
    }
    cthr_atomic_u32_init(&once->state, CTHR_ONCE_NOT_RUN);
    cthr_atomic_i32_init(&once->owner, 0);
    return 0;
}

int cthr_once_run(cthr_once_t *once, cthr_once_body_t body, void *context) {
    if (once == NULL || body == NULL) {
        return EINVAL;
    }
    cthr_atomic_u32_t *state = &once->state;
    cthr_atomic_i32_t *owner = &once->owner;
    for (;;) {
        // Acquire: a caller that sees DONE also sees everything the body wrote.
        uint32_t seen = cthr_atomic_u32_load(state, CTHR_ACQUIRE);
        if (seen == CTHR_ONCE_DONE) {
            return 0;
        }
        if (seen == CTHR_ONCE_NOT_RUN) {
            uint32_t expected = CTHR_ONCE_NOT_RUN;
            if (cthr_atomic_u32_compare_exchange_strong(state, &expected, CTHR_ONCE_RUNNING, CTHR_ACQUIRE,
                                                        CTHR_ACQUIRE)) {
                // Only this thread reads its own id back in program order, which is all recursion detection
                // needs; other threads may see 0 or this id, and neither equals their own.
                cthr_atomic_i32_store(owner, (int32_t)cthr_thread_id(), CTHR_RELAXED);
                body(context);
                cthr_atomic_i32_store(owner, 0, CTHR_RELAXED);
                cthr_atomic_u32_store(state, CTHR_ONCE_DONE, CTHR_RELEASE);
                (void)cthr_futex_wake(&once->state.value, INT32_MAX, NULL);
                return 0;
            }
            continue;
        }
        // RUNNING: the body is in progress, maybe on this very thread (a recursive call would wait forever).
        if (cthr_atomic_i32_load(owner, CTHR_RELAXED) == (int32_t)cthr_thread_id()) {
            return EDEADLK;
        }
        // Sleeps only while the word is still RUNNING; any wake-up (done, spurious, signal) re-checks above.
        (void)cthr_futex_wait(&once->state.value, CTHR_ONCE_RUNNING, UINT64_MAX);
    }
}

bool cthr_once_done(const cthr_once_t *once) {
    if (once == NULL) {
        return false;
    }
    return cthr_atomic_u32_load(&once->state, CTHR_ACQUIRE) == CTHR_ONCE_DONE;
}
