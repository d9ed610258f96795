// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <linux/futex.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "cthr_clock.h"
#include "cthr_lock.h"

__thread uint32_t cthr_lock_cached_tid __attribute__((tls_model("initial-exec"))) = 0;

int cthr_lock_unlock_needs_fence = 0;

// Spins this many times (with `pause`) before sleeping while the lock is held.
#define CTHR_LOCK_SPINS 100
// Then yields the processor this many times before sleeping.
#define CTHR_LOCK_YIELDS 8

#ifndef MEMBARRIER_CMD_PRIVATE_EXPEDITED
#define MEMBARRIER_CMD_PRIVATE_EXPEDITED (1 << 3)
#define MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED (1 << 4)
#endif

// Registers the process for expedited private membarriers; without them, unlock fences instead.
static void cthr_lock_register_membarrier(void) {
#ifdef SYS_membarrier
    if (syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) == 0) return;
#endif
    cthr_lock_unlock_needs_fence = 1;
}

// In a forked child (one thread): forget the parent's cached thread id and register the new address space.
static void cthr_lock_after_fork_in_child(void) {
    cthr_lock_cached_tid = 0;
    cthr_lock_register_membarrier();
}

// Runs before main, so the unlock mode is fixed before any lock is used.
__attribute__((constructor)) static void cthr_lock_setup(void) {
    cthr_lock_register_membarrier();
    // If this fails (ENOMEM), a forked child keeps the parent's cached id (still unique while the parent lives).
    (void)pthread_atfork(NULL, NULL, cthr_lock_after_fork_in_child);
}

// The sleeper's half of the asymmetric barrier: after it, every unlock either sees the sleeper's registration or
// has its release store visible to the sleeper.
static void cthr_lock_barrier(void) {
    if (cthr_lock_unlock_needs_fence) {
        __atomic_thread_fence(__ATOMIC_SEQ_CST);
        return;
    }
#ifdef SYS_membarrier
    if (syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0) == 0) return;
#endif
    __atomic_thread_fence(__ATOMIC_SEQ_CST);  // unreachable once registered; keeps the contract if it ever fails
}

static inline void cthr_lock_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

// FUTEX_WAIT_BITSET on CLOCK_MONOTONIC with an absolute deadline; returns 0, EAGAIN, ETIMEDOUT or EINTR.
static int cthr_lock_futex_wait(uint32_t *word, uint32_t expected, uint64_t deadline_ns) {
    struct timespec ts;
    struct timespec *tsp = NULL;
    if (deadline_ns != UINT64_MAX) {
        ts = cthr_clock_timespec(deadline_ns);
        tsp = &ts;
    }
    long rc = syscall(SYS_futex, word, FUTEX_WAIT_BITSET | FUTEX_PRIVATE_FLAG, expected, tsp, NULL,
                      FUTEX_BITSET_MATCH_ANY);
    return rc == 0 ? 0 : errno;
}

static void cthr_lock_futex_wake(uint32_t *word, int count) {
    syscall(SYS_futex, word, FUTEX_WAKE | FUTEX_PRIVATE_FLAG, count, NULL, NULL, 0);
}

uint32_t cthr_lock_self_slow(void) {
    uint32_t tid = (uint32_t)syscall(SYS_gettid);
    cthr_lock_cached_tid = tid;
    return tid;
}

int cthr_lock_use_fenced_unlock(void) {
    __atomic_store_n(&cthr_lock_unlock_needs_fence, 1, __ATOMIC_SEQ_CST);
    return 0;
}

// The unlocker's half of a wake, after its release store and a load that found registered waiters. The full fence
// orders that store before the reads of `waiters` below; a waiter clears WAKING (a read-modify-write) before it
// re-reads the word, so either it sees the lock released or this sees WAKING clear and wakes. If WAKING is already
// set, a wake is on its way and whoever it reaches clears WAKING and re-checks, so another one is not needed.
void cthr_lock_wake_one(cthr_lock_t *lock) {
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    if (__atomic_load_n(&lock->waiters, __ATOMIC_RELAXED) & CTHR_LOCK_WAKING) return;
    uint32_t before = __atomic_fetch_or(&lock->waiters, CTHR_LOCK_WAKING, __ATOMIC_SEQ_CST);
    if ((before & CTHR_LOCK_WAKING) == 0) cthr_lock_futex_wake(&lock->waiters, 1);
}

