// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "cthr_clock.h"
#include "cthr_futex.h"
#include "cthr_lock.h"

__thread uint32_t cthr_lock_cached_tid __attribute__((tls_model("initial-exec"))) = 0;

cthr_atomic_i32_t cthr_lock_membarrier_mode = {0};

// Membarrier calls made by sleepers (membarrier mode only).
static cthr_atomic_u64_t cthr_lock_membarrier_count = {0};

// Hand-offs to a heir (see Fairness in the header).
static cthr_atomic_u64_t cthr_lock_handoff_count = {0};

// Counting (see `cthr_lock_set_counting`): a process-wide switch, and per-thread counters (no shared cache line).
static cthr_atomic_i32_t cthr_lock_counting_on = {0};
static __thread cthr_lock_counters_t cthr_lock_tls_counters __attribute__((tls_model("initial-exec")));
#define CTHR_LOCK_COUNT(field, n)                                                                                      \
    do {                                                                                                               \
        if (__builtin_expect(cthr_atomic_i32_load(&cthr_lock_counting_on, CTHR_RELAXED) != 0, 0))                     \
            cthr_lock_tls_counters.field += (n);                                                                       \
    } while (0)

void cthr_lock_set_counting(bool on) { cthr_atomic_i32_store(&cthr_lock_counting_on, on ? 1 : 0, CTHR_RELAXED); }

bool cthr_lock_counting(void) { return cthr_atomic_i32_load(&cthr_lock_counting_on, CTHR_RELAXED) != 0; }

void cthr_lock_thread_counters(cthr_lock_counters_t *out) {
    if (out != NULL) *out = cthr_lock_tls_counters;
}

void cthr_lock_reset_thread_counters(void) { memset(&cthr_lock_tls_counters, 0, sizeof cthr_lock_tls_counters); }

// The clock, read only while counting (for the spin time).
static inline uint64_t cthr_lock_count_clock(void) {
    return cthr_atomic_i32_load(&cthr_lock_counting_on, CTHR_RELAXED) != 0 ? cthr_clock_now_ns() : 0;
}

// A futex wait on a lock word, counted.
static int cthr_lock_futex_wait(cthr_atomic_u32_t *word, uint32_t expected, uint64_t deadline_ns) {
    int rc = cthr_futex_wait(&word->value, expected, deadline_ns);
    CTHR_LOCK_COUNT(futex_waits, 1);
    if (rc == EAGAIN) CTHR_LOCK_COUNT(futex_eagain, 1);
    return rc;
}

// A futex wake on a lock word, counted.
static void cthr_lock_futex_wake(cthr_atomic_u32_t *word, int32_t count) {
    (void)cthr_futex_wake(&word->value, count, NULL);
    CTHR_LOCK_COUNT(futex_wakes, 1);
}

// A thread that finds the lock held looks at the word this many more times before it only yields, as long as nobody
// sleeps on the lock already (then it queues at once: the woken thread is the one that spins), with
// `cthr_futex_backoff`'s doubling pauses between looks (1 to 32) and, from the third look, a sched_yield after each.
// Few looks: a spinner that polls the word takes its cache line away from the holder at every look. On the test VM
// (2 cores, whose cache-line transfers are cheap or slow depending on where the host places them), `bench locks` at
// 2 and 4 threads ran at 21 to 29 M ops/s in the slow case with one pause between looks (the first policy), 46 to 56
// M with doubling pauses alone (which lost a third at 4 threads in the cheap case, spinning where a runnable thread
// could have used the CPU), and 54 to 77 M with the yields between (level with or ahead of the first policy in the
// cheap case).
#ifndef CTHR_LOCK_SPINS
#define CTHR_LOCK_SPINS 10
#endif
// The first spin round that also yields.
#ifndef CTHR_LOCK_SPIN_YIELDS_FROM
#define CTHR_LOCK_SPIN_YIELDS_FROM 2
#endif
// Then yields the processor this many times (same condition), which lets a preempted holder run.
#ifndef CTHR_LOCK_YIELDS
#define CTHR_LOCK_YIELDS 8
#endif
// A woken thread looks this many times (with the same doubling pauses and yields), then yields this many times,
// before sleeping again; meanwhile WAKING stays set and unlocks wake nobody else.
#ifndef CTHR_LOCK_WOKEN_SPINS
#define CTHR_LOCK_WOKEN_SPINS 10
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
    cthr_atomic_i32_store(&cthr_lock_membarrier_mode, 1, CTHR_SEQ_CST);
    return 0;
