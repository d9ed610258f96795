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
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "cthr_clock.h"
#include "cthr_lock.h"

__thread uint32_t cthr_lock_cached_tid __attribute__((tls_model("initial-exec"))) = 0;

int cthr_lock_membarrier_mode = 0;

// Membarrier calls made by sleepers (membarrier mode only).
static uint64_t cthr_lock_membarrier_count = 0;

// Hand-offs to a heir (see Fairness in the header).
static uint64_t cthr_lock_handoff_count = 0;

// A thread that finds the lock held tries this many times (with `pause`) before it sleeps, as long as nobody
// sleeps on the lock already (then it queues at once: the woken thread is the one that spins). Few: a spinner
// that polls the word takes its cache line away from the holder at every look, and with two threads on two cores
// 100 tries instead of 10 cut the `locks` benchmark's throughput by half or more (the yields below, which look
// at the word about once a microsecond, catch a holder that is about to release just as well).
#ifndef CTHR_LOCK_SPINS
#define CTHR_LOCK_SPINS 10
#endif
// Then yields the processor this many times (same condition), which lets a preempted holder run.
#ifndef CTHR_LOCK_YIELDS
#define CTHR_LOCK_YIELDS 8
#endif
// A woken thread tries this many times (with `pause`), then yields this many times, before sleeping again;
// meanwhile WAKING stays set and unlocks wake nobody else.
#ifndef CTHR_LOCK_WOKEN_SPINS
#define CTHR_LOCK_WOKEN_SPINS 100
#endif
#ifndef CTHR_LOCK_WOKEN_YIELDS
#define CTHR_LOCK_WOKEN_YIELDS 8
#endif

#ifndef MEMBARRIER_CMD_PRIVATE_EXPEDITED
#define MEMBARRIER_CMD_PRIVATE_EXPEDITED (1 << 3)
#define MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED (1 << 4)
#endif

int cthr_lock_use_membarrier(void) {
#ifdef SYS_membarrier
    if (syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) != 0) return errno;
    __atomic_store_n(&cthr_lock_membarrier_mode, 1, __ATOMIC_SEQ_CST);
    return 0;
#else
    return ENOSYS;
#endif
}

int cthr_lock_uses_membarrier(void) { return __atomic_load_n(&cthr_lock_membarrier_mode, __ATOMIC_RELAXED); }

uint64_t cthr_lock_membarrier_calls(void) {
    return __atomic_load_n(&cthr_lock_membarrier_count, __ATOMIC_RELAXED);
}

uint64_t cthr_lock_handoffs(void) {
    return __atomic_load_n(&cthr_lock_handoff_count, __ATOMIC_RELAXED);
}

// In a forked child (one thread): forget the parent's cached thread id. The membarrier registration is inherited
// with the address space (the kernel resets it only on exec); registering again is harmless.
static void cthr_lock_after_fork_in_child(void) {
    cthr_lock_cached_tid = 0;
#ifdef SYS_membarrier
    if (__atomic_load_n(&cthr_lock_membarrier_mode, __ATOMIC_RELAXED)) {
        (void)syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0);
    }
#endif
}

// Runs before main, so the unlock mode is fixed before any lock is used.
__attribute__((constructor)) static void cthr_lock_setup(void) {
    const char *opt_in = getenv("THREADING_LOCK_MEMBARRIER");
    if (opt_in != NULL && strcmp(opt_in, "1") == 0) (void)cthr_lock_use_membarrier();
    // If this fails (ENOMEM), a forked child keeps the parent's cached id (still unique while the parent lives).
    (void)pthread_atfork(NULL, NULL, cthr_lock_after_fork_in_child);
}

// The sleeper's half of the pairing (see the header): a sequentially consistent fence, or in membarrier mode a
// membarrier call. Returns false when the pairing is not guaranteed: membarrier mode, but the call failed (not
// seen in practice; the kernel may refuse to allocate). The caller then sleeps for a bounded time only, so a
// missed wake-up costs latency, not a hang.
static bool cthr_lock_barrier(void) {
    if (!__atomic_load_n(&cthr_lock_membarrier_mode, __ATOMIC_RELAXED)) {
        __atomic_thread_fence(__ATOMIC_SEQ_CST);
        return true;
    }
    __atomic_fetch_add(&cthr_lock_membarrier_count, 1, __ATOMIC_RELAXED);
#ifdef SYS_membarrier
    if (syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0) == 0) return true;