int cthr_lock_init(cthr_lock_t *lock) {
    if (lock == NULL) return EINVAL;
    __atomic_store_n(&lock->word, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&lock->waiters, 0, __ATOMIC_RELAXED);
    return 0;
}

// Takes the lock if its owner field is 0, keeping the SLOW bit; returns 0, EBUSY or EDEADLK and updates *word.
static inline int cthr_lock_attempt(cthr_lock_t *lock, uint32_t self, uint32_t *word) {
    for (;;) {
        uint32_t owner = *word & CTHR_LOCK_OWNER_MASK;
        if (owner == self) return EDEADLK;
        if (owner != 0) return EBUSY;
        if (__atomic_compare_exchange_n(&lock->word, word, *word | self, true, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED)) {
            return 0;
        }
    }
}

int cthr_lock_trylock(cthr_lock_t *lock) {
    if (lock == NULL) return EINVAL;
    uint32_t word = __atomic_load_n(&lock->word, __ATOMIC_RELAXED);
    return cthr_lock_attempt(lock, cthr_lock_self(), &word);
}

int cthr_lock_lock_slow(cthr_lock_t *lock, uint64_t deadline_ns) {
    if (lock == NULL) return EINVAL;
    uint32_t self = cthr_lock_self();
    uint32_t word = __atomic_load_n(&lock->word, __ATOMIC_RELAXED);

    // Phase 1: spin briefly while the holder runs (critical sections are usually short), then yield the
    // processor a few times, which lets a preempted holder finish when threads outnumber cores, before paying
    // for sleeping (a membarrier to register, a futex wake from the unlocker).
    for (int spin = 0; spin < CTHR_LOCK_SPINS + CTHR_LOCK_YIELDS; spin++) {
        int rc = cthr_lock_attempt(lock, self, &word);
        if (rc != EBUSY) return rc;
        if (spin < CTHR_LOCK_SPINS) {
            cthr_lock_relax();
        } else {
            if (deadline_ns != UINT64_MAX && cthr_clock_now_ns() >= deadline_ns) break;
            sched_yield();
        }
        word = __atomic_load_n(&lock->word, __ATOMIC_RELAXED);
    }

    // Phase 2: register as a waiter, make the registration visible to every unlocker (asymmetric barrier), then
    // sleep on `waiters` until an unlock wakes this thread. Registered threads are counted until they leave, so one
    // barrier per call suffices: every unlock after it sees the count and sends a wake unless one is on its way.
    __atomic_fetch_add(&lock->waiters, 1, __ATOMIC_RELAXED);
    cthr_lock_barrier();
    int result;
    for (;;) {
        // Clear WAKING first (this thread may have consumed the last wake, or is about to sleep: either way later
        // unlocks must wake again), then check the lock: an unlock that released it before the clear is seen
        // here, and one after the clear sets WAKING, which changes `waiters` and so ends or prevents the sleep.
        uint32_t seen = __atomic_and_fetch(&lock->waiters, ~CTHR_LOCK_WAKING, __ATOMIC_SEQ_CST);
        word = __atomic_load_n(&lock->word, __ATOMIC_SEQ_CST);
        result = cthr_lock_attempt(lock, self, &word);
        if (result != EBUSY) break;
        int rc = cthr_lock_futex_wait(&lock->waiters, seen, deadline_ns);
        if (rc == ETIMEDOUT) {
            // One last attempt, so a deadline that passed while the lock became free still succeeds.
            __atomic_and_fetch(&lock->waiters, ~CTHR_LOCK_WAKING, __ATOMIC_SEQ_CST);
            word = __atomic_load_n(&lock->word, __ATOMIC_SEQ_CST);
            result = cthr_lock_attempt(lock, self, &word);
            if (result == EBUSY) result = ETIMEDOUT;
            break;
        }
    }
    uint32_t before = __atomic_fetch_sub(&lock->waiters, 1, __ATOMIC_RELAXED) & CTHR_LOCK_WAITER_MASK;
    // Leaving without the lock while others sleep: an unlock may have woken this thread instead of one of them.
    if (result != 0 && before > 1) cthr_lock_futex_wake(&lock->waiters, 1);
    return result;
}

