// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

// The reader-writer lock's slow paths; the protocol is described in cthr_rwlock.h.

#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <sched.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cthr_clock.h"
#include "cthr_futex.h"
#include "cthr_lock.h"
#include "cthr_rwlock.h"

__thread cthr_rwlock_holds_t cthr_rwlock_held __attribute__((tls_model("initial-exec")));

// The next stripe index to hand to a thread (1-based; threads keep theirs for life, so with as many stripes as
// CPUs, the threads that run at once mostly write different lines).
static cthr_atomic_u32_t cthr_rwlock_next_index = {0};

// A waiting thread tries this many times with `pause`, then yields this many times, before it sleeps.
#ifndef CTHR_RWLOCK_SPINS
#define CTHR_RWLOCK_SPINS 40
#endif
#ifndef CTHR_RWLOCK_YIELDS
#define CTHR_RWLOCK_YIELDS 8
#endif

#define CTHR_RWLOCK_MIN_STRIPES 8u
#define CTHR_RWLOCK_MAX_STRIPES 64u

// Every bit a claiming or holding writer owns, which its release clears.
#define CTHR_RWLOCK_WRITE_BITS                                                                                   \
    (CTHR_RWLOCK_WRITER | CTHR_RWLOCK_BLOCK | CTHR_RWLOCK_DRAIN_WAIT | CTHR_RWLOCK_REBIAS |                     \
     CTHR_RWLOCK_HANDOVER | (0xffffffffull << CTHR_RWLOCK_OWNER_SHIFT))

_Static_assert(CTHR_RWLOCK_STRIPE_STRIDE * sizeof(uint32_t) == 64, "one stripe per 64-byte line");

// Bumps a sequence word and wakes up to `count` of its sleepers.
static void cthr_rwlock_bump_and_wake(cthr_atomic_u32_t *word, int32_t count) {
    cthr_atomic_u32_fetch_add(word, 1, CTHR_SEQ_CST);
    (void)cthr_futex_wake(&word->value, count, NULL);
}

static inline uint32_t cthr_rwlock_owner_of(uint64_t state) {
    return (state & CTHR_RWLOCK_WRITER) ? (uint32_t)(state >> CTHR_RWLOCK_OWNER_SHIFT) : 0;
}

static uint32_t cthr_rwlock_stripes_for_cpus(void) {
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    uint32_t stripes = CTHR_RWLOCK_MIN_STRIPES;
    while (stripes < CTHR_RWLOCK_MAX_STRIPES && (long)stripes < cpus) stripes *= 2;
    return stripes;
}

// This thread's stripe index, assigned on first use.
static inline uint32_t cthr_rwlock_index(void) {
    if (cthr_rwlock_held.index == 0) {
        uint32_t index = (cthr_atomic_u32_fetch_add(&cthr_rwlock_next_index, 1, CTHR_RELAXED) + 1);
        cthr_rwlock_held.index = index == 0 ? 1 : index;
    }
    return cthr_rwlock_held.index;
}

static inline int cthr_rwlock_slot(const cthr_rwlock_t *lock) {
    for (int index = 0; index < CTHR_RWLOCK_TRACKED; index++) {
        if (cthr_rwlock_held.count[index] != 0 && cthr_rwlock_held.lock[index] == lock) return index;
    }
    return -1;
}

static inline int cthr_rwlock_free_slot(void) {
    for (int index = 0; index < CTHR_RWLOCK_TRACKED; index++) {
        if (cthr_rwlock_held.count[index] == 0) return index;
    }
    return -1;
}

// Whether every stripe reads zero (acquire: a zero read from a leaving reader orders its critical section first).
static bool cthr_rwlock_stripes_clear(cthr_rwlock_t *lock) {
    for (uint32_t index = 0; index <= lock->stripe_mask; index++) {
        if (cthr_atomic_u32_load(&lock->stripes[index * CTHR_RWLOCK_STRIPE_STRIDE], CTHR_SEQ_CST) != 0) return false;
    }
    return true;
}