#else
    return ENOSYS;
#endif
}

int cthr_lock_uses_membarrier(void) { return cthr_atomic_i32_load(&cthr_lock_membarrier_mode, CTHR_RELAXED); }

uint64_t cthr_lock_membarrier_calls(void) {
    return cthr_atomic_u64_load(&cthr_lock_membarrier_count, CTHR_RELAXED);
}

uint64_t cthr_lock_handoffs(void) {
    return cthr_atomic_u64_load(&cthr_lock_handoff_count, CTHR_RELAXED);
}

// Locks held across fork(). The child's only thread continues the forking thread under a new kernel id, but the
// words of the locks the forking thread held still hold its old id. So, as with pthread mutexes (whose owner the
// child inherits), the child's first thread owns them: the child handler records both ids, and the slow paths (and
// `cthr_lock_held_by_caller`) count a word owned by `cthr_lock_fork_parent_tid` as the caller's when the caller is
// `cthr_lock_fork_child_tid`. The fast unlock compares the word with the caller's own id, so it fails for such a
// word and the slow unlock releases it: nothing is added to the fast paths. Both are plain: written only in the
// child handler, while the child has one thread, and read by threads created after it. A second fork (from the
// child) records the child's ids, so a lock held across two forks by the same thread is only the child's in the
// first one. Other threads of the parent do not exist in the child: a lock they held stays held there, as for
// pthread mutexes.
static uint32_t cthr_lock_fork_parent_tid = 0;
static uint32_t cthr_lock_fork_child_tid = 0;

// Whether an owner id taken from a lock word is the calling thread (`self`): its own id, or, in a forked child's
// first thread, the id the forking thread had in the parent.
static inline bool cthr_lock_is_self(uint32_t owner, uint32_t self) {
    return owner == self || (owner != 0 && owner == cthr_lock_fork_parent_tid && self == cthr_lock_fork_child_tid);
}

// In a forked child (one thread): forget the parent's cached thread id, remembering it as the owner id of the locks
// this thread held at the fork (see above). The membarrier registration is inherited with the address space (the
// kernel resets it only on exec); registering again is harmless.
static void cthr_lock_after_fork_in_child(void) {
    cthr_lock_fork_parent_tid = cthr_lock_cached_tid;  // 0 if the forking thread never asked: it owns no lock
    cthr_lock_cached_tid = 0;
    cthr_lock_fork_child_tid = cthr_lock_self();
#ifdef SYS_membarrier
    if (cthr_atomic_i32_load(&cthr_lock_membarrier_mode, CTHR_RELAXED)) {
        (void)syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0);
    }
#endif
}

// Runs before main, so the unlock mode is fixed before any lock is used.
__attribute__((constructor)) static void cthr_lock_setup(void) {
    const char *counting = getenv("THREADING_LOCK_COUNTERS");
    if (counting != NULL && strcmp(counting, "1") == 0) cthr_lock_set_counting(true);
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
    if (!cthr_atomic_i32_load(&cthr_lock_membarrier_mode, CTHR_RELAXED)) {
        cthr_atomic_thread_fence(CTHR_SEQ_CST);
        return true;
    }
    cthr_atomic_u64_fetch_add(&cthr_lock_membarrier_count, 1, CTHR_RELAXED);
#ifdef SYS_membarrier
    if (syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0) == 0) return true;
#endif
    cthr_atomic_thread_fence(CTHR_SEQ_CST);
    return false;
}

// How long a sleeper whose barrier failed sleeps before it looks at the lock again.
#define CTHR_LOCK_UNPAIRED_SLEEP_NS 1000000u


uint32_t cthr_lock_self_slow(void) {
    uint32_t tid = (uint32_t)syscall(SYS_gettid);
    cthr_lock_cached_tid = tid;
    return tid;
}

// Called by an unlock whose load of `waiters` found sleepers and WAKING clear. The read-modify-write orders the
// release store before it; if WAKING was still clear, the wake is this thread's to send.
void cthr_lock_wake_one(cthr_lock_t *lock) {
    uint32_t before = cthr_atomic_u32_fetch_or(&lock->waiters, CTHR_LOCK_WAKING, CTHR_SEQ_CST);
    CTHR_LOCK_COUNT(rmw, 1);
    if ((before & CTHR_LOCK_WAKING) == 0) cthr_lock_futex_wake(&lock->waiters, 1);
}

