// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

#define _GNU_SOURCE
#include "rcu_internal.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>

#include "cthr_rcu.h"

#ifdef CTHR_TSAN
char cthr_rcu_tsan_grace_period;
char cthr_rcu_tsan_callbacks_done;
#endif

_Thread_local int cthr_rcu_thread_registered;
_Thread_local int cthr_rcu_in_callback;

int cthr_rcu_read_only_child;
cthr_atomic_i32_t cthr_rcu_helpers_started;

// Threads that CThreading registered with liburcu and that have not unregistered yet.
static cthr_atomic_i64_t cthr_rcu_registrations;
// Whether the calling thread's registration is counted in `cthr_rcu_registrations`.
static _Thread_local int cthr_rcu_counted;

// Decides, in a forked child, whether grace periods can still run: only if no thread but the forking one was a
// registered reader (ours, or liburcu's helper threads) at the fork.
static void cthr_rcu_atfork_child(void) {
    long others = (long)cthr_atomic_i64_load(&cthr_rcu_registrations, CTHR_RELAXED) - (cthr_rcu_counted ? 1 : 0);
    if (others > 0 || cthr_atomic_i32_load(&cthr_rcu_helpers_started, CTHR_RELAXED)) cthr_rcu_read_only_child = 1;
}

__attribute__((constructor)) static void cthr_rcu_setup(void) {
    // If this fails (ENOMEM), a child is not marked read-only: the documented limit then applies unchecked.
    (void)pthread_atfork(NULL, NULL, cthr_rcu_atfork_child);
}

int cthr_rcu_writers_available(void) { return cthr_rcu_read_only_child ? 0 : 1; }

// MARK: - Registration

static pthread_once_t cthr_rcu_key_once = PTHREAD_ONCE_INIT;
static pthread_key_t cthr_rcu_exit_key;
static int cthr_rcu_key_error;

// Takes the calling thread out of `cthr_rcu_registrations` if it was counted there.
static void cthr_rcu_uncount(void) {
    if (!cthr_rcu_counted) return;
    cthr_rcu_counted = 0;
    (void)cthr_atomic_i64_fetch_sub(&cthr_rcu_registrations, 1, CTHR_RELAXED);
}

// Runs at thread exit for threads CThreading registered: a thread left registered would leave a dangling reader
// in liburcu's registry that the next grace period would read after the thread's TLS is gone.
static void cthr_rcu_thread_exit(void *value) {
    (void)value;
    if (URCU_TLS(urcu_memb_reader).registered) {
        // A read section left open at exit is a bug of the caller; the reader must leave the registry regardless.
        URCU_TLS(urcu_memb_reader).ctr = 0;
        urcu_memb_unregister_thread();
    }
    cthr_rcu_uncount();
    cthr_rcu_thread_registered = 0;
}

static void cthr_rcu_make_key(void) {
    cthr_rcu_key_error = pthread_key_create(&cthr_rcu_exit_key, cthr_rcu_thread_exit);
}

int cthr_rcu_register_slow(void) {
    if (URCU_TLS(urcu_memb_reader).registered) {
        // Registered by liburcu itself (its call_rcu worker) or by a direct liburcu call: not ours to unregister.
        cthr_rcu_thread_registered = 1;
        return 0;
    }
    if (cthr_rcu_read_only_child) {
        // Registering would link this thread's TLS into a registry that still lists the parent's dead threads.
        // Reading unregistered is safe here: no grace period (and so no reclamation) ever runs in this child.
        cthr_rcu_thread_registered = 1;
        return 0;
    }
    urcu_memb_register_thread();
    cthr_rcu_thread_registered = 1;
    cthr_rcu_counted = 1;
    (void)cthr_atomic_i64_fetch_add(&cthr_rcu_registrations, 1, CTHR_RELAXED);
    pthread_once(&cthr_rcu_key_once, cthr_rcu_make_key);
    if (cthr_rcu_key_error != 0) return cthr_rcu_key_error;
    return pthread_setspecific(cthr_rcu_exit_key, (void *)1);
}

int cthr_rcu_register_thread(void) {
    if (URCU_TLS(urcu_memb_reader).registered) {
        cthr_rcu_thread_registered = 1;
        return EEXIST;
    }
    return cthr_rcu_register_slow();
}