// Clears DRAIN_WAIT and wakes the drainer if this thread cleared it: one wake per sleep of the drainer, however
// many readers leave meanwhile (the drainer sets the flag again before it sleeps again, then scans).
static void cthr_rwlock_wake_drain(cthr_rwlock_t *lock) {
    uint64_t before = cthr_atomic_u64_fetch_and(&lock->state, ~CTHR_RWLOCK_DRAIN_WAIT, CTHR_SEQ_CST);
    if ((before & CTHR_RWLOCK_DRAIN_WAIT) != 0) cthr_rwlock_bump_and_wake(&lock->drain_seq, 1);
}

void cthr_rwlock_last_reader_left(cthr_rwlock_t *lock) {
    uint64_t state = cthr_atomic_u64_load(&lock->state, CTHR_SEQ_CST);
    // Hand over: still no reader, the writer still claiming and asking for it (a failed exchange reloads `state`).
    while ((state & CTHR_RWLOCK_COUNT_MASK) == 0 && (state & (CTHR_RWLOCK_HANDOVER | CTHR_RWLOCK_BLOCK)) ==
                                                         CTHR_RWLOCK_HANDOVER) {
        uint64_t next = (state | CTHR_RWLOCK_BLOCK) & ~CTHR_RWLOCK_HANDOVER;
        if (cthr_atomic_u64_compare_exchange_weak(&lock->state, &state, next, CTHR_SEQ_CST, CTHR_RELAXED)) break;
    }
    cthr_rwlock_wake_drain(lock);
}

void cthr_rwlock_leave_stripe(cthr_rwlock_t *lock, cthr_atomic_u32_t *stripe) {
    if ((cthr_atomic_u32_fetch_sub(stripe, 1, CTHR_SEQ_CST) - 1) == 0 &&
        (cthr_atomic_u64_load(&lock->state, CTHR_SEQ_CST) & CTHR_RWLOCK_DRAIN_WAIT) != 0) {
        cthr_rwlock_wake_drain(lock);
    }
}

int cthr_rwlock_init(cthr_rwlock_t *lock, int kind) {
    if (lock == NULL || (kind != CTHR_RWLOCK_PREFER_READER && kind != CTHR_RWLOCK_PREFER_WRITER)) return EINVAL;
    uint32_t count = cthr_rwlock_stripes_for_cpus();
    size_t bytes = (size_t)count * CTHR_RWLOCK_STRIPE_STRIDE * sizeof(uint32_t);
    cthr_atomic_u32_t *stripes = aligned_alloc(64, bytes);
    if (stripes == NULL) return ENOMEM;
    memset(stripes, 0, bytes);
    memset(lock, 0, sizeof(*lock));
    lock->kind = (uint32_t)kind;
    lock->stripe_mask = count - 1;
    lock->stripes = stripes;
    return 0;
}

int cthr_rwlock_destroy(cthr_rwlock_t *lock) {
    if (lock == NULL) return EINVAL;
    uint64_t state = cthr_atomic_u64_load(&lock->state, CTHR_ACQUIRE);
    if ((state & (CTHR_RWLOCK_WRITER | CTHR_RWLOCK_COUNT_MASK)) != 0) return EBUSY;
    if (lock->stripes != NULL && !cthr_rwlock_stripes_clear(lock)) return EBUSY;
    free(lock->stripes);
    lock->stripes = NULL;
    return 0;
}

// Records a read hold the caller just took in `slot` (or as untracked when the table is full).
static inline void cthr_rwlock_record(const cthr_rwlock_t *lock, int slot, uint8_t striped) {
    if (slot >= 0) {
        cthr_rwlock_held.lock[slot] = lock;
        cthr_rwlock_held.count[slot] = 1;
        cthr_rwlock_held.striped[slot] = striped;
    } else {
        cthr_rwlock_held.untracked++;
    }
    cthr_rwlock_held.entries++;
}