int cthr_lock_init(cthr_lock_t *lock) {
    if (lock == NULL) return EINVAL;
    cthr_atomic_u32_store(&lock->word, 0, CTHR_RELAXED);
    cthr_atomic_u32_store(&lock->waiters, 0, CTHR_RELAXED);
    return 0;
}

// Takes the lock if its owner field is 0 and it is not reserved for a heir (HANDOFF), keeping the SLOW bit;
// returns 0, EBUSY or EDEADLK and updates *word.
static inline int cthr_lock_attempt(cthr_lock_t *lock, uint32_t self, uint32_t *word) {
    for (;;) {
        uint32_t owner = *word & CTHR_LOCK_OWNER_MASK;
        if (cthr_lock_is_self(owner, self)) return EDEADLK;
        if (owner != 0 || (*word & CTHR_LOCK_HANDOFF) != 0) return EBUSY;
        CTHR_LOCK_COUNT(rmw, 1);
        if (cthr_atomic_u32_compare_exchange_weak(&lock->word, word, *word | self, CTHR_ACQUIRE, CTHR_RELAXED)) {
            return 0;
        }
    }
}

int cthr_lock_trylock(cthr_lock_t *lock) {
    if (lock == NULL) return EINVAL;
    uint32_t word = cthr_atomic_u32_load(&lock->word, CTHR_RELAXED);
    return cthr_lock_attempt(lock, cthr_lock_self(), &word);
}

// Tries to take the lock, with a round of `cthr_futex_backoff` between the tries: `spins` spin rounds (doubling
// pauses, yielding too from CTHR_LOCK_SPIN_YIELDS_FROM), then `yields` yield rounds, which stop once `deadline_ns` has
// passed. A newcomer stops as soon as a thread sleeps on the lock
// (it queues behind it instead of competing with the woken thread). Returns 0, EDEADLK or EBUSY (gave up).
static int cthr_lock_spin(cthr_lock_t *lock, uint32_t self, int spins, int yields, uint64_t deadline_ns,
                          bool newcomer) {
    uint32_t word = cthr_atomic_u32_load(&lock->word, CTHR_RELAXED);
    uint64_t started = cthr_lock_count_clock();
    int rc;
    for (int round = 0;; round++) {
        rc = cthr_lock_attempt(lock, self, &word);
        if (rc != EBUSY) break;
        if (newcomer && (cthr_atomic_u32_load(&lock->waiters, CTHR_RELAXED) & CTHR_LOCK_WAITER_MASK) != 0) break;
        if (!cthr_futex_backoff(round, spins, CTHR_LOCK_SPIN_YIELDS_FROM, yields, deadline_ns)) break;
        word = cthr_atomic_u32_load(&lock->word, CTHR_RELAXED);
    }
    if (started != 0) CTHR_LOCK_COUNT(spin_ns, cthr_clock_now_ns() - started);
    return rc;
}

// The heir's wait (see Fairness in the header): asks for the lock with HANDOFF and sleeps on the word until the
// owner's unlock reserves it (owner 0, HANDOFF set), then takes it. Returns 0 (taken), EBUSY (no hand-off: the
// bit was set by another heir, or got lost; the caller goes back to its ordinary wait) or ETIMEDOUT (the deadline
// passed; the request is withdrawn).
static int cthr_lock_inherit(cthr_lock_t *lock, uint32_t self, uint64_t deadline_ns) {
    uint32_t word = cthr_atomic_u32_load(&lock->word, CTHR_RELAXED);
    for (;;) {
        if ((word & CTHR_LOCK_HANDOFF) != 0) return EBUSY;  // another heir asked first
        if ((word & CTHR_LOCK_OWNER_MASK) == 0) {
            // Free: take it as anyone would.
            CTHR_LOCK_COUNT(rmw, 1);
            if (cthr_atomic_u32_compare_exchange_weak(&lock->word, &word, word | self, CTHR_ACQUIRE, CTHR_RELAXED)) {
                return 0;
            }
            continue;
        }
        CTHR_LOCK_COUNT(rmw, 1);
        if (cthr_atomic_u32_compare_exchange_weak(&lock->word, &word, word | CTHR_LOCK_HANDOFF, CTHR_RELAXED,
                                                  CTHR_RELAXED)) {
            word |= CTHR_LOCK_HANDOFF;
            break;
        }
    }
    // Now the heir: only this thread clears HANDOFF while the lock is held, or takes the reserved word.
    for (;;) {
        if ((word & CTHR_LOCK_HANDOFF) == 0) return EBUSY;  // lost (membarrier mode's plain-store unlock)
        if ((word & CTHR_LOCK_OWNER_MASK) == 0) {
            CTHR_LOCK_COUNT(rmw, 1);
            if (cthr_atomic_u32_compare_exchange_strong(&lock->word, &word, (word & ~CTHR_LOCK_HANDOFF) | self,
                                                        CTHR_ACQUIRE, CTHR_RELAXED)) {
                cthr_atomic_u64_fetch_add(&cthr_lock_handoff_count, 1, CTHR_RELAXED);
                CTHR_LOCK_COUNT(handoffs, 1);
                return 0;
            }
            continue;
        }
        uint64_t now = cthr_clock_now_ns();
        if (deadline_ns != UINT64_MAX && now >= deadline_ns) {
            // Withdraw the request; if the lock was handed over meanwhile, the loop above takes it.
            CTHR_LOCK_COUNT(rmw, 1);
            if (cthr_atomic_u32_compare_exchange_strong(&lock->word, &word, word & ~CTHR_LOCK_HANDOFF, CTHR_RELAXED,
                                                        CTHR_RELAXED)) {
                return ETIMEDOUT;
            }
            continue;
        }
        uint64_t until = now + CTHR_LOCK_UNPAIRED_SLEEP_NS;
        if (until > deadline_ns) until = deadline_ns;
        (void)cthr_lock_futex_wait(&lock->word, word, until);
        word = cthr_atomic_u32_load(&lock->word, CTHR_RELAXED);
    }
}