int cthr_rcu_unregister_thread(void) {
    if (!URCU_TLS(urcu_memb_reader).registered) return ENOENT;
    if (_urcu_memb_read_ongoing()) return EBUSY;
    if (urcu_memb_get_thread_call_rcu_data() != NULL) return EPERM;
    urcu_memb_unregister_thread();
    cthr_rcu_uncount();
    cthr_rcu_thread_registered = 0;
    if (cthr_rcu_key_error == 0 && pthread_getspecific(cthr_rcu_exit_key) != NULL) {
        (void)pthread_setspecific(cthr_rcu_exit_key, NULL);
    }
    return 0;
}

int cthr_rcu_ensure_registered(void) { return cthr_rcu_ensure_registered_inline(); }

int cthr_rcu_is_registered(void) { return URCU_TLS(urcu_memb_reader).registered ? 1 : 0; }

// MARK: - Read side

void cthr_rcu_read_lock(void) {
    (void)cthr_rcu_ensure_registered_inline();
    CTHR_RCU_READ_LOCK();
}

void cthr_rcu_read_unlock(void) {
    CTHR_TSAN_RELEASE(&cthr_rcu_tsan_grace_period);
    CTHR_RCU_READ_UNLOCK();
}

int cthr_rcu_read_ongoing(void) {
    if (!URCU_TLS(urcu_memb_reader).registered) return 0;
    return _urcu_memb_read_ongoing() ? 1 : 0;
}

// MARK: - Pointers
// The library's atomics (cthr_atomic.h) with the orders liburcu's macros give on every architecture (acquire for
// dereference, which is what every compiler makes of consume; release for assign; full ordering for exchange and
// compare-exchange), so ThreadSanitizer understands them. A slot is a plain `void *` in the caller's memory, which
// has the size and alignment of `cthr_atomic_ptr_t` (asserted in atomic.c).

// A NULL slot or cell is refused with one branch, predicted not taken, in front of each operation.

void *cthr_rcu_dereference(void *const *slot) {
    if (__builtin_expect(slot == NULL, 0)) return NULL;
    return cthr_atomic_ptr_load((const cthr_atomic_ptr_t *)slot, CTHR_ACQUIRE);
}

void cthr_rcu_assign_pointer(void **slot, void *value) {
    if (__builtin_expect(slot == NULL, 0)) return;
    cthr_atomic_ptr_store((cthr_atomic_ptr_t *)slot, value, CTHR_RELEASE);
}

void *cthr_rcu_xchg_pointer(void **slot, void *value) {
    if (__builtin_expect(slot == NULL, 0)) return NULL;
    return cthr_atomic_ptr_exchange((cthr_atomic_ptr_t *)slot, value, CTHR_SEQ_CST);
}

void *cthr_rcu_cmpxchg_pointer(void **slot, void *expected, void *desired) {
    if (__builtin_expect(slot == NULL, 0)) return NULL;
    (void)cthr_atomic_ptr_compare_exchange_strong((cthr_atomic_ptr_t *)slot, &expected, desired, CTHR_SEQ_CST,
                                                  CTHR_SEQ_CST);
    return expected;
}

// MARK: - Grace periods

int cthr_rcu_synchronize(void) {
    CTHR_RCU_REFUSE_IN_READ_ONLY_CHILD();
    if (cthr_rcu_read_ongoing()) return EDEADLK;
    urcu_memb_synchronize_rcu();
    CTHR_TSAN_ACQUIRE(&cthr_rcu_tsan_grace_period);
    return 0;
}

struct cthr_rcu_work {
    struct rcu_head head;
    cthr_rcu_callback_t callback;
    void *context;
};

static void cthr_rcu_work_run(struct rcu_head *head) {
    struct cthr_rcu_work *work = caa_container_of(head, struct cthr_rcu_work, head);
    CTHR_TSAN_ACQUIRE(work);
    CTHR_TSAN_ACQUIRE(&cthr_rcu_tsan_grace_period);
    cthr_rcu_in_callback++;
    work->callback(work->context);
    cthr_rcu_in_callback--;
    free(work);
    CTHR_TSAN_RELEASE(&cthr_rcu_tsan_callbacks_done);
}

int cthr_rcu_call(cthr_rcu_callback_t callback, void *context) {
    if (callback == NULL) return EINVAL;
    CTHR_RCU_REFUSE_IN_READ_ONLY_CHILD();
    struct cthr_rcu_work *work = malloc(sizeof *work);
    if (work == NULL) return ENOMEM;
    work->callback = callback;
    work->context = context;
    (void)cthr_rcu_ensure_registered_inline();
    cthr_atomic_i32_store(&cthr_rcu_helpers_started, 1, CTHR_RELAXED);
    CTHR_TSAN_RELEASE(work);
    urcu_memb_call_rcu(&work->head, cthr_rcu_work_run);
    return 0;
}