// One attempt at a new read hold. Returns 0 (held and recorded), EBUSY (blocked by a writer) or EAGAIN.
static int cthr_rwlock_read_attempt(cthr_rwlock_t *lock, int slot) {
    for (;;) {
        uint64_t state = cthr_atomic_u64_load(&lock->state, CTHR_SEQ_CST);
        if ((state & CTHR_RWLOCK_BLOCK) != 0) return EBUSY;
        if ((state & CTHR_RWLOCK_BIASED) != 0 && slot >= 0) {
            cthr_atomic_u32_t *stripe = cthr_rwlock_stripe(lock, cthr_rwlock_index());
            cthr_atomic_u32_fetch_add(stripe, 1, CTHR_SEQ_CST);
            state = cthr_atomic_u64_load(&lock->state, CTHR_SEQ_CST);
            if ((state & (CTHR_RWLOCK_BIASED | CTHR_RWLOCK_BLOCK)) == CTHR_RWLOCK_BIASED) {
                cthr_rwlock_record(lock, slot, 1);
                return 0;
            }
            cthr_rwlock_leave_stripe(lock, stripe);
            continue;
        }
        if ((state & CTHR_RWLOCK_COUNT_MASK) == CTHR_RWLOCK_COUNT_MASK) return EAGAIN;
        uint64_t next = state + 1;
        if ((state & CTHR_RWLOCK_COUNT_MASK) != 0 && (state & CTHR_RWLOCK_WRITER) == 0 && slot >= 0) {
            next |= CTHR_RWLOCK_BIASED;
        }
        if (cthr_atomic_u64_compare_exchange_strong(&lock->state, &state, next, CTHR_SEQ_CST, CTHR_RELAXED)) {
            cthr_rwlock_record(lock, slot, 0);
            return 0;
        }
    }
}

// The sleep step of both waits: reads the sequence `seq_word`, then, while `busy` is still set in the state,
// registers `waiters` there (the releaser bumps the sequence and wakes only when it sees them) and sleeps while the
// sequence is unchanged. Returns EAGAIN when it did not sleep (the state moved on: look again), ETIMEDOUT when the
// sleep reached `deadline_ns`, and 0 after any other wake-up.
static int cthr_rwlock_sleep(cthr_rwlock_t *lock, cthr_atomic_u32_t *seq_word, uint64_t busy, uint64_t waiters,
                             uint64_t deadline_ns) {
    uint32_t seq = cthr_atomic_u32_load(seq_word, CTHR_SEQ_CST);
    uint64_t state = cthr_atomic_u64_load(&lock->state, CTHR_SEQ_CST);
    if ((state & busy) == 0) return EAGAIN;
    if ((state & waiters) == 0 && !cthr_atomic_u64_compare_exchange_strong(&lock->state, &state, state | waiters,
                                                                           CTHR_SEQ_CST, CTHR_RELAXED)) {
        return EAGAIN;
    }
    return cthr_futex_wait(&seq_word->value, seq, deadline_ns) == ETIMEDOUT ? ETIMEDOUT : 0;
}

// How far an acquisition may go: one attempt (TRY), spinning and yielding but returning before it would sleep
// (SPIN, for a caller that records its wait only when it is about to sleep), the whole wait (SLEEP), or the wait
// without its first spin (SLEEP_NOW: the rest of a SPIN call, which has just spun).
typedef enum { CTHR_RWLOCK_TRY, CTHR_RWLOCK_SPIN, CTHR_RWLOCK_SLEEP, CTHR_RWLOCK_SLEEP_NOW } cthr_rwlock_mode_t;