int cthr_lock_lock_slow(cthr_lock_t *lock, uint64_t deadline_ns) {
    if (lock == NULL) return EINVAL;
    uint32_t self = cthr_lock_self();
    CTHR_LOCK_COUNT(contended, 1);
    CTHR_LOCK_COUNT(rmw, 2);  // the failed fast compare-exchange, and the release

    // Phase 1: spin briefly while the holder runs (critical sections are usually short), then yield the
    // processor a few times, which lets a preempted holder finish when threads outnumber cores; skipped when
    // threads already sleep on the lock.
    int result = cthr_lock_spin(lock, self, CTHR_LOCK_SPINS, CTHR_LOCK_YIELDS, deadline_ns, true);
    if (result != EBUSY) return result;

    // Phase 2: register as a waiter, clearing WAKING (so the next unlock wakes someone), and sleep. Each round:
    // barrier, re-check the lock, sleep only while `waiters` still holds the value this thread last wrote.
    uint32_t seen = cthr_atomic_u32_load(&lock->waiters, CTHR_RELAXED);
    do {
        CTHR_LOCK_COUNT(rmw, 1);
    } while (!cthr_atomic_u32_compare_exchange_weak(&lock->waiters, &seen, (seen & ~CTHR_LOCK_WAKING) + 1,
                                                    CTHR_SEQ_CST, CTHR_RELAXED));
    seen = (seen & ~CTHR_LOCK_WAKING) + 1;
    uint64_t registered_at = cthr_clock_now_ns();
    for (;;) {
        bool paired = cthr_lock_barrier();
        uint32_t word = cthr_atomic_u32_load(&lock->word, CTHR_SEQ_CST);
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
            word = cthr_atomic_u32_load(&lock->word, CTHR_SEQ_CST);
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
        seen = (cthr_atomic_u32_fetch_and(&lock->waiters, ~CTHR_LOCK_WAKING, CTHR_SEQ_CST) & ~CTHR_LOCK_WAKING);
        CTHR_LOCK_COUNT(rmw, 1);
        if (cthr_clock_now_ns() - registered_at > CTHR_LOCK_STARVATION_NS) {
            result = cthr_lock_inherit(lock, self, deadline_ns);
            if (result != EBUSY) break;
            // No hand-off: wait again as an ordinary waiter, from a fresh step (1) (WAKING cleared) through the
            // barrier and check at the top; a wake that came meanwhile is answered by that check.
            seen = (cthr_atomic_u32_fetch_and(&lock->waiters, ~CTHR_LOCK_WAKING, CTHR_SEQ_CST) & ~CTHR_LOCK_WAKING);
            CTHR_LOCK_COUNT(rmw, 1);
        }
    }

    // Leave the waiters. With the lock: clear WAKING too (the bit may be this thread's; clearing one that is
    // another's only costs an extra wake). Without it (timed out): pass on any wake this thread had, so a
    // sleeper re-checks the lock.
    uint32_t before = cthr_atomic_u32_load(&lock->waiters, CTHR_RELAXED);
    uint32_t after;
    do {
        CTHR_LOCK_COUNT(rmw, 1);
        after = before - 1;
        if (result == 0) after &= ~CTHR_LOCK_WAKING;
    } while (!cthr_atomic_u32_compare_exchange_weak(&lock->waiters, &before, after, CTHR_SEQ_CST, CTHR_RELAXED));
    if (result != 0 && (after & CTHR_LOCK_WAITER_MASK) != 0) {
        cthr_atomic_u32_fetch_or(&lock->waiters, CTHR_LOCK_WAKING, CTHR_SEQ_CST);
        CTHR_LOCK_COUNT(rmw, 1);
        cthr_lock_futex_wake(&lock->waiters, 1);
    }
    return result;
}

