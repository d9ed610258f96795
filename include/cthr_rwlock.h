// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

// A futex reader-writer lock with a biased reader path, reader- or writer-preferring: the lock under Threading's
// `ReadWriteLock`.
//
// State. One 64-bit word: the central reader count, flags, and the writer's kernel thread id in the high half (so
// the owner of the write side is known for free, as in `cthr_lock_t`). Beside it, a table of reader stripes: one
// counter per 64-byte line, `stripe_mask + 1` of them (the CPU count rounded up to a power of two, 8 to 64).
//
// Readers (BRAVO's bias, USENIX ATC 2019, with per-lock striped counters as in folly's SharedMutex). While the
// BIASED flag is set, a reader increments the counter of its thread's stripe (a line no other running thread
// writes), then reloads the word: if BIASED is still set and BLOCK clear it holds the lock, having written nothing
// that another reader touches; otherwise it takes its increment back and tries again. Without the bias a reader
// adds one to the central count with a compare-exchange; a reader that finds other readers there sets BIASED, so
// read-mostly work moves to the stripes by itself. Read holds are tracked per thread (below), so a nested read of
// a lock the thread already reads touches no shared memory at all, whatever the preference.
//
// Writers. A writer claims the write side (WRITER, with its id) and revokes the bias in the same compare-exchange
// (BIASED cleared, REBIAS remembered), so readers arriving from then on use the central count. A writer that finds
// the write side claimed does not fight for it with the others: it takes `writers`, a `cthr_lock_t`, and only that
// lock's holder waits for the claim (spinning, then asleep on `write_seq`) and releases `writers` once it has
// claimed. So contended writers get the futex lock's protocol (at most one spinner, the others asleep on a word that
// does not churn, the rate-limited fair hand-off between them), and the state word's line is fought over by the
// claimant, the holder of `writers` and a writer arriving on the inlined path, whatever the number of writers. (In a
// forked child, a `writers` held at the fork by a thread of the parent stays held, as any lock such a thread held:
// the child's writers then get the write side only when they find it unclaimed.) Preferring writers,
// the claim also sets BLOCK and new readers wait. Preferring readers, new readers keep coming in: the writer first
// waits until every stripe has been seen at zero (the stripe readers that came in before the claim; no later one
// stays, the bias being off), then, while central readers remain, sets HANDOVER: the reader whose release brings
// the central count to zero sets BLOCK in its place, so the writer gets the lock at the first moment no reader
// holds it instead of having to catch that moment itself (glibc's reader-preferring lock hands over the same way).
// BLOCK is thus only ever set by a reader-preferring lock when no reader at all holds it: a reader that waits for
// another thread's read hold cannot be stuck behind a waiting writer. The unlock clears the word (restoring BIASED
// after a revocation) and wakes whoever registered a sleep. The lock word is 0 only when nothing is held and no bias
// is on: then the inlined write lock is one compare-exchange from 0 and the unlock one compare-exchange back, as in
// `cthr_lock_t`.
//
// Why a stripe reader and a writer never both get in: the reader's increment and reload and the writer's revoking
// compare-exchange and stripe scan are all sequentially consistent (Dekker's pairing): either the reload sees
// BIASED cleared (the reader leaves), or the scan sees the increment (the writer waits for the decrement). A stripe
// count that is not zero while the word is 0 belongs to a reader on its way out, never to a holder.
//
// Sleeping. Three futex words, each a sequence number: `read_seq` (readers waiting for BLOCK to clear),
// `write_seq` (the holder of `writers` waiting for the claim) and `drain_seq` (the claiming writer waiting for
// readers to leave). A sleeper reads the sequence, sets its flag in the word (READ_WAITERS, WRITE_WAITERS, DRAIN_WAIT) with a
// read-modify-write that also re-checks the condition, and sleeps while the sequence is unchanged; whoever changes
// the condition and finds the flag bumps the sequence and wakes (all readers, the holder of `writers`, the drainer).
#ifndef CTHREADING_RWLOCK_H
#define CTHREADING_RWLOCK_H

#include "cthr_lock.h"
#include "cthr_nullability.h"
#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