int cthr_lock_unlock_slow(cthr_lock_t *lock) {
    if (lock == NULL) return EINVAL;
    uint32_t self = cthr_lock_self();
    uint32_t word = __atomic_load_n(&lock->word, __ATOMIC_RELAXED);
    if ((word & CTHR_LOCK_OWNER_MASK) != self) return EPERM;
    // Only the owner writes a held word, so a plain release store keeps the SLOW bit safely.
    __atomic_store_n(&lock->word, word & CTHR_LOCK_SLOW, __ATOMIC_RELEASE);
    if (cthr_lock_unlock_needs_fence) {
        __atomic_thread_fence(__ATOMIC_SEQ_CST);
    } else {
        __atomic_signal_fence(__ATOMIC_SEQ_CST);
    }
    if ((__atomic_load_n(&lock->waiters, __ATOMIC_RELAXED) & CTHR_LOCK_WAITER_MASK) != 0) cthr_lock_wake_one(lock);
    return 0;
}

uint32_t cthr_lock_owner(const cthr_lock_t *lock) {
    if (lock == NULL) return 0;
    return __atomic_load_n(&lock->word, __ATOMIC_RELAXED) & CTHR_LOCK_OWNER_MASK;
}

uint32_t cthr_lock_load(const cthr_lock_t *lock) {
    if (lock == NULL) return 0;
    return __atomic_load_n(&lock->word, __ATOMIC_RELAXED);
}

uint32_t cthr_lock_waiter_count(const cthr_lock_t *lock) {
    if (lock == NULL) return 0;
    return __atomic_load_n(&lock->waiters, __ATOMIC_RELAXED) & CTHR_LOCK_WAITER_MASK;
}

int cthr_lock_set_slow(cthr_lock_t *lock, bool on) {
    if (lock == NULL) return EINVAL;
    uint32_t word = __atomic_load_n(&lock->word, __ATOMIC_RELAXED);
    if ((word & CTHR_LOCK_OWNER_MASK) != cthr_lock_self()) return EPERM;
    __atomic_store_n(&lock->word, on ? (word | CTHR_LOCK_SLOW) : (word & ~CTHR_LOCK_SLOW), __ATOMIC_RELAXED);
    return 0;
}

int cthr_lock_cond_init(cthr_lock_cond_t *cond) {
    if (cond == NULL) return EINVAL;
    __atomic_store_n(&cond->sequence, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&cond->waiters, 0, __ATOMIC_RELAXED);
    return 0;
}

uint32_t cthr_lock_cond_begin(cthr_lock_cond_t *cond) {
    if (cond == NULL) return 0;
    // Sequentially consistent with the signaller's increment-then-check: either it sees this waiter, or this
    // waiter reads the incremented sequence (and that signal came before the wait began).
    __atomic_fetch_add(&cond->waiters, 1, __ATOMIC_SEQ_CST);
    return __atomic_load_n(&cond->sequence, __ATOMIC_SEQ_CST);
}

int cthr_lock_cond_wait(cthr_lock_cond_t *cond, uint32_t sequence, uint64_t deadline_ns) {
    if (cond == NULL) return EINVAL;
    for (;;) {
        int rc = cthr_lock_futex_wait(&cond->sequence, sequence, deadline_ns);
        if (rc == EINTR) continue;
        if (rc == ETIMEDOUT) {
            return __atomic_load_n(&cond->sequence, __ATOMIC_ACQUIRE) != sequence ? 0 : ETIMEDOUT;
        }
        return 0;  // woken, spuriously woken, or the sequence had already moved (EAGAIN)
    }
}

int cthr_lock_cond_end(cthr_lock_cond_t *cond) {
    if (cond == NULL) return EINVAL;
    __atomic_fetch_sub(&cond->waiters, 1, __ATOMIC_RELAXED);
    return 0;
}

int cthr_lock_cond_signal(cthr_lock_cond_t *cond) {
    if (cond == NULL) return EINVAL;
    __atomic_fetch_add(&cond->sequence, 1, __ATOMIC_SEQ_CST);
    if (__atomic_load_n(&cond->waiters, __ATOMIC_SEQ_CST) != 0) cthr_lock_futex_wake(&cond->sequence, 1);
    return 0;
}

int cthr_lock_cond_broadcast(cthr_lock_cond_t *cond) {
    if (cond == NULL) return EINVAL;
    __atomic_fetch_add(&cond->sequence, 1, __ATOMIC_SEQ_CST);
    if (__atomic_load_n(&cond->waiters, __ATOMIC_SEQ_CST) != 0) cthr_lock_futex_wake(&cond->sequence, INT_MAX);
    return 0;
}
