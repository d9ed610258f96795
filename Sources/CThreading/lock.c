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

void cthr_lock_count_fast_miss(void) { CTHR_LOCK_COUNT(rmw, 1); }

void cthr_lock_reset_thread_counters(void) { memset(&cthr_lock_tls_counters, 0, sizeof cthr_lock_tls_counters); }

// The calling thread's CPU time in nanoseconds (a spinner's cost is the CPU it burns: time spent descheduled in a
// sched_yield is not spinning).
static uint64_t cthr_lock_thread_cpu_ns(void) {
    struct timespec now;
    if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now) != 0) return 0;
    return (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec;
}

// The thread's CPU clock, read only while counting (for the spin time); 0 when not counting.
static inline uint64_t cthr_lock_count_clock(void) {
    return cthr_atomic_i32_load(&cthr_lock_counting_on, CTHR_RELAXED) != 0 ? cthr_lock_thread_cpu_ns() | 1u : 0;
}

// A futex wait on a lock word, counted.
static int cthr_lock_futex_wait(uint32_t *word, uint32_t expected, uint64_t deadline_ns) {
    int rc = cthr_futex_wait(word, expected, deadline_ns);
    CTHR_LOCK_COUNT(futex_waits, 1);
    if (rc == EAGAIN) CTHR_LOCK_COUNT(futex_eagain, 1);
    return rc;
}

// A futex wake on a lock word, counted.
static void cthr_lock_futex_wake(uint32_t *word, int32_t count) {
    (void)cthr_futex_wake(word, count, NULL);
    CTHR_LOCK_COUNT(futex_wakes, 1);
}

// `sleepers`: its low half (the count and WAKING, as a 32-bit value) and its high half (the sequence).
static inline uint32_t cthr_lock_count_half(uint64_t sleepers) { return (uint32_t)sleepers; }
static inline uint32_t cthr_lock_sequence_half(uint64_t sleepers) { return (uint32_t)(sleepers >> 32); }
#define CTHR_LOCK_SEQUENCE_ONE (1ull << 32)

// The address of the sequence, the high half of `sleepers`: the futex word sleepers wait on. The kernel reads these
// four bytes; the process only ever changes them with read-modify-writes of the whole 64-bit word.
static inline uint32_t *cthr_lock_sequence_word(cthr_lock_t *lock) {
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    return (uint32_t *)&lock->sleepers.value + 1;
#else
    return (uint32_t *)&lock->sleepers.value;
#endif
}

// The spinner (one thread at a time: a newcomer holding `spinner`, or a woken thread holding WAKING) looks at the word
// this many times with `cthr_futex_backoff`'s doubling pauses between (1 to 32), yielding the processor after each
// look from CTHR_LOCK_SPIN_YIELDS_FROM on (a holder preempted while threads outnumber cores then gets a CPU; yielding
// only after more looks cost a two-thread condition or monitor hand-off on two busy CPUs much of its rate, see
// BENCHMARKS.md), then yields this many more times, and then sleeps. It polls the word only after a
// pause, and tries a compare-exchange only when it saw the owner field clear, so it costs the holder few transfers
// of the line. Only one thread spins, so the yields cost nobody else a CPU.
#ifndef CTHR_LOCK_SPINS
#define CTHR_LOCK_SPINS 10
#endif
#ifndef CTHR_LOCK_SPIN_YIELDS_FROM
#define CTHR_LOCK_SPIN_YIELDS_FROM 2
#endif
#ifndef CTHR_LOCK_YIELDS
#define CTHR_LOCK_YIELDS 8
#endif

// How long a heir, or a sleeper whose membarrier failed, sleeps before it looks at the lock again.
#define CTHR_LOCK_UNPAIRED_SLEEP_NS 1000000u

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