#endif
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    return false;
}

// How long a sleeper whose barrier failed sleeps before it looks at the lock again.
#define CTHR_LOCK_UNPAIRED_SLEEP_NS 1000000u

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

// Called by an unlock whose load of `waiters` found sleepers and WAKING clear. The read-modify-write orders the
// release store before it; if WAKING was still clear, the wake is this thread's to send.
void cthr_lock_wake_one(cthr_lock_t *lock) {
    uint32_t before = __atomic_fetch_or(&lock->waiters, CTHR_LOCK_WAKING, __ATOMIC_SEQ_CST);
    if ((before & CTHR_LOCK_WAKING) == 0) cthr_lock_futex_wake(&lock->waiters, 1);
}

int cthr_lock_init(cthr_lock_t *lock) {
    if (lock == NULL) return EINVAL;
    __atomic_store_n(&lock->word, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&lock->waiters, 0, __ATOMIC_RELAXED);
    return 0;
}

// Takes the lock if its owner field is 0 and it is not reserved for a heir (HANDOFF), keeping the SLOW bit;
// returns 0, EBUSY or EDEADLK and updates *word.
static inline int cthr_lock_attempt(cthr_lock_t *lock, uint32_t self, uint32_t *word) {
    for (;;) {
        uint32_t owner = *word & CTHR_LOCK_OWNER_MASK;
        if (owner == self) return EDEADLK;
        if (owner != 0 || (*word & CTHR_LOCK_HANDOFF) != 0) return EBUSY;
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

// Tries to take the lock `spins` times with a pause between tries, then `yields` more times with a sched_yield
// between them (skipped once `deadline_ns` has passed). A newcomer stops as soon as a thread sleeps on the lock
// (it queues behind it instead of competing with the woken thread). Returns 0, EDEADLK or EBUSY (gave up).
static int cthr_lock_spin(cthr_lock_t *lock, uint32_t self, int spins, int yields, uint64_t deadline_ns,
                          bool newcomer) {
    uint32_t word = __atomic_load_n(&lock->word, __ATOMIC_RELAXED);
    for (int round = 0;; round++) {
        int rc = cthr_lock_attempt(lock, self, &word);
        if (rc != EBUSY) return rc;
        if (round >= spins + yields) return EBUSY;
        if (newcomer && (__atomic_load_n(&lock->waiters, __ATOMIC_RELAXED) & CTHR_LOCK_WAITER_MASK) != 0) {
            return EBUSY;
        }
        if (round < spins) {
            cthr_lock_relax();
        } else {
            if (deadline_ns != UINT64_MAX && cthr_clock_now_ns() >= deadline_ns) return EBUSY;
            sched_yield();
        }
        word = __atomic_load_n(&lock->word, __ATOMIC_RELAXED);
    }
}

// The heir's wait (see Fairness in the header): asks for the lock with HANDOFF and sleeps on the word until the
// owner's unlock reserves it (owner 0, HANDOFF set), then takes it. Returns 0 (taken), EBUSY (no hand-off: the
// bit was set by another heir, or got lost; the caller goes back to its ordinary wait) or ETIMEDOUT (the deadline
// passed; the request is withdrawn).
static int cthr_lock_inherit(cthr_lock_t *lock, uint32_t self, uint64_t deadline_ns) {
    uint32_t word = __atomic_load_n(&lock->word, __ATOMIC_RELAXED);
    for (;;) {
        if ((word & CTHR_LOCK_HANDOFF) != 0) return EBUSY;  // another heir asked first
        if ((word & CTHR_LOCK_OWNER_MASK) == 0) {
            // Free: take it as anyone would.
            if (__atomic_compare_exchange_n(&lock->word, &word, word | self, true, __ATOMIC_ACQUIRE,
                                            __ATOMIC_RELAXED)) {
                return 0;
            }
            continue;
        }
        if (__atomic_compare_exchange_n(&lock->word, &word, word | CTHR_LOCK_HANDOFF, true, __ATOMIC_RELAXED,
                                        __ATOMIC_RELAXED)) {
            word |= CTHR_LOCK_HANDOFF;
            break;
        }
    }
    // Now the heir: only this thread clears HANDOFF while the lock is held, or takes the reserved word.
    for (;;) {
        if ((word & CTHR_LOCK_HANDOFF) == 0) return EBUSY;  // lost (membarrier mode's plain-store unlock)
        if ((word & CTHR_LOCK_OWNER_MASK) == 0) {
            if (__atomic_compare_exchange_n(&lock->word, &word, (word & ~CTHR_LOCK_HANDOFF) | self, false,
                                            __ATOMIC_ACQUIRE, __ATOMIC_RELAXED)) {
                __atomic_fetch_add(&cthr_lock_handoff_count, 1, __ATOMIC_RELAXED);
                return 0;
            }
            continue;
        }
        uint64_t now = cthr_clock_now_ns();
        if (deadline_ns != UINT64_MAX && now >= deadline_ns) {
            // Withdraw the request; if the lock was handed over meanwhile, the loop above takes it.
            if (__atomic_compare_exchange_n(&lock->word, &word, word & ~CTHR_LOCK_HANDOFF, false, __ATOMIC_RELAXED,
                                            __ATOMIC_RELAXED)) {
                return ETIMEDOUT;
            }
            continue;
        }
        uint64_t until = now + CTHR_LOCK_UNPAIRED_SLEEP_NS;
        if (until > deadline_ns) until = deadline_ns;
        (void)cthr_lock_futex_wait(&lock->word, word, until);
        word = __atomic_load_n(&lock->word, __ATOMIC_RELAXED);
    }
}

int cthr_lock_lock_slow(cthr_lock_t *lock, uint64_t deadline_ns) {
    if (lock == NULL) return EINVAL;
    uint32_t self = cthr_lock_self();

    // Phase 1: spin briefly while the holder runs (critical sections are usually short), then yield the
    // processor a few times, which lets a preempted holder finish when threads outnumber cores; skipped when
    // threads already sleep on the lock.
    int result = cthr_lock_spin(lock, self, CTHR_LOCK_SPINS, CTHR_LOCK_YIELDS, deadline_ns, true);
    if (result != EBUSY) return result;

    // Phase 2: register as a waiter, clearing WAKING (so the next unlock wakes someone), and sleep. Each round:
    // barrier, re-check the lock, sleep only while `waiters` still holds the value this thread last wrote.
    uint32_t seen = __atomic_load_n(&lock->waiters, __ATOMIC_RELAXED);
    while (!__atomic_compare_exchange_n(&lock->waiters, &seen, (seen & ~CTHR_LOCK_WAKING) + 1, true,
                                        __ATOMIC_SEQ_CST, __ATOMIC_RELAXED)) {
    }
    seen = (seen & ~CTHR_LOCK_WAKING) + 1;
    uint64_t registered_at = cthr_clock_now_ns();
    for (;;) {
        bool paired = cthr_lock_barrier();
        uint32_t word = __atomic_load_n(&lock->word, __ATOMIC_SEQ_CST);
        result = cthr_lock_attempt(lock, self, &word);
        if (result != EBUSY) break;
        uint64_t until = deadline_ns;
        if (!paired) {
            uint64_t soon = cthr_clock_deadline_after(CTHR_LOCK_UNPAIRED_SLEEP_NS);
            if (soon < until) until = soon;
        }
        int rc = cthr_lock_futex_wait(&lock->waiters, seen, until);
        if (rc == ETIMEDOUT && until == deadline_ns) {
            // One last attempt, so a deadline that passed while the lock became free still succeeds.
            word = __atomic_load_n(&lock->word, __ATOMIC_SEQ_CST);
            result = cthr_lock_attempt(lock, self, &word);
            if (result == EBUSY) result = ETIMEDOUT;
            break;
        }
        // Awake (woken, or `waiters` changed): the WAKING bit may be this thread's, and while it is set unlocks
        // wake nobody, so this thread now owes the lock a check after every release. Try for a while; then clear
        // WAKING and check again after the barrier at the top before sleeping.
        result = cthr_lock_spin(lock, self, CTHR_LOCK_WOKEN_SPINS, CTHR_LOCK_WOKEN_YIELDS, deadline_ns, false);
        if (result != EBUSY) break;
        // Clear WAKING first (this thread gives up its turn as the woken spinner), then, if it has waited too
        // long, ask for the lock to be handed to it. The barrier and check at the top follow either way.
        seen = __atomic_and_fetch(&lock->waiters, ~CTHR_LOCK_WAKING, __ATOMIC_SEQ_CST);
        if (cthr_clock_now_ns() - registered_at > CTHR_LOCK_STARVATION_NS) {
            result = cthr_lock_inherit(lock, self, deadline_ns);
            if (result != EBUSY) break;
            // No hand-off: wait again as an ordinary waiter, from a fresh step (1) (WAKING cleared) through the
            // barrier and check at the top; a wake that came meanwhile is answered by that check.
            seen = __atomic_and_fetch(&lock->waiters, ~CTHR_LOCK_WAKING, __ATOMIC_SEQ_CST);
        }
    }

    // Leave the waiters. With the lock: clear WAKING too (the bit may be this thread's; clearing one that is
    // another's only costs an extra wake). Without it (timed out): pass on any wake this thread had, so a
    // sleeper re-checks the lock.
    uint32_t before = __atomic_load_n(&lock->waiters, __ATOMIC_RELAXED);
    uint32_t after;
    do {
        after = before - 1;
        if (result == 0) after &= ~CTHR_LOCK_WAKING;
    } while (!__atomic_compare_exchange_n(&lock->waiters, &before, after, true, __ATOMIC_SEQ_CST,
                                          __ATOMIC_RELAXED));
    if (result != 0 && (after & CTHR_LOCK_WAITER_MASK) != 0) {
        __atomic_fetch_or(&lock->waiters, CTHR_LOCK_WAKING, __ATOMIC_SEQ_CST);
        cthr_lock_futex_wake(&lock->waiters, 1);
    }
    return result;
}

int cthr_lock_unlock_slow(cthr_lock_t *lock) {
    if (lock == NULL) return EINVAL;
    uint32_t self = cthr_lock_self();
    uint32_t word = __atomic_load_n(&lock->word, __ATOMIC_RELAXED);
    do {
        if ((word & CTHR_LOCK_OWNER_MASK) != self) return EPERM;
        if ((word & CTHR_LOCK_HANDOFF) != 0) {
            // A heir asked: reserve the word for it (owner 0, HANDOFF kept) and wake it. The lock is not freed,
            // so nobody else needs waking; the heir's own unlock is an ordinary one.
            if (__atomic_compare_exchange_n(&lock->word, &word, word & (CTHR_LOCK_SLOW | CTHR_LOCK_HANDOFF), true,
                                            __ATOMIC_RELEASE, __ATOMIC_RELAXED)) {
                cthr_lock_futex_wake(&lock->word, INT_MAX);
                return 0;
            }
            continue;
        }
        // Only the owner changes the owner and SLOW bits of a held word, but a heir may set HANDOFF meanwhile:
        // a compare-exchange keeps the SLOW bit; sequentially consistent, it pairs with the sleeper's fence in
        // either mode.
    } while (!__atomic_compare_exchange_n(&lock->word, &word, word & CTHR_LOCK_SLOW, true, __ATOMIC_SEQ_CST,
                                          __ATOMIC_RELAXED));
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    if ((int32_t)__atomic_load_n(&lock->waiters, __ATOMIC_SEQ_CST) > 0) cthr_lock_wake_one(lock);
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
    do {
        if ((word & CTHR_LOCK_OWNER_MASK) != cthr_lock_self()) return EPERM;
        // A compare-exchange, so a heir's HANDOFF set meanwhile is kept.
    } while (!__atomic_compare_exchange_n(&lock->word, &word, (word & ~CTHR_LOCK_SLOW) | (on ? CTHR_LOCK_SLOW : 0),
                                          true, __ATOMIC_RELAXED, __ATOMIC_RELAXED));
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
