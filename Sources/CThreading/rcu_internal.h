// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

// Private to rcu.c, rcu_map.c and rcu_flat.c: liburcu with its fast paths inlined (_LGPL_SOURCE; the project is MIT, which is
// LGPL-compatible), and the ThreadSanitizer annotations that tell TSan about the ordering liburcu provides through
// uninstrumented code (grace periods, the call_rcu queue, hash-table publication).
#ifndef CTHREADING_RCU_INTERNAL_H
#define CTHREADING_RCU_INTERNAL_H

#define _LGPL_SOURCE
#include <urcu/urcu-memb.h>

#include "cthr_atomic.h"
#include "cthr_lock.h"
#include "cthr_tsan.h"

#ifdef CTHR_TSAN
// Under ThreadSanitizer, read lock and unlock call liburcu's out-of-line versions instead of inlining them: its
// futex wake-up handshake uses volatile accesses (not C11 atomics) that TSan would report if they were compiled
// into instrumented code. The ordering they provide is modelled by the annotations below instead.
#undef urcu_memb_read_lock
#undef urcu_memb_read_unlock
extern void urcu_memb_read_lock(void);
extern void urcu_memb_read_unlock(void);
#define CTHR_RCU_READ_LOCK() urcu_memb_read_lock()
#define CTHR_RCU_READ_UNLOCK() urcu_memb_read_unlock()
// Every read unlock releases this; every grace-period end acquires it, so TSan sees that a reader's accesses happen
// before the memory it read is reclaimed.
extern char cthr_rcu_tsan_grace_period;
// Every deferred callback releases this when it has run; rcu_barrier's return acquires it.
extern char cthr_rcu_tsan_callbacks_done;
#else
#define CTHR_RCU_READ_LOCK() _urcu_memb_read_lock()
#define CTHR_RCU_READ_UNLOCK() _urcu_memb_read_unlock()
#endif

#include <pthread.h>

// Held from cthr_rcu_before_fork until cthr_rcu_after_fork_parent/child. liburcu's before-fork hook first pauses the
// hash tables' resize worker, then waits for the call_rcu worker to pause; a call_rcu callback that destroys or
// resizes a table (which waits for the resize worker) would then wait forever, and so would the fork. Such callbacks
// try-lock this mutex and, while a fork is being prepared, re-queue themselves instead.
extern pthread_mutex_t cthr_rcu_fork_mutex;

// Nonzero in a child forked from a process where other threads had used RCU: liburcu 0.13's memb flavour keeps
// the dead threads' registrations (and glibc gives their TLS, where those list nodes live, to the child's new
// threads), so no grace period can run safely. Readers still work; writers are refused with ENOTRECOVERABLE.
extern int cthr_rcu_read_only_child;

// Nonzero once this process started liburcu's helper threads (the call_rcu worker, the hash-table resize worker):
// they are registered readers that a forked child would inherit as dead registrations.
extern cthr_atomic_i32_t cthr_rcu_helpers_started;

// Returns ENOTRECOVERABLE from a writer entry point in a read-only forked child.
#define CTHR_RCU_REFUSE_IN_READ_ONLY_CHILD()                                                                          \
    do {                                                                                                               \
        if (__builtin_expect(cthr_rcu_read_only_child, 0)) return ENOTRECOVERABLE;                                     \
    } while (0)

// How many such callbacks are re-queued and not yet run; cthr_rcu_barrier waits until it is back to zero, so it still
// returns only after every callback scheduled before it has run.
extern cthr_atomic_i64_t cthr_rcu_requeued;

// Registers the calling thread when its thread-local flag says it is not (the slow path of every entry point).
int cthr_rcu_register_slow(void);

// The thread-local "registered by or known to CThreading" flag.
extern _Thread_local int cthr_rcu_thread_registered;

// Nonzero while this thread runs a CThreading call_rcu callback.
extern _Thread_local int cthr_rcu_in_callback;

static inline int cthr_rcu_ensure_registered_inline(void) {
    if (caa_likely(cthr_rcu_thread_registered)) return 0;
    return cthr_rcu_register_slow();
}

// The writer stripes of both maps are the library's futex lock (`cthr_lock_t`, owner in the word): one lock algorithm
// for every internal lock. Takes `lock` (inline fast path, then the slow one). Returns 0 or EDEADLK (the caller
// holds it already, also through another key that shares the stripe).
static inline int cthr_rcu_writer_lock(cthr_lock_t *lock) {
    return cthr_lock_fast_lock(lock) ? 0 : cthr_lock_lock_slow(lock, UINT64_MAX);
}

// Releases a stripe taken with cthr_rcu_writer_lock. Returns 0 or EPERM (the caller does not hold it).
static inline int cthr_rcu_writer_unlock(cthr_lock_t *lock) {
    return cthr_lock_fast_unlock(lock) ? 0 : cthr_lock_unlock_slow(lock);
}

#endif // CTHREADING_RCU_INTERNAL_H