// Whether this process is a forked child (set by the child handler; plain, as the ids above). A child inherits the
// parent's lock state but not the parent's other threads: a lock's `waiters` may count threads that do not exist
// here, with WAKING set for one of them, and `spinner` may be set by a spinner that does not exist. So in a child
// a registration clears WAKING (as the lock before the one-spinner rework did: a stale WAKING then lasts until the
// next registration), and an unlock ignores `spinner`: more wake-ups, never fewer. (A `spinner` left set by the
// parent stays set: newcomers in the child then sleep instead of spinning, and every unlock wakes one.)
static bool cthr_lock_forked = false;

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
    cthr_lock_forked = true;
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


uint32_t cthr_lock_self_slow(void) {
    uint32_t tid = (uint32_t)syscall(SYS_gettid);
    cthr_lock_cached_tid = tid;
    return tid;
}

// Called by an unlock whose load of `waiters` found sleepers and WAKING clear. The read-modify-write orders the
// release store before it; if WAKING was still clear, the wake is this thread's to send.
// Microseconds on the monotonic clock, wrapping (the times of the last wake-up and the last hand-off).
static inline uint32_t cthr_lock_now_us(uint64_t now_ns) { return (uint32_t)(now_ns / 1000u); }

void cthr_lock_wake_one(cthr_lock_t *lock) {
    // Set WAKING only while waiters are registered (a compare-exchange, not an or: a WAKING set when the last
    // registered thread has just left would have nobody to answer for it, and unlocks would wake nobody after),
    // moving the sequence in the same read-modify-write.
    uint64_t sleepers = cthr_atomic_u64_load(&lock->sleepers, CTHR_RELAXED);
    do {
        // WAKING set: another unlock woke somebody, who has not looked yet. No count: nobody to wake.
        if ((int32_t)cthr_lock_count_half(sleepers) <= 0) return;
        CTHR_LOCK_COUNT(rmw, 1);
    } while (!cthr_atomic_u64_compare_exchange_weak(&lock->sleepers, &sleepers,
                                                    (sleepers | CTHR_LOCK_WAKING) + CTHR_LOCK_SEQUENCE_ONE,
                                                    CTHR_SEQ_CST, CTHR_RELAXED));
    cthr_atomic_u32_store(&lock->woken_at, cthr_lock_now_us(cthr_clock_now_ns()), CTHR_RELAXED);
    cthr_lock_futex_wake(cthr_lock_sequence_word(lock), 1);
}

// Wakes the heir sleeping on the word (see Fairness in the header).
void cthr_lock_wake_heir(cthr_lock_t *lock) { cthr_lock_futex_wake(&lock->word.value, INT_MAX); }

// Whether a release that found sleepers registered owes them a wake-up: a spinner will look, so none is owed while
// one spins; but with sleepers registered, one is woken once a millisecond anyway, so that each in turn can ask for
// the fair hand-off. (In a forked child the spinner may be a thread of the parent: owed, see `cthr_lock_forked`.)
// Sequentially consistent: the load Q of the header.
static bool cthr_lock_wake_owed(cthr_lock_t *lock) {
    if (cthr_lock_forked || cthr_atomic_u32_load(&lock->spinner, CTHR_SEQ_CST) == 0) return true;
    uint32_t now_us = cthr_lock_now_us(cthr_clock_now_ns());
    return now_us - cthr_atomic_u32_load(&lock->woken_at, CTHR_RELAXED) >= CTHR_LOCK_STARVATION_NS / 1000u;
}

void cthr_lock_released_to_sleepers(cthr_lock_t *lock) {
    if (cthr_lock_wake_owed(lock)) cthr_lock_wake_one(lock);
}

// Step (5) of a registered thread (see "Sleeping" in the header): it leaves the waiters, clearing WAKING in the same
// read-modify-write (the bit may be its own, which it has answered; one set for another woken thread costs nothing:
// that thread looks at the lock anyway). Called as soon as the thread holds the lock (its release then checks the
// waiters as any unlock's does), or when it gives up. Returns the count of the waiters that remain.
static uint32_t cthr_lock_leave(cthr_lock_t *lock) {
    uint64_t before = cthr_atomic_u64_load(&lock->sleepers, CTHR_RELAXED);
    uint64_t after;
    do {
        CTHR_LOCK_COUNT(rmw, 1);
        after = (before - 1) & ~(uint64_t)CTHR_LOCK_WAKING;  // the count is at least 1: no borrow from the sequence
    } while (!cthr_atomic_u64_compare_exchange_weak(&lock->sleepers, &before, after, CTHR_SEQ_CST, CTHR_RELAXED));
    return cthr_lock_count_half(after);
}

