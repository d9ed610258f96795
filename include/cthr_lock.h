// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

// A futex-based mutex whose word holds the owner's thread id, and a futex condition that works with any lock.
//
// The lock is the engine of Threading's `MutexLock`. Its uncontended paths are `static inline` here so Swift
// inlines them: locking is one compare-exchange, unlocking is a plain release store followed by a plain load of
// the waiter count (no atomic read-modify-write). That store-then-load is made safe without a fence on the
// unlocking side by an asymmetric barrier: a thread about to sleep registers in `waiters` and then issues
// `membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED)`, which makes every running thread of the process execute a full
// barrier, so either the unlocker sees the waiter or the waiter sees the lock free (liburcu's urcu-memb uses the
// same system call for its readers). Where membarrier is unavailable (old kernel, seccomp), a process-wide flag
// set at start-up puts a full fence in the unlock instead.
//// Sleepers wait on the `waiters` field, whose WAKING bit throttles wake-ups: an unlock that finds registered
// waiters sets WAKING and issues a futex wake only if the bit was clear, so while a woken thread has not yet run,
// further unlocks make no system call (without it, every unlock under contention paid for a futex wake). A
// waiter clears WAKING after each wake-up and before each sleep, re-checks the lock, and then sleeps only if
// `waiters` still holds the value it saw, so a wake issued in between makes the futex wait return at once
// instead of being lost.
//

// Owning the lock means the word holds your kernel thread id, so relocking and unlocking by a non-owner are
// detected for free. Word layout:
//   bits 0-29  owner thread id (0 = free; Linux thread ids stay below 2^22)
//   bit  30    SLOW: every fast path fails and the caller takes its slow path (statistics, other kinds); only
//              changed by the owner (or at init), since only the owner writes the word while it is held
#ifndef CTHREADING_LOCK_H
#define CTHREADING_LOCK_H

#include "cthr_nullability.h"
#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define CTHR_LOCK_OWNER_MASK 0x3fffffffu
#define CTHR_LOCK_SLOW 0x40000000u
// In `waiters`: the count of registered waiters, and the WAKING bit (a wake is on its way to a sleeper).
#define CTHR_LOCK_WAITER_MASK 0x7fffffffu
#define CTHR_LOCK_WAKING 0x80000000u

// A lock: zero-initialised is a valid free lock. Must not move while in use.
typedef struct cthr_lock {
    uint32_t word;     // owner id | SLOW
    uint32_t waiters;  // threads registered to sleep (count) | WAKING; the futex sleepers wait on
} cthr_lock_t;

// Nonzero when membarrier is unavailable and unlocking needs a full fence (set once, before main).
extern int cthr_lock_unlock_needs_fence;

// Switches every lock of the process to fenced unlocks, as when membarrier is unavailable. Only safe before any
// lock is in use (tests, or a process that must not send membarrier interrupts). Returns 0.
int cthr_lock_use_fenced_unlock(void);

// Called by `cthr_lock_fast_unlock` after releasing when threads may sleep on the lock: wakes one unless a wake
// is already on its way.
void cthr_lock_wake_one(cthr_lock_t *_Nonnull lock);

// The calling thread's kernel id as cached by `cthr_lock_self` (0 until the first call on this thread).
extern __thread uint32_t cthr_lock_cached_tid __attribute__((tls_model("initial-exec")));

// Looks up the calling thread's id with gettid, caches it in `cthr_lock_cached_tid` and returns it.
uint32_t cthr_lock_self_slow(void);

// The calling thread's kernel thread id (never 0), cached per thread.
static inline uint32_t cthr_lock_self(void) {
    uint32_t tid = cthr_lock_cached_tid;
    return tid != 0 ? tid : cthr_lock_self_slow();
}

// Initializes *lock as free. Returns 0 or EINVAL (NULL).
int cthr_lock_init(cthr_lock_t *_Nullable lock);

// Takes a free lock with one compare-exchange (acquire). Returns false when the lock is held or its SLOW bit is
// set: the caller then calls `cthr_lock_lock_slow` (or `cthr_lock_trylock`).
static inline bool cthr_lock_fast_lock(cthr_lock_t *_Nonnull lock) {
    uint32_t expected = 0;
    return __atomic_compare_exchange_n(&lock->word, &expected, cthr_lock_self(), false, __ATOMIC_ACQUIRE,
                                       __ATOMIC_RELAXED);
}