int cthr_lock_unlock_slow(cthr_lock_t *lock) {
    if (lock == NULL) return EINVAL;
    uint32_t self = cthr_lock_self();
    uint32_t word = cthr_atomic_u32_load(&lock->word, CTHR_RELAXED);
    uint32_t owner = word & CTHR_LOCK_OWNER_MASK;
    if (!cthr_lock_is_self(owner, self)) return EPERM;
    if (owner != self) {
        // A lock the forking thread held, released in the forked child: a HANDOFF in the word asks for a heir of
        // the parent, which the child does not have (or for a heir of the child, which treats a hand-off that does
        // not come as lost: it goes back to its ordinary wait). Free the word, clearing HANDOFF, and wake whoever
        // sleeps on the word or on `waiters`.
        while (!cthr_atomic_u32_compare_exchange_weak(&lock->word, &word, word & CTHR_LOCK_SLOW, CTHR_SEQ_CST,
                                                      CTHR_RELAXED)) {
        }
        if ((word & CTHR_LOCK_HANDOFF) != 0) (void)cthr_futex_wake(&lock->word.value, INT_MAX, NULL);
        cthr_atomic_thread_fence(CTHR_SEQ_CST);
        if ((int32_t)cthr_atomic_u32_load(&lock->waiters, CTHR_SEQ_CST) > 0) cthr_lock_wake_one(lock);
        return 0;
    }
    do {
        if ((word & CTHR_LOCK_OWNER_MASK) != self) return EPERM;
        if ((word & CTHR_LOCK_HANDOFF) != 0) {
            // A heir asked: reserve the word for it (owner 0, HANDOFF kept) and wake it. The lock is not freed,
            // so nobody else needs waking; the heir's own unlock is an ordinary one.
            if (cthr_atomic_u32_compare_exchange_weak(&lock->word, &word, word & (CTHR_LOCK_SLOW | CTHR_LOCK_HANDOFF),
                                                      CTHR_RELEASE, CTHR_RELAXED)) {
                (void)cthr_futex_wake(&lock->word.value, INT_MAX, NULL);
                return 0;
            }
            continue;
        }
        // Only the owner changes the owner and SLOW bits of a held word, but a heir may set HANDOFF meanwhile:
        // a compare-exchange keeps the SLOW bit; sequentially consistent, it pairs with the sleeper's fence in
        // either mode.
    } while (!cthr_atomic_u32_compare_exchange_weak(&lock->word, &word, word & CTHR_LOCK_SLOW, CTHR_SEQ_CST,
                                                    CTHR_RELAXED));
    cthr_atomic_thread_fence(CTHR_SEQ_CST);
    if ((int32_t)cthr_atomic_u32_load(&lock->waiters, CTHR_SEQ_CST) > 0) cthr_lock_wake_one(lock);
    return 0;
}

uint32_t cthr_lock_owner(const cthr_lock_t *lock) {
    if (lock == NULL) return 0;
    return cthr_atomic_u32_load(&lock->word, CTHR_RELAXED) & CTHR_LOCK_OWNER_MASK;
}

bool cthr_lock_held_by_caller(const cthr_lock_t *lock) {
    if (lock == NULL) return false;
    return cthr_lock_is_self(cthr_atomic_u32_load(&lock->word, CTHR_RELAXED) & CTHR_LOCK_OWNER_MASK, cthr_lock_self());
}

uint32_t cthr_lock_load(const cthr_lock_t *lock) {
    if (lock == NULL) return 0;
    return cthr_atomic_u32_load(&lock->word, CTHR_RELAXED);
}

uint32_t cthr_lock_waiter_count(const cthr_lock_t *lock) {
    if (lock == NULL) return 0;
    return cthr_atomic_u32_load(&lock->waiters, CTHR_RELAXED) & CTHR_LOCK_WAITER_MASK;
}