int cthr_lock_init(cthr_lock_t *lock) {
    if (lock == NULL) return EINVAL;
    cthr_atomic_u32_store(&lock->word, 0, CTHR_RELAXED);
    cthr_atomic_u64_store(&lock->sleepers, 0, CTHR_RELAXED);
    cthr_atomic_u32_store(&lock->handoff_at, 0, CTHR_RELAXED);
    cthr_atomic_u32_store(&lock->woken_at, 0, CTHR_RELAXED);
    cthr_atomic_u32_store(&lock->spinner, 0, CTHR_RELAXED);
    return 0;
}

// Takes the lock if its owner field is 0 and it is not reserved for a heir (HANDOFF), keeping the SLOW bit and adding
// `mark` (REGISTERED for a registered waiter, else 0); returns 0, EBUSY or EDEADLK and updates *word. Tries a
// compare-exchange only on a word it saw free.
static inline int cthr_lock_attempt(cthr_lock_t *lock, uint32_t self, uint32_t mark, uint32_t *word) {
    for (;;) {
        uint32_t owner = *word & CTHR_LOCK_OWNER_MASK;
        if (cthr_lock_is_self(owner, self)) return EDEADLK;
        if (owner != 0 || (*word & CTHR_LOCK_HANDOFF) != 0) return EBUSY;
        CTHR_LOCK_COUNT(rmw, 1);
        if (cthr_atomic_u32_compare_exchange_weak(&lock->word, word, *word | self | mark, CTHR_ACQUIRE,
                                                  CTHR_RELAXED)) {
            return 0;
        }
    }
}

int cthr_lock_trylock(cthr_lock_t *lock) {
    if (lock == NULL) return EINVAL;
    uint32_t word = cthr_atomic_u32_load(&lock->word, CTHR_RELAXED);
    return cthr_lock_attempt(lock, cthr_lock_self(), 0, &word);
}

// The spinner's loop (see "Who spins" in the header): looks at the word after each round of `cthr_futex_backoff`
// and takes it when free; a newcomer that holds `spinner` (`claimed`) then clears it, a registered thread (not
// `claimed`) takes it with REGISTERED. Returns 0, EDEADLK or EBUSY (gave up: the rounds or the deadline ran out;
// `spinner` still held).
static int cthr_lock_spin(cthr_lock_t *lock, uint32_t self, uint64_t deadline_ns, bool claimed) {
    uint64_t started = cthr_lock_count_clock();
    uint32_t mark = claimed ? 0 : CTHR_LOCK_REGISTERED;
    int rc = EBUSY;
    for (int round = 0; cthr_futex_backoff(round, CTHR_LOCK_SPINS, CTHR_LOCK_SPIN_YIELDS_FROM, CTHR_LOCK_YIELDS,
                                           deadline_ns);
         round++) {
        uint32_t word = cthr_atomic_u32_load(&lock->word, CTHR_RELAXED);
        rc = cthr_lock_attempt(lock, self, mark, &word);
        if (rc != EBUSY) break;
    }
    // Holding the lock (or refused: EDEADLK), the spinner's place is free again: a plain store, since only the
    // holder of `spinner` writes a 1 back to 0 (a newcomer's claim writes only a 0 to 1).
    if (claimed && rc != EBUSY) cthr_atomic_u32_store(&lock->spinner, 0, CTHR_RELEASE);
    if (started != 0) CTHR_LOCK_COUNT(spin_ns, cthr_lock_thread_cpu_ns() - (started & ~(uint64_t)1));
    return rc;
}