int cthr_rcu_barrier(void) {
    CTHR_RCU_REFUSE_IN_READ_ONLY_CHILD();
    if (cthr_rcu_read_ongoing()) return EDEADLK;
    if (cthr_rcu_in_callback || urcu_memb_get_thread_call_rcu_data() != NULL) return EDEADLK;
    (void)cthr_rcu_ensure_registered_inline();
    urcu_memb_barrier();
    // A table destruction or resize re-queued itself while a fork was being prepared (see rcu_internal.h): wait for
    // the fork to finish and for the re-queued callback to run.
    while (cthr_atomic_i64_load(&cthr_rcu_requeued, CTHR_ACQUIRE) != 0) {
        (void)poll(NULL, 0, 1);
        urcu_memb_barrier();
    }
    CTHR_TSAN_ACQUIRE(&cthr_rcu_tsan_callbacks_done);
    return 0;
}

int cthr_rcu_uses_membarrier(void) { return urcu_memb_has_sys_membarrier ? 1 : 0; }

// A plain pthread mutex, not `cthr_lock_t`: it is locked before fork() and re-made in the child, whose thread has
// another kernel thread id than the one a `cthr_lock_t` word would name as its owner.
pthread_mutex_t cthr_rcu_fork_mutex = PTHREAD_MUTEX_INITIALIZER;
cthr_atomic_i64_t cthr_rcu_requeued;

void cthr_rcu_before_fork(void) {
    // Waits for a table destruction or resize running on the call_rcu worker to finish (see rcu_internal.h).
    (void)pthread_mutex_lock(&cthr_rcu_fork_mutex);
    urcu_memb_call_rcu_before_fork();
}

void cthr_rcu_after_fork_parent(void) {
    urcu_memb_call_rcu_after_fork_parent();
    (void)pthread_mutex_unlock(&cthr_rcu_fork_mutex);
}

void cthr_rcu_after_fork_child(void) {
    // In a read-only child a new call_rcu worker would register into the dead threads' registry; none is needed,
    // since callbacks are refused there.
    if (!cthr_rcu_read_only_child) urcu_memb_call_rcu_after_fork_child();
    // A fresh mutex: the child's only thread is the one that locked it before the fork.
    (void)pthread_mutex_init(&cthr_rcu_fork_mutex, NULL);
}

// MARK: - Cell

struct cthr_rcu_cell {
    _Alignas(64) cthr_atomic_ptr_t pointer;
    _Alignas(64) cthr_lock_t writer;
};

int cthr_rcu_cell_create(void *initial, cthr_rcu_cell_t **out) {
    if (out == NULL) return EINVAL;
    cthr_rcu_cell_t *cell = aligned_alloc(64, sizeof *cell);
    if (cell == NULL) return ENOMEM;
    (void)cthr_lock_init(&cell->writer);
    cthr_atomic_ptr_store(&cell->pointer, initial, CTHR_RELEASE);
    *out = cell;
    return 0;
}

void *cthr_rcu_cell_destroy(cthr_rcu_cell_t *cell) {
    if (cell == NULL) return NULL;
    void *last = cthr_atomic_ptr_load(&cell->pointer, CTHR_ACQUIRE);
    free(cell);
    return last;
}

void *cthr_rcu_cell_get(const cthr_rcu_cell_t *cell) {
    if (__builtin_expect(cell == NULL, 0)) return NULL;
    return cthr_atomic_ptr_load(&cell->pointer, CTHR_ACQUIRE);
}

void *cthr_rcu_cell_exchange(cthr_rcu_cell_t *cell, void *value) {
    if (__builtin_expect(cell == NULL, 0)) return NULL;
    return cthr_atomic_ptr_exchange(&cell->pointer, value, CTHR_SEQ_CST);
}

int cthr_rcu_cell_lock(cthr_rcu_cell_t *cell) {
    if (__builtin_expect(cell == NULL, 0)) return EINVAL;
    CTHR_RCU_REFUSE_IN_READ_ONLY_CHILD();
    return cthr_rcu_writer_lock(&cell->writer);
}

int cthr_rcu_cell_unlock(cthr_rcu_cell_t *cell) {
    if (__builtin_expect(cell == NULL, 0)) return EINVAL;
    return cthr_rcu_writer_unlock(&cell->writer);
}