// The round a wait loop starts at: SLEEP_NOW skips the spinning and yielding rounds (one attempt, then the sleep).
static inline int cthr_rwlock_first_round(cthr_rwlock_mode_t mode) {
    return mode == CTHR_RWLOCK_SLEEP_NOW ? CTHR_RWLOCK_SPINS + CTHR_RWLOCK_YIELDS : 0;
}

// A read hold: nested (a count in the table), or new, waiting until `deadline_ns` as far as `mode` allows (EBUSY
// when it stopped before sleeping).
static int cthr_rwlock_read_acquire(cthr_rwlock_t *lock, uint64_t deadline_ns, cthr_rwlock_mode_t mode) {
    if (lock == NULL) return EINVAL;
    (void)cthr_rwlock_index();
    int slot = cthr_rwlock_slot(lock);
    if (slot >= 0) {
        if (cthr_rwlock_held.count[slot] == UINT32_MAX) return EAGAIN;
        cthr_rwlock_held.count[slot]++;
        return 0;
    }
    uint64_t state = cthr_atomic_u64_load(&lock->state, CTHR_RELAXED);
    if (cthr_rwlock_owner_of(state) == cthr_lock_self() && (state & CTHR_RWLOCK_BLOCK) != 0) return EDEADLK;
    slot = cthr_rwlock_free_slot();
    for (int round = cthr_rwlock_first_round(mode);; round++) {
        int rc = cthr_rwlock_read_attempt(lock, slot);
        if (rc != EBUSY || mode == CTHR_RWLOCK_TRY) return rc;
        if (round < CTHR_RWLOCK_SPINS) {
            cthr_cpu_relax();
            continue;
        }
        if (deadline_ns != UINT64_MAX && cthr_clock_now_ns() >= deadline_ns) return ETIMEDOUT;
        if (round < CTHR_RWLOCK_SPINS + CTHR_RWLOCK_YIELDS) {
            sched_yield();
            continue;
        }
        // Sleep while new readers are blocked.
        if (mode == CTHR_RWLOCK_SPIN) return EBUSY;
        if (cthr_rwlock_sleep(lock, &lock->read_seq, CTHR_RWLOCK_BLOCK, CTHR_RWLOCK_READ_WAITERS, deadline_ns) ==
            ETIMEDOUT) {
            rc = cthr_rwlock_read_attempt(lock, slot);  // a hold that became free meanwhile still counts
            return rc == EBUSY ? ETIMEDOUT : rc;
        }
    }
}

// Releases a claim or a write hold: clears the writer's bits (restoring the bias it revoked), then wakes the
// readers and one writer that registered a sleep.
static void cthr_rwlock_release_write(cthr_rwlock_t *lock) {
    uint64_t state = cthr_atomic_u64_load(&lock->state, CTHR_RELAXED);
    uint64_t next;
    do {
        next = state & ~(CTHR_RWLOCK_WRITE_BITS | CTHR_RWLOCK_READ_WAITERS | CTHR_RWLOCK_WRITE_WAITERS);
        if ((state & CTHR_RWLOCK_REBIAS) != 0) next |= CTHR_RWLOCK_BIASED;
    } while (!cthr_atomic_u64_compare_exchange_weak(&lock->state, &state, next, CTHR_SEQ_CST, CTHR_RELAXED));
    if ((state & CTHR_RWLOCK_READ_WAITERS) != 0) cthr_rwlock_bump_and_wake(&lock->read_seq, INT_MAX);
    if ((state & CTHR_RWLOCK_WRITE_WAITERS) != 0) cthr_rwlock_bump_and_wake(&lock->write_seq, 1);
}