// A newcomer that found the lock held: claims `spinner` when nobody spins (`spinner` 0; WAKING clear in `waiters`,
// or set but the owner took the lock as a woken waiter (REGISTERED), so the bit is most likely the owner's, which it
// clears right after its take; the word not reserved for a heir), or takes the lock if it was freed meanwhile.
// Returns 0 or EDEADLK (taken or refused), EAGAIN (this thread now holds `spinner`) or EBUSY (somebody else spins or
// is awake to look: register and sleep).
static int cthr_lock_claim_spinner(cthr_lock_t *lock, uint32_t self) {
    uint32_t word = cthr_atomic_u32_load(&lock->word, CTHR_RELAXED);
    int rc = cthr_lock_attempt(lock, self, 0, &word);
    if (rc != EBUSY) return rc;
    if ((word & CTHR_LOCK_HANDOFF) != 0) return EBUSY;
    if ((word & CTHR_LOCK_REGISTERED) == 0 &&
        (cthr_atomic_u64_load(&lock->sleepers, CTHR_RELAXED) & CTHR_LOCK_WAKING) != 0) {
        return EBUSY;
    }
    if (cthr_atomic_u32_load(&lock->spinner, CTHR_RELAXED) != 0) return EBUSY;
    CTHR_LOCK_COUNT(rmw, 1);
    uint32_t idle = 0;
    return cthr_atomic_u32_compare_exchange_strong(&lock->spinner, &idle, 1, CTHR_RELAXED, CTHR_RELAXED) ? EAGAIN
                                                                                                       : EBUSY;
}

