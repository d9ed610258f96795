// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

// Run-once for a C callback with a context (pthread_once takes no context).
#ifndef CTHREADING_ONCE_H
#define CTHREADING_ONCE_H

#include "cthr_atomic.h"
#include "cthr_nullability.h"
#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

// Callback run by `cthr_once_run`.
typedef void (*cthr_once_body_t)(void *_Nullable context);

// A once flag: zero-initialised means "not yet run". Must not move while in use.
typedef struct cthr_once {
    cthr_atomic_u32_t state;  // 0 = not run, 1 = running, 2 = done (futex word)
    cthr_atomic_i32_t owner;  // thread id running the body while state == 1
} cthr_once_t;

// Initializes *once as not yet run. Returns 0 or EINVAL (NULL).
int cthr_once_init(cthr_once_t *_Nullable once);

// Runs body(context) if no call on `once` has run it yet; concurrent callers block until that first run has
// returned, then return without running it. Calling it again from inside `body` on the same flag returns EDEADLK.
// Returns 0 or EINVAL (NULL once or body).
int cthr_once_run(cthr_once_t *_Nullable once, cthr_once_body_t _Nullable body, void *_Nullable context);

// Whether the body has finished running on `once` (acquire load).
bool cthr_once_done(const cthr_once_t *_Nullable once);

// The inlined check of `cthr_once_done` for a non-NULL flag: one acquire load of the state (2 = done), so a run
// after the first costs what `pthread_once`'s own fast path costs, without the call.
static inline bool cthr_once_fast_done(const cthr_once_t *_Nonnull once) {
    return cthr_atomic_u32_load(&once->state, CTHR_ACQUIRE) == 2;
}

#ifdef __cplusplus
}
#endif
#endif // CTHREADING_ONCE_H