// Preference for `cthr_rwlock_init`.
typedef enum cthr_rwlock_kind {
    CTHR_RWLOCK_PREFER_READER = 0,  // a writer waits until no reader holds the lock: readers may starve it
    CTHR_RWLOCK_PREFER_WRITER = 1,  // a waiting writer blocks new readers (nested reads still pass: see below)
} cthr_rwlock_kind_t;

// The lock word.
#define CTHR_RWLOCK_COUNT_MASK 0x00ffffffull     // central reader count
#define CTHR_RWLOCK_BIASED (1ull << 24)          // readers may use the stripes
#define CTHR_RWLOCK_WRITER (1ull << 25)          // a writer claims the write side (its id is in bits 32-63)
#define CTHR_RWLOCK_BLOCK (1ull << 26)           // new readers must wait
#define CTHR_RWLOCK_READ_WAITERS (1ull << 27)    // readers sleep on read_seq
#define CTHR_RWLOCK_WRITE_WAITERS (1ull << 28)   // writers sleep on write_seq
#define CTHR_RWLOCK_DRAIN_WAIT (1ull << 29)      // the claiming writer sleeps on drain_seq
#define CTHR_RWLOCK_REBIAS (1ull << 30)          // the claiming writer revoked the bias: scan stripes, restore it
#define CTHR_RWLOCK_HANDOVER (1ull << 31)        // stripes drained: the last central reader out sets BLOCK
#define CTHR_RWLOCK_OWNER_SHIFT 32
// uint32_t counters per stripe: one 64-byte line each.
#define CTHR_RWLOCK_STRIPE_STRIDE 16u

// A reader-writer lock. Initialise with `cthr_rwlock_init` (which allocates the stripes) and release with
// `cthr_rwlock_destroy`. Must not move after init.
typedef struct cthr_rwlock {
    cthr_atomic_u64_t state;       // the lock word (above)
    cthr_atomic_u32_t slow;        // nonzero: every inlined fast path fails (statistics are being counted)
    uint32_t kind;                 // a cthr_rwlock_kind_t
    cthr_atomic_u32_t read_seq;           // futex: readers waiting
    cthr_atomic_u32_t write_seq;   // futex: the holder of `writers` waiting for the claim
    cthr_atomic_u32_t drain_seq;   // futex: the claiming writer waiting for readers to leave
    uint32_t stripe_mask;          // stripes - 1
    cthr_atomic_u32_t *_Nullable stripes;  // stripe i's count is stripes[i * CTHR_RWLOCK_STRIPE_STRIDE]
    uint8_t line_padding[24];      // puts `writers` 64 bytes in: a line of its own in a lock allocated on a line
    cthr_lock_t writers;           // the queue of writers that found the write side claimed (see Writers)
} cthr_rwlock_t;

#ifndef __cplusplus
_Static_assert(__builtin_offsetof(cthr_rwlock_t, writers) == 64, "`writers` starts the lock's second 64-byte line");
#endif

// Read holds are tracked per thread, in every build, in a small thread-local table of the locks the thread holds
// for reading with a count each (no shared counter: readers on different cores write nothing in common). With it,
// a read unlock by a thread that holds no read hold is refused (EPERM) instead of corrupting the lock, a write
// request by a thread that holds a read hold (an upgrade, which would wait for itself) is refused (EDEADLK), and
// a nested read is only a count in the table. A thread holding more than CTHR_RWLOCK_TRACKED distinct locks for
// reading at once holds the extra ones through the central count, tracked by number only (their unlocks are not
// checked and their nested reads take the lock again, which waits behind a writer when writers are preferred).
#define CTHR_RWLOCK_TRACKED 8

// The calling thread's read holds. Reached by the inlined paths; initial-exec, so two instructions away.
typedef struct cthr_rwlock_holds {
    const cthr_rwlock_t *_Nullable lock[CTHR_RWLOCK_TRACKED];
    uint32_t count[CTHR_RWLOCK_TRACKED];    // nested read holds; 0 = free entry
    uint8_t striped[CTHR_RWLOCK_TRACKED];   // the hold is in this thread's stripe (else in the central count)
    uint32_t entries;                       // entries in use plus untracked holds (0: the thread reads nothing)
    uint32_t untracked;                     // holds beyond the table (central count)
    uint32_t index;                         // this thread's stripe index, 1-based (0 = not assigned yet)
} cthr_rwlock_holds_t;