int cthr_lock_set_slow(cthr_lock_t *lock, bool on) {
    if (lock == NULL) return EINVAL;
    uint32_t word = cthr_atomic_u32_load(&lock->word, CTHR_RELAXED);
    do {
        if (!cthr_lock_is_self(word & CTHR_LOCK_OWNER_MASK, cthr_lock_self())) return EPERM;
        // A compare-exchange, so a heir's HANDOFF set meanwhile is kept.
    } while (!cthr_atomic_u32_compare_exchange_weak(&lock->word, &word,
                                                    (word & ~CTHR_LOCK_SLOW) | (on ? CTHR_LOCK_SLOW : 0),
                                                    CTHR_RELAXED, CTHR_RELAXED));
    return 0;
}

// A waiter looks at the sequence this many times with doubling pauses between (no yields: the signal usually comes
// from a thread running on another CPU, and a yield in the spin cost a one-pair hand-off two thirds of its rate in
// `bench handoff`), then this many times with a sched_yield (a signaller that must first be scheduled), before it
// registers and sleeps: a signal that comes meanwhile costs neither side a system call.
#ifndef CTHR_COND_SPINS
#define CTHR_COND_SPINS CTHR_LOCK_SPINS
#endif
#ifndef CTHR_COND_YIELDS
#define CTHR_COND_YIELDS CTHR_LOCK_YIELDS
#endif

int cthr_lock_cond_init(cthr_lock_cond_t *cond) {
    if (cond == NULL) return EINVAL;
    cthr_atomic_u32_store(&cond->sequence, 0, CTHR_RELAXED);
    cthr_atomic_u32_store(&cond->sleepers, 0, CTHR_RELAXED);
    return 0;
}

uint32_t cthr_lock_cond_begin(const cthr_lock_cond_t *cond) {
    if (cond == NULL) return 0;
    return cthr_atomic_u32_load(&cond->sequence, CTHR_ACQUIRE);
}

bool cthr_lock_cond_spin(const cthr_lock_cond_t *cond, uint32_t sequence, uint64_t deadline_ns) {
    if (cond == NULL) return false;
    for (int round = 0;; round++) {
        if (cthr_atomic_u32_load(&cond->sequence, CTHR_ACQUIRE) != sequence) return true;
        if (!cthr_futex_backoff(round, CTHR_COND_SPINS, CTHR_COND_SPINS, CTHR_COND_YIELDS, deadline_ns)) return false;
    }
}

int cthr_lock_cond_wait(cthr_lock_cond_t *cond, uint32_t sequence, uint64_t deadline_ns) {
    if (cond == NULL) return EINVAL;
    // Register, then look (Dekker's pairing with the signaller's increment-then-check, both sequentially
    // consistent): either the signaller sees this sleeper and wakes it, or this load sees the new sequence. The
    // futex compares the sequence again atomically with going to sleep.
    cthr_atomic_u32_fetch_add(&cond->sleepers, 1, CTHR_SEQ_CST);
    int rc = 0;
    while (cthr_atomic_u32_load(&cond->sequence, CTHR_SEQ_CST) == sequence) {
        rc = cthr_futex_wait(&cond->sequence.value, sequence, deadline_ns);
        if (rc != EINTR) break;  // woken (maybe spuriously), timed out, or the sequence had already moved (EAGAIN)
    }
    cthr_atomic_u32_fetch_sub(&cond->sleepers, 1, CTHR_RELAXED);
    // A signal that came with the timeout still counts as one.
    return rc == ETIMEDOUT && cthr_atomic_u32_load(&cond->sequence, CTHR_ACQUIRE) == sequence ? ETIMEDOUT : 0;
}

// Moves the sequence (every wait begun before now ends), then wakes up to `count` sleepers if any registered.
static int cthr_lock_cond_notify(cthr_lock_cond_t *cond, int32_t count) {
    if (cond == NULL) return EINVAL;
    cthr_atomic_u32_fetch_add(&cond->sequence, 1, CTHR_SEQ_CST);
    if (cthr_atomic_u32_load(&cond->sleepers, CTHR_SEQ_CST) != 0) {
        (void)cthr_futex_wake(&cond->sequence.value, count, NULL);
    }
    return 0;
}

int cthr_lock_cond_signal(cthr_lock_cond_t *cond) {
    return cthr_lock_cond_notify(cond, 1);
}

int cthr_lock_cond_broadcast(cthr_lock_cond_t *cond) {
    return cthr_lock_cond_notify(cond, INT_MAX);
}