// One attempt at the claim of the write side: revokes the bias (readers from now on use the central count) and,
// preferring writers or trying only, blocks new readers. Returns 0 (claimed; *state is the claimed word), EBUSY
// (another writer claims it, or `try_only` and readers hold it) or EDEADLK (the caller claims it).
static int cthr_rwlock_claim(cthr_rwlock_t *lock, uint64_t mine, bool block, bool try_only, uint64_t *state) {
    for (;;) {
        uint64_t seen = cthr_atomic_u64_load(&lock->state, CTHR_SEQ_CST);
        if ((seen & CTHR_RWLOCK_WRITER) != 0) {
            return cthr_rwlock_owner_of(seen) == (uint32_t)(mine >> CTHR_RWLOCK_OWNER_SHIFT) ? EDEADLK : EBUSY;
        }
        if (try_only && (seen & CTHR_RWLOCK_COUNT_MASK) != 0) return EBUSY;
        uint64_t next = (seen | mine) & ~CTHR_RWLOCK_BIASED;
        if ((seen & CTHR_RWLOCK_BIASED) != 0) next |= CTHR_RWLOCK_REBIAS;
        if (block) next |= CTHR_RWLOCK_BLOCK;
        if (cthr_atomic_u64_compare_exchange_strong(&lock->state, &seen, next, CTHR_SEQ_CST, CTHR_RELAXED)) {
            *state = next;
            return 0;
        }
    }
}

// The claim of a writer that found the write side claimed: takes `writers`, a `cthr_lock_t`, so that only its holder
// waits here for the claim (spinning, then asleep on `write_seq`), claims, and releases `writers`. Returns 0
// (claimed; *state is the claimed word), ETIMEDOUT, or in SPIN mode EBUSY (it would have slept, for `writers` or
// for the claim; it holds neither).
static int cthr_rwlock_claim_queued(cthr_rwlock_t *lock, uint64_t mine, bool block, uint64_t deadline_ns,
                                    cthr_rwlock_mode_t mode, uint64_t *state) {
    // EDEADLK cannot come back: this thread holds `writers` only in here.
    int rc = mode == CTHR_RWLOCK_SPIN        ? cthr_lock_lock_spin(&lock->writers, deadline_ns)
             : mode == CTHR_RWLOCK_SLEEP_NOW ? cthr_lock_lock_sleep(&lock->writers, deadline_ns)
                                             : cthr_lock_lock_slow(&lock->writers, deadline_ns);
    if (rc != 0) return rc;
    for (int round = cthr_rwlock_first_round(mode);; round++) {
        rc = cthr_rwlock_claim(lock, mine, block, false, state);
        if (rc != EBUSY) break;  // claimed (EDEADLK cannot happen: the caller's first attempt saw another claim)
        if (round < CTHR_RWLOCK_SPINS) {
            cthr_cpu_relax();
            continue;
        }
        if (deadline_ns != UINT64_MAX && cthr_clock_now_ns() >= deadline_ns) {
            rc = ETIMEDOUT;
            break;
        }
        if (round < CTHR_RWLOCK_SPINS + CTHR_RWLOCK_YIELDS) {
            sched_yield();
            continue;
        }
        // Sleep while another writer holds the claim (a timeout is seen at the top of the next round).
        if (mode == CTHR_RWLOCK_SPIN) {
            rc = EBUSY;
            break;
        }
        if (cthr_rwlock_sleep(lock, &lock->write_seq, CTHR_RWLOCK_WRITER, CTHR_RWLOCK_WRITE_WAITERS, deadline_ns) ==
            EAGAIN) {
            continue;
        }
        round = CTHR_RWLOCK_SPINS + CTHR_RWLOCK_YIELDS;  // awake: look again, then sleep again if still claimed
    }
    if (!cthr_lock_fast_unlock(&lock->writers)) (void)cthr_lock_unlock_slow(&lock->writers);
    return rc;
}