extern __thread cthr_rwlock_holds_t cthr_rwlock_held __attribute__((tls_model("initial-exec")));

// Initializes *lock with `kind`. Returns 0, EINVAL (NULL, unknown kind) or ENOMEM (the stripes).
int cthr_rwlock_init(cthr_rwlock_t *_Nullable lock, int kind);

// Destroys an unlocked lock and frees its stripes. Returns 0, EINVAL (NULL) or EBUSY (held by anyone; nothing
// changes; a thread locking it concurrently with destroy is undefined).
int cthr_rwlock_destroy(cthr_rwlock_t *_Nullable lock);

// Called by a stripe reader leaving (or backing off): decrements the stripe and wakes a draining writer if the
// stripe reached zero while one sleeps.
void cthr_rwlock_leave_stripe(cthr_rwlock_t *_Nonnull lock, cthr_atomic_u32_t *_Nonnull stripe);

// Called by a central reader whose release brought the count to zero while HANDOVER or DRAIN_WAIT was set: hands
// the lock to the claiming writer (sets BLOCK, if no reader came in meanwhile) and wakes it if it sleeps.
void cthr_rwlock_last_reader_left(cthr_rwlock_t *_Nonnull lock);

// The counter of stripe `index` (masked).
static inline cthr_atomic_u32_t *_Nonnull cthr_rwlock_stripe(cthr_rwlock_t *_Nonnull lock, uint32_t index) {
    return lock->stripes + (index & lock->stripe_mask) * CTHR_RWLOCK_STRIPE_STRIDE;
}

// Takes a read hold without waiting, for a thread that holds no read hold on any lock: the stripe increment and a
// reload while the lock is biased, else one compare-exchange on the central count. Returns false (nothing held)
// when a writer claims the lock, the thread already reads some lock (nesting is the slow path's), its stripe is
// not assigned yet, or `slow` is set: the caller then calls `cthr_rwlock_rdlock` (or a try/timed variant).
static inline bool cthr_rwlock_fast_rdlock(cthr_rwlock_t *_Nonnull lock) {
    cthr_rwlock_holds_t *held = &cthr_rwlock_held;
    if (held->entries != 0 || held->index == 0 || cthr_atomic_u32_load(&lock->slow, CTHR_RELAXED) != 0) return false;
    uint64_t state = cthr_atomic_u64_load(&lock->state, CTHR_RELAXED);
    uint8_t striped;
    if ((state & (CTHR_RWLOCK_BIASED | CTHR_RWLOCK_BLOCK)) == CTHR_RWLOCK_BIASED) {
        cthr_atomic_u32_t *stripe = cthr_rwlock_stripe(lock, held->index);
        cthr_atomic_u32_fetch_add(stripe, 1, CTHR_SEQ_CST);
        state = cthr_atomic_u64_load(&lock->state, CTHR_SEQ_CST);
        if ((state & (CTHR_RWLOCK_BIASED | CTHR_RWLOCK_BLOCK)) != CTHR_RWLOCK_BIASED) {
            cthr_rwlock_leave_stripe(lock, stripe);
            return false;
        }
        striped = 1;
    } else {
        if ((state & CTHR_RWLOCK_BLOCK) != 0) return false;
        if ((state & CTHR_RWLOCK_COUNT_MASK) == CTHR_RWLOCK_COUNT_MASK) return false;
        uint64_t next = state + 1;
        if ((state & CTHR_RWLOCK_COUNT_MASK) != 0 && (state & CTHR_RWLOCK_WRITER) == 0) next |= CTHR_RWLOCK_BIASED;
        if (!cthr_atomic_u64_compare_exchange_strong(&lock->state, &state, next, CTHR_SEQ_CST, CTHR_RELAXED)) {
            return false;
        }
        striped = 0;
    }
    held->lock[0] = lock;
    held->count[0] = 1;
    held->striped[0] = striped;
    held->entries = 1;
    return true;
}