// Clears `spinner`, which the calling thread holds, after it gave up its spin: sequentially consistent (the clear C
// in the header's argument), a store that is a locked exchange on x86, so counted as a read-modify-write.
static void cthr_lock_drop_spinner(cthr_lock_t *lock) {
    cthr_atomic_u32_store(&lock->spinner, 0, CTHR_SEQ_CST);
    CTHR_LOCK_COUNT(rmw, 1);
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
            // Free: take it as any registered waiter would.
            CTHR_LOCK_COUNT(rmw, 1);
            if (cthr_atomic_u32_compare_exchange_weak(&lock->word, &word, word | self | CTHR_LOCK_REGISTERED,
                                                      CTHR_ACQUIRE, CTHR_RELAXED)) {
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
            if (cthr_atomic_u32_compare_exchange_strong(&lock->word, &word,
                                                        (word & ~CTHR_LOCK_HANDOFF) | self | CTHR_LOCK_REGISTERED,
                                                        CTHR_ACQUIRE, CTHR_RELAXED)) {
                cthr_atomic_u32_store(&lock->handoff_at, cthr_lock_now_us(cthr_clock_now_ns()), CTHR_RELAXED);
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
        (void)cthr_lock_futex_wait(&lock->word.value, word, until);
        word = cthr_atomic_u32_load(&lock->word, CTHR_RELAXED);
    }
}

// Whether a waiter registered at `registered_at` may ask for a hand-off now: it has waited more than
// CTHR_LOCK_STARVATION_NS, and the lock was not handed over in the last CTHR_LOCK_HANDOFF_INTERVAL_US.
static bool cthr_lock_may_inherit(cthr_lock_t *lock, uint64_t registered_at) {
    uint64_t now = cthr_clock_now_ns();
    if (now - registered_at <= CTHR_LOCK_STARVATION_NS) return false;
    return cthr_lock_handoff_due(cthr_lock_now_us(now), cthr_atomic_u32_load(&lock->handoff_at, CTHR_RELAXED));
}

// The check a spinner that gave up unregistered runs (as an unlock's, ignoring `spinner`): wake a sleeper when some
// are registered and no woken thread is awake.
static void cthr_lock_release_check(cthr_lock_t *lock) {
    if ((int32_t)cthr_lock_count_half(cthr_atomic_u64_load(&lock->sleepers, CTHR_SEQ_CST)) > 0) {
        cthr_lock_wake_one(lock);
    }
}

// The start of a contended acquisition: counts it, then `cthr_lock_claim_spinner`.
static int cthr_lock_enter(cthr_lock_t *lock, uint32_t self) {
    CTHR_LOCK_COUNT(contended, 1);
    CTHR_LOCK_COUNT(rmw, 1);  // the release (a fast path's compare-exchange that failed counted itself)
    return cthr_lock_claim_spinner(lock, self);
}

int cthr_lock_lock_spin(cthr_lock_t *lock, uint64_t deadline_ns) {
    if (lock == NULL) return EINVAL;
    uint32_t self = cthr_lock_self();
    int rc = cthr_lock_enter(lock, self);
    if (rc != EAGAIN) return rc;
    rc = cthr_lock_spin(lock, self, deadline_ns, true);
    if (rc != EBUSY) return rc;
    // Gave up unregistered (the caller may record its wait before sleeping): give `spinner` back and run the check
    // of the unlocks that skipped their wake-up because this thread spun.
    cthr_lock_drop_spinner(lock);
    cthr_lock_release_check(lock);
    return EBUSY;
}

// Step (1) of a registered thread that was awake (see "Sleeping" in the header): clears WAKING (which may be this
// thread's) and returns the sequence it saw there, the value its next futex wait compares.
static uint32_t cthr_lock_give_up_turn(cthr_lock_t *lock) {
    uint64_t before = cthr_atomic_u64_fetch_and(&lock->sleepers, ~(uint64_t)CTHR_LOCK_WAKING, CTHR_SEQ_CST);
    CTHR_LOCK_COUNT(rmw, 1);
    return cthr_lock_sequence_half(before);
}

// The registered part of an acquisition (see "Sleeping" in the header), entered as a newcomer that does not spin
// (`spinner` false) or that holds `spinner` and gave up its spin (`spinner` true).
static int cthr_lock_sleep(cthr_lock_t *lock, uint32_t self, uint64_t deadline_ns, bool spinner) {
    // Step (1): the registration (a woken thread that is awake keeps its WAKING), which reads the sequence its futex
    // wait compares in the same read-modify-write; a giving-up spinner then hands `spinner` back.
    uint64_t seen;
    if (__builtin_expect(cthr_lock_forked, 0)) {
        // A forked child: also clear a WAKING that may belong to a thread of the parent (see `cthr_lock_forked`).
        seen = cthr_atomic_u64_load(&lock->sleepers, CTHR_RELAXED);
        while (!cthr_atomic_u64_compare_exchange_weak(&lock->sleepers, &seen,
                                                      (seen & ~(uint64_t)CTHR_LOCK_WAKING) + 1, CTHR_SEQ_CST,
                                                      CTHR_RELAXED)) {
        }
    } else {
        seen = cthr_atomic_u64_fetch_add(&lock->sleepers, 1, CTHR_SEQ_CST);
    }
    uint32_t s = cthr_lock_sequence_half(seen);
    CTHR_LOCK_COUNT(rmw, 1);
    if (spinner) cthr_lock_drop_spinner(lock);
    uint64_t registered_at = cthr_clock_now_ns();
    int result;
    for (;;) {
        bool paired = cthr_lock_barrier();
        uint32_t word = cthr_atomic_u32_load(&lock->word, CTHR_SEQ_CST);
        result = cthr_lock_attempt(lock, self, CTHR_LOCK_REGISTERED, &word);
        if (result != EBUSY) break;
        uint64_t until = deadline_ns;
        if (!paired) {
            uint64_t soon = cthr_clock_deadline_after(CTHR_LOCK_UNPAIRED_SLEEP_NS);
            if (soon < until) until = soon;
        }
        // A deadline that has already passed needs no system call to find out.
        int rc = until != UINT64_MAX && cthr_clock_now_ns() >= until
                     ? ETIMEDOUT
                     : cthr_lock_futex_wait(cthr_lock_sequence_word(lock), s, until);
        if (rc == ETIMEDOUT && until == deadline_ns) {
            // One last attempt, so a deadline that passed while the lock became free still succeeds.
            word = cthr_atomic_u32_load(&lock->word, CTHR_SEQ_CST);
            result = cthr_lock_attempt(lock, self, CTHR_LOCK_REGISTERED, &word);
            if (result == EBUSY) result = ETIMEDOUT;
            break;
        }
        // Awake (woken, or a wake-up came before the sleep): the WAKING bit may be this thread's, and while it is
        // set unlocks wake nobody, so this thread now owes the lock a look after every release: it is the spinner.
        result = cthr_lock_spin(lock, self, deadline_ns, false);
        if (result != EBUSY) break;
        // Give up the turn: step (1) again (clear WAKING, read the sequence), then, if this thread has waited too
        // long and the lock's hand-off interval has passed, ask for the lock to be handed to it. The barrier and the
        // look at the top follow either way.
        s = cthr_lock_give_up_turn(lock);
        if (cthr_lock_may_inherit(lock, registered_at)) {
            result = cthr_lock_inherit(lock, self, deadline_ns);
            if (result != EBUSY) break;
            // No hand-off: wait again as an ordinary waiter, from a fresh step (1).
            s = cthr_lock_give_up_turn(lock);
        }
    }

    // Step (5): leave the waiters, clearing WAKING. Holding the lock (REGISTERED in the word until its release), this
    // thread's release checks the waiters as any unlock's does. Without it (timed out), pass on any wake this thread
    // had, so a sleeper looks at the lock again.
    uint32_t remaining = cthr_lock_leave(lock);
    if (result != 0 && remaining != 0) cthr_lock_wake_one(lock);
    return result;
}

int cthr_lock_lock_sleep(cthr_lock_t *lock, uint64_t deadline_ns) {
    if (lock == NULL) return EINVAL;
    return cthr_lock_sleep(lock, cthr_lock_self(), deadline_ns, false);
}

int cthr_lock_lock_slow(cthr_lock_t *lock, uint64_t deadline_ns) {
    if (lock == NULL) return EINVAL;
    uint32_t self = cthr_lock_self();
    int rc = cthr_lock_enter(lock, self);
    if (rc != EAGAIN && rc != EBUSY) return rc;
    bool spinner = rc == EAGAIN;
    if (spinner) {
        rc = cthr_lock_spin(lock, self, deadline_ns, true);
        if (rc != EBUSY) return rc;
    }
    return cthr_lock_sleep(lock, self, deadline_ns, spinner);
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
        // sleeps on the word or on `sequence` (ignoring `spinner`, which may be a parent thread's).
        do {
            CTHR_LOCK_COUNT(rmw, 1);
        } while (!cthr_atomic_u32_compare_exchange_weak(&lock->word, &word, word & CTHR_LOCK_SLOW, CTHR_SEQ_CST,
                                                        CTHR_RELAXED));
        if ((word & CTHR_LOCK_HANDOFF) != 0) cthr_lock_wake_heir(lock);
        cthr_atomic_thread_fence(CTHR_SEQ_CST);
        cthr_lock_release_check(lock);
        return 0;
    }
    // Only the owner changes the owner, REGISTERED and SLOW bits of a held word; a heir may set HANDOFF meanwhile,
    // which the subtraction keeps (so the word is left reserved for the heir, whose own release checks the waiters).
    // Sequentially consistent, it pairs with the sleeper's fence in either mode. Then the fast unlock's check.
    word = cthr_atomic_u32_fetch_sub(&lock->word, owner | (word & CTHR_LOCK_REGISTERED), CTHR_SEQ_CST);
    if ((word & CTHR_LOCK_HANDOFF) != 0) {
        cthr_lock_wake_heir(lock);
        return 0;
    }
    if ((int32_t)cthr_lock_count_half(cthr_atomic_u64_load(&lock->sleepers, CTHR_SEQ_CST)) > 0) {
        cthr_lock_released_to_sleepers(lock);
    }
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
    return cthr_lock_count_half(cthr_atomic_u64_load(&lock->sleepers, CTHR_RELAXED)) & CTHR_LOCK_WAITER_MASK;
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