// Phase 2 of a write acquisition, for the claimant (`state` is the word it claimed or last saw): waits for the
// readers to leave. First the stripe readers that came in before the claim revoked the bias (a later one sees BIASED
// cleared after its increment and leaves: Dekker's pairing), once: every stripe seen at zero since the claim. Then
// the central readers: once none is left, one compare-exchange that sees the count at zero sets BLOCK. Preferring
// readers, new central readers keep coming in meanwhile, so the writer sets HANDOVER and the reader that brings the
// count to zero sets BLOCK for it (cthr_rwlock_last_reader_left). Returns 0 (held), EBUSY (TRY: readers hold it;
// the claim is released), EINPROGRESS (SPIN: it would sleep; the claim is kept, `cthr_rwlock_wrlock_drain` goes on)
// or ETIMEDOUT (the claim is released).
static int cthr_rwlock_drain(cthr_rwlock_t *lock, uint64_t state, uint64_t deadline_ns, cthr_rwlock_mode_t mode) {
    bool stripes_drained = (state & CTHR_RWLOCK_REBIAS) == 0;
    for (int round = cthr_rwlock_first_round(mode);; round++) {
        state = cthr_atomic_u64_load(&lock->state, CTHR_SEQ_CST);
        if (!stripes_drained) stripes_drained = cthr_rwlock_stripes_clear(lock);
        if (stripes_drained && (state & CTHR_RWLOCK_COUNT_MASK) == 0) {
            uint64_t next = (state | CTHR_RWLOCK_BLOCK) & ~(CTHR_RWLOCK_HANDOVER | CTHR_RWLOCK_DRAIN_WAIT);
            if (next == state ||
                cthr_atomic_u64_compare_exchange_strong(&lock->state, &state, next, CTHR_SEQ_CST, CTHR_RELAXED)) {
                return 0;
            }
            continue;
        }
        if (mode == CTHR_RWLOCK_TRY) {
            cthr_rwlock_release_write(lock);
            return EBUSY;
        }
        if (stripes_drained && (state & (CTHR_RWLOCK_BLOCK | CTHR_RWLOCK_HANDOVER)) == 0) {
            (void)cthr_atomic_u64_compare_exchange_strong(&lock->state, &state, state | CTHR_RWLOCK_HANDOVER,
                                                          CTHR_SEQ_CST, CTHR_RELAXED);
            continue;
        }
        if (round < CTHR_RWLOCK_SPINS) {
            cthr_cpu_relax();
            continue;
        }
        if (deadline_ns != UINT64_MAX && cthr_clock_now_ns() >= deadline_ns) {
            cthr_rwlock_release_write(lock);
            return ETIMEDOUT;
        }
        if (round < CTHR_RWLOCK_SPINS + CTHR_RWLOCK_YIELDS) {
            sched_yield();
            continue;
        }
        if (mode == CTHR_RWLOCK_SPIN) return EINPROGRESS;
        // Sleep until a stripe or the central count reaches zero (the reader that brings it there wakes the writer).
        uint32_t seq = cthr_atomic_u32_load(&lock->drain_seq, CTHR_SEQ_CST);
        state = cthr_atomic_u64_load(&lock->state, CTHR_SEQ_CST);
        if ((state & CTHR_RWLOCK_DRAIN_WAIT) == 0 &&
            !cthr_atomic_u64_compare_exchange_strong(&lock->state, &state, state | CTHR_RWLOCK_DRAIN_WAIT,
                                                     CTHR_SEQ_CST, CTHR_RELAXED)) {
            continue;
        }
        state |= CTHR_RWLOCK_DRAIN_WAIT;
        if ((state & CTHR_RWLOCK_COUNT_MASK) == 0 && (stripes_drained || cthr_rwlock_stripes_clear(lock))) continue;
        (void)cthr_futex_wait(&lock->drain_seq.value, seq, deadline_ns);
        round = CTHR_RWLOCK_SPINS;  // awake: look again, yield a little, sleep again if readers remain
    }
}