// Releases the read hold of a thread whose only read hold is one hold on `lock`. Returns false (nothing changed)
// otherwise: the caller then calls `cthr_rwlock_unlock` (or `cthr_rwlock_rdunlock`).
static inline bool cthr_rwlock_fast_rdunlock(cthr_rwlock_t *_Nonnull lock) {
    cthr_rwlock_holds_t *held = &cthr_rwlock_held;
    if (held->entries != 1 || held->lock[0] != lock || held->count[0] != 1) return false;
    held->count[0] = 0;
    held->entries = 0;
    if (held->striped[0]) {
        cthr_rwlock_leave_stripe(lock, cthr_rwlock_stripe(lock, held->index));
    } else {
        uint64_t before = cthr_atomic_u64_fetch_sub(&lock->state, 1, CTHR_SEQ_CST);
        if ((before & CTHR_RWLOCK_COUNT_MASK) == 1 && (before & (CTHR_RWLOCK_DRAIN_WAIT | CTHR_RWLOCK_HANDOVER)) != 0) {
            cthr_rwlock_last_reader_left(lock);
        }
    }
    return true;
}

// Takes the write hold of a free, unbiased lock: one compare-exchange from 0 to WRITER|BLOCK|id. Returns false
// (nothing changed) otherwise: the caller then calls `cthr_rwlock_wrlock` (or a try/timed variant).
static inline bool cthr_rwlock_fast_wrlock(cthr_rwlock_t *_Nonnull lock) {
    if (cthr_atomic_u32_load(&lock->slow, CTHR_RELAXED) != 0) return false;
    uint64_t expected = 0;
    uint64_t mine = CTHR_RWLOCK_WRITER | CTHR_RWLOCK_BLOCK | ((uint64_t)cthr_lock_self() << CTHR_RWLOCK_OWNER_SHIFT);
    return cthr_atomic_u64_compare_exchange_strong(&lock->state, &expected, mine, CTHR_ACQUIRE, CTHR_RELAXED);
}

// Releases the write hold when nobody sleeps and no bias is to be restored: one compare-exchange back to 0.
// Returns false (nothing changed) otherwise, or when the caller does not hold the write side.
static inline bool cthr_rwlock_fast_wrunlock(cthr_rwlock_t *_Nonnull lock) {
    uint64_t mine = CTHR_RWLOCK_WRITER | CTHR_RWLOCK_BLOCK | ((uint64_t)cthr_lock_self() << CTHR_RWLOCK_OWNER_SHIFT);
    return cthr_atomic_u64_compare_exchange_strong(&lock->state, &mine, 0, CTHR_RELEASE, CTHR_RELAXED);
}

// Releases the caller's hold, read or write, on the inlined paths; false when the slow path must decide.
static inline bool cthr_rwlock_fast_unlock(cthr_rwlock_t *_Nonnull lock) {
    return cthr_rwlock_fast_rdunlock(lock) || cthr_rwlock_fast_wrunlock(lock);
}

// Takes a shared (read) hold, nested if the caller already reads it. Returns 0, EINVAL, EAGAIN (too many
// readers or nesting levels) or EDEADLK (the caller holds the write side).
int cthr_rwlock_rdlock(cthr_rwlock_t *_Nullable lock);

// Takes the exclusive (write) hold. Returns 0, EINVAL or EDEADLK (caller already holds it, for writing or reading).
int cthr_rwlock_wrlock(cthr_rwlock_t *_Nullable lock);

// Read hold if available now. Returns 0, EBUSY, EAGAIN, EDEADLK or EINVAL.
int cthr_rwlock_tryrdlock(cthr_rwlock_t *_Nullable lock);

// Write hold if available now. Returns 0, EBUSY, EDEADLK (caller holds it, for reading or writing) or EINVAL.
int cthr_rwlock_trywrlock(cthr_rwlock_t *_Nullable lock);