// Releases a lock the caller holds (without the SLOW bit): one release store, then a load of the waiter count,
// waking a sleeper when there is one. Returns false without changing anything when the word is not exactly the
// caller's id (not the owner, or SLOW set): the caller then calls `cthr_lock_unlock_slow`.
static inline bool cthr_lock_fast_unlock(cthr_lock_t *_Nonnull lock) {
    if (__atomic_load_n(&lock->word, __ATOMIC_RELAXED) != cthr_lock_self()) return false;
    __atomic_store_n(&lock->word, 0, __ATOMIC_RELEASE);
    if (cthr_lock_unlock_needs_fence) {
        __atomic_thread_fence(__ATOMIC_SEQ_CST);
    } else {
        __atomic_signal_fence(__ATOMIC_SEQ_CST);  // the sleeper's membarrier orders the store before the load
    }
    if ((__atomic_load_n(&lock->waiters, __ATOMIC_RELAXED) & CTHR_LOCK_WAITER_MASK) != 0) cthr_lock_wake_one(lock);
    return true;
}

// Takes the lock if it is free (whatever its SLOW bit). Returns 0, EBUSY (another thread holds it), EDEADLK (the
// caller holds it) or EINVAL (NULL).
int cthr_lock_trylock(cthr_lock_t *_Nullable lock);

// Takes the lock, spinning briefly and then sleeping on the futex, until `deadline_ns` on CLOCK_MONOTONIC at most
// (UINT64_MAX = forever). A deadline in the past still takes a free lock. Returns 0, ETIMEDOUT, EDEADLK (the
// caller already holds it; nothing changes) or EINVAL (NULL).
int cthr_lock_lock_slow(cthr_lock_t *_Nullable lock, uint64_t deadline_ns);

// Releases the lock held by the caller, keeping its SLOW bit and waking one sleeper if there is one.
// Returns 0, EPERM (the caller does not hold it; nothing changes) or EINVAL (NULL).
int cthr_lock_unlock_slow(cthr_lock_t *_Nullable lock);

// The id of the thread holding the lock, 0 when free (relaxed load: a snapshot).
uint32_t cthr_lock_owner(const cthr_lock_t *_Nullable lock);

// The whole lock word (relaxed load: a snapshot for diagnostics and tests).
uint32_t cthr_lock_load(const cthr_lock_t *_Nullable lock);

// The number of threads registered to sleep on the lock, without the WAKING bit (relaxed load: a snapshot).
uint32_t cthr_lock_waiter_count(const cthr_lock_t *_Nullable lock);

// Sets (`on` true) or clears the SLOW bit, which sends every lock and unlock to the slow paths. The caller must
// hold the lock (only the owner writes a held word). Returns 0, EINVAL (NULL) or EPERM (the caller does not hold
// it; nothing changes).
int cthr_lock_set_slow(cthr_lock_t *_Nullable lock, bool on);

// A condition for use with any lock: a futex sequence number and a waiter count. Zero-initialised is valid.
typedef struct cthr_lock_cond {
    uint32_t sequence;
    uint32_t waiters;
} cthr_lock_cond_t;

// Initializes *cond. Returns 0 or EINVAL (NULL).
int cthr_lock_cond_init(cthr_lock_cond_t *_Nullable cond);

// First step of a wait, called while holding the lock the condition is used with: registers a waiter and returns
// the sequence number to pass to `cthr_lock_cond_wait`. Then release the lock, wait, call `cthr_lock_cond_end`
// and retake the lock. Returns 0 for a NULL cond.
uint32_t cthr_lock_cond_begin(cthr_lock_cond_t *_Nullable cond);

// Sleeps until the sequence number differs from `sequence` (a signal or broadcast since `cthr_lock_cond_begin`)
// or until `deadline_ns` (CLOCK_MONOTONIC; UINT64_MAX = forever). May return 0 spuriously.
// Returns 0 (woken), ETIMEDOUT or EINVAL (NULL).
int cthr_lock_cond_wait(cthr_lock_cond_t *_Nullable cond, uint32_t sequence, uint64_t deadline_ns);

// Last step of a wait: unregisters the waiter. Returns 0 or EINVAL (NULL).
int cthr_lock_cond_end(cthr_lock_cond_t *_Nullable cond);

// Wakes at least one waiter if there is one (no system call when nobody waits). Returns 0 or EINVAL (NULL).
int cthr_lock_cond_signal(cthr_lock_cond_t *_Nullable cond);

// Wakes every waiter (no system call when nobody waits). Returns 0 or EINVAL (NULL).
int cthr_lock_cond_broadcast(cthr_lock_cond_t *_Nullable cond);

#ifdef __cplusplus
}
#endif
#endif // CTHREADING_LOCK_H