// The write side: claim, then wait for the readers to leave, as far as `mode` allows (TRY: one attempt, nothing
// changed on failure; SPIN: EBUSY when it would sleep for the claim, holding nothing, or EINPROGRESS when it would
// sleep for the readers, holding the claim).
static int cthr_rwlock_write_acquire(cthr_rwlock_t *lock, uint64_t deadline_ns, cthr_rwlock_mode_t mode) {
    if (lock == NULL) return EINVAL;
    uint32_t self = cthr_lock_self();
    uint64_t mine = ((uint64_t)self << CTHR_RWLOCK_OWNER_SHIFT) | CTHR_RWLOCK_WRITER;
    if (cthr_rwlock_slot(lock) >= 0) return EDEADLK;  // an upgrade would wait for itself
    bool prefer_writers = lock->kind == CTHR_RWLOCK_PREFER_WRITER;
    bool try_only = mode == CTHR_RWLOCK_TRY;

    // Phase 1: claim the write side (see Writers in the header: a writer that finds it claimed queues on `writers`).
    uint64_t state;
    int rc = cthr_rwlock_claim(lock, mine, prefer_writers || try_only, try_only, &state);
    if (rc == EBUSY && !try_only) rc = cthr_rwlock_claim_queued(lock, mine, prefer_writers, deadline_ns, mode, &state);
    if (rc != 0) return rc;
    // Phase 2.
    return cthr_rwlock_drain(lock, state, deadline_ns, mode);
}

int cthr_rwlock_rdlock(cthr_rwlock_t *lock) { return cthr_rwlock_read_acquire(lock, UINT64_MAX, CTHR_RWLOCK_SLEEP); }

int cthr_rwlock_tryrdlock(cthr_rwlock_t *lock) { return cthr_rwlock_read_acquire(lock, 0, CTHR_RWLOCK_TRY); }

int cthr_rwlock_timedrdlock(cthr_rwlock_t *lock, uint64_t deadline_ns) {
    return cthr_rwlock_read_acquire(lock, deadline_ns, CTHR_RWLOCK_SLEEP);
}

int cthr_rwlock_spinrdlock(cthr_rwlock_t *lock, uint64_t deadline_ns) {
    return cthr_rwlock_read_acquire(lock, deadline_ns, CTHR_RWLOCK_SPIN);
}

int cthr_rwlock_rdlock_sleep(cthr_rwlock_t *lock, uint64_t deadline_ns) {
    return cthr_rwlock_read_acquire(lock, deadline_ns, CTHR_RWLOCK_SLEEP_NOW);
}

int cthr_rwlock_wrlock(cthr_rwlock_t *lock) {
    return cthr_rwlock_write_acquire(lock, UINT64_MAX, CTHR_RWLOCK_SLEEP);
}

int cthr_rwlock_trywrlock(cthr_rwlock_t *lock) { return cthr_rwlock_write_acquire(lock, 0, CTHR_RWLOCK_TRY); }

int cthr_rwlock_timedwrlock(cthr_rwlock_t *lock, uint64_t deadline_ns) {
    return cthr_rwlock_write_acquire(lock, deadline_ns, CTHR_RWLOCK_SLEEP);
}

int cthr_rwlock_spinwrlock(cthr_rwlock_t *lock, uint64_t deadline_ns) {
    return cthr_rwlock_write_acquire(lock, deadline_ns, CTHR_RWLOCK_SPIN);
}

int cthr_rwlock_wrlock_sleep(cthr_rwlock_t *lock, uint64_t deadline_ns) {
    return cthr_rwlock_write_acquire(lock, deadline_ns, CTHR_RWLOCK_SLEEP_NOW);
}

int cthr_rwlock_wrlock_drain(cthr_rwlock_t *lock, uint64_t deadline_ns) {
    if (lock == NULL) return EINVAL;
    uint64_t state = cthr_atomic_u64_load(&lock->state, CTHR_SEQ_CST);
    if ((state & CTHR_RWLOCK_WRITER) == 0 || cthr_rwlock_owner_of(state) != cthr_lock_self()) return EPERM;
    // The stripes are looked at again (REBIAS set): the claim may have revoked a bias. A hold a reader handed over
    // meanwhile (BLOCK set, no reader left) is found held at the first look.
    return cthr_rwlock_drain(lock, state | CTHR_RWLOCK_REBIAS, deadline_ns, CTHR_RWLOCK_SLEEP_NOW);
}