// Read hold, waiting until `deadline_ns` on CLOCK_MONOTONIC at most (UINT64_MAX = forever; a past deadline still
// takes an available hold). Returns 0, ETIMEDOUT, EAGAIN, EDEADLK or EINVAL.
int cthr_rwlock_timedrdlock(cthr_rwlock_t *_Nullable lock, uint64_t deadline_ns);

// Write hold, waiting until `deadline_ns` on CLOCK_MONOTONIC at most (UINT64_MAX = forever; a past deadline still
// takes a free lock). Returns 0, ETIMEDOUT, EDEADLK (caller holds it, for writing or reading) or EINVAL.
int cthr_rwlock_timedwrlock(cthr_rwlock_t *_Nullable lock, uint64_t deadline_ns);

// The first half of `cthr_rwlock_timedrdlock`, for callers that record a wait only when the thread is about to
// sleep: as it, but returns EBUSY (nothing held) where it would sleep. Then call `cthr_rwlock_rdlock_sleep`.
int cthr_rwlock_spinrdlock(cthr_rwlock_t *_Nullable lock, uint64_t deadline_ns);

// The second half: `cthr_rwlock_timedrdlock` without its spin (one attempt, then the sleep).
int cthr_rwlock_rdlock_sleep(cthr_rwlock_t *_Nullable lock, uint64_t deadline_ns);

// The first half of `cthr_rwlock_timedwrlock`: as it, but returns where it would sleep: EBUSY when waiting for
// another writer's claim (nothing held; call `cthr_rwlock_wrlock_sleep` next), EINPROGRESS when waiting for readers
// to leave (the caller holds the claim: new writers queue, new readers may wait; call `cthr_rwlock_wrlock_drain`
// next, which alone releases it on a timeout).
int cthr_rwlock_spinwrlock(cthr_rwlock_t *_Nullable lock, uint64_t deadline_ns);

// The second half after EBUSY: `cthr_rwlock_timedwrlock` without its spins (attempts, then the sleeps).
int cthr_rwlock_wrlock_sleep(cthr_rwlock_t *_Nullable lock, uint64_t deadline_ns);

// The second half after EINPROGRESS from `cthr_rwlock_spinwrlock`: waits, sleeping at once, until the readers left,
// until `deadline_ns` at most. Returns 0 (the write hold is the caller's), ETIMEDOUT (the claim is released), EPERM
// (the caller holds no claim; nothing changes) or EINVAL.
int cthr_rwlock_wrlock_drain(cthr_rwlock_t *_Nullable lock, uint64_t deadline_ns);

// Releases the caller's hold: its write hold, else one of its read holds. Returns 0, EINVAL (NULL) or EPERM (the
// caller holds neither; nothing changes).
int cthr_rwlock_unlock(cthr_rwlock_t *_Nullable lock);

// Releases one of the caller's read holds. Returns 0, EINVAL (NULL) or EPERM (the caller holds no read hold on it;
// nothing changes).
int cthr_rwlock_rdunlock(cthr_rwlock_t *_Nullable lock);

// How many read holds the calling thread has on `lock` (as tracked; 0 for NULL).
int cthr_rwlock_read_holds(const cthr_rwlock_t *_Nullable lock);

// The id of the thread claiming or holding the write side, 0 when none or NULL (relaxed load: a snapshot).
uint32_t cthr_rwlock_writer(const cthr_rwlock_t *_Nullable lock);

// Whether the calling thread holds the write side (false for NULL).
bool cthr_rwlock_holds_write(const cthr_rwlock_t *_Nullable lock);

// Sets (`on`) or clears `slow`, which sends every inlined path to the slow ones (for statistics). Returns 0 or
// EINVAL (NULL).
int cthr_rwlock_set_slow(cthr_rwlock_t *_Nullable lock, bool on);

// The lock word, 0 for NULL (relaxed load: a snapshot for tests).
uint64_t cthr_rwlock_load(const cthr_rwlock_t *_Nullable lock);

// How many stripes the lock has, 0 for NULL.
uint32_t cthr_rwlock_stripe_count(const cthr_rwlock_t *_Nullable lock);

#ifdef __cplusplus
}
#endif
#endif // CTHREADING_RWLOCK_H