// Releases one read hold recorded in `slot`, or an untracked one (`slot` < 0).
static void cthr_rwlock_read_release(cthr_rwlock_t *lock, int slot) {
    bool striped = false;
    if (slot >= 0) {
        if (--cthr_rwlock_held.count[slot] != 0) return;  // a nested hold
        striped = cthr_rwlock_held.striped[slot] != 0;
    } else {
        cthr_rwlock_held.untracked--;
    }
    cthr_rwlock_held.entries--;
    if (striped) {
        cthr_rwlock_leave_stripe(lock, cthr_rwlock_stripe(lock, cthr_rwlock_held.index));
        return;
    }
    uint64_t before = cthr_atomic_u64_fetch_sub(&lock->state, 1, CTHR_SEQ_CST);
    if ((before & CTHR_RWLOCK_COUNT_MASK) == 1 && (before & (CTHR_RWLOCK_DRAIN_WAIT | CTHR_RWLOCK_HANDOVER)) != 0) {
        cthr_rwlock_last_reader_left(lock);
    }
}

int cthr_rwlock_rdunlock(cthr_rwlock_t *lock) {
    if (lock == NULL) return EINVAL;
    int slot = cthr_rwlock_slot(lock);
    if (slot < 0) {
        // One of the holds beyond the table (not checked), if the thread has any and the lock has central readers.
        uint64_t state = cthr_atomic_u64_load(&lock->state, CTHR_RELAXED);
        if (cthr_rwlock_held.untracked == 0 || (state & CTHR_RWLOCK_COUNT_MASK) == 0) return EPERM;
    }
    cthr_rwlock_read_release(lock, slot);
    return 0;
}

int cthr_rwlock_unlock(cthr_rwlock_t *lock) {
    if (lock == NULL) return EINVAL;
    if (cthr_rwlock_holds_write(lock)) {
        cthr_rwlock_release_write(lock);
        return 0;
    }
    return cthr_rwlock_rdunlock(lock);
}

int cthr_rwlock_read_holds(const cthr_rwlock_t *lock) {
    if (lock == NULL) return 0;
    int slot = cthr_rwlock_slot(lock);
    return slot < 0 ? 0 : (int)cthr_rwlock_held.count[slot];
}

uint32_t cthr_rwlock_writer(const cthr_rwlock_t *lock) {
    if (lock == NULL) return 0;
    return cthr_rwlock_owner_of(cthr_atomic_u64_load(&lock->state, CTHR_RELAXED));
}

bool cthr_rwlock_holds_write(const cthr_rwlock_t *lock) {
    if (lock == NULL) return false;
    uint64_t state = cthr_atomic_u64_load(&lock->state, CTHR_RELAXED);
    // Held, not merely claimed: BLOCK set and no reader left (a claimant still draining does not hold it).
    return cthr_rwlock_owner_of(state) == cthr_lock_self() && (state & CTHR_RWLOCK_BLOCK) != 0;
}

int cthr_rwlock_set_slow(cthr_rwlock_t *lock, bool on) {
    if (lock == NULL) return EINVAL;
    cthr_atomic_u32_store(&lock->slow, on ? 1u : 0u, CTHR_RELAXED);
    return 0;
}

uint64_t cthr_rwlock_load(const cthr_rwlock_t *lock) {
    if (lock == NULL) return 0;
    return cthr_atomic_u64_load(&lock->state, CTHR_RELAXED);
}

uint32_t cthr_rwlock_stripe_count(const cthr_rwlock_t *lock) {
    if (lock == NULL || lock->stripes == NULL) return 0;
    return lock->stripe_mask + 1;
}
