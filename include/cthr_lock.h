// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

// A futex-based mutex whose word holds the owner's thread id, and a futex condition that works with any lock.
//
// It is the lock under Threading's `MutexLock`, `RecursiveLock`, `LockedValue` and the runtime's own locks. Its
// uncontended paths are `static inline` here so Swift inlines them: locking is a load and one compare-exchange,
// unlocking a load and one fetch-and-subtract of the owner's id (which leaves a HANDOFF set meanwhile in place), then
// a load of `waiters`. Owning the lock means the word holds your kernel thread id, so
// relocking and unlocking by a non-owner are detected for free. A lock held across fork() by the forking thread
// belongs to the child's first thread, whose id is new (as with pthread mutexes): see `cthr_lock_held_by_caller`.
// Word layout:
//   bits 0-21  owner thread id (0 = free; Linux thread ids stay below 2^22, the kernel's PID_MAX_LIMIT)
//   bit  29    REGISTERED: the owner took the lock as a registered waiter (woken, most likely, with WAKING set for
//              it, which it clears as it leaves the waiters right after its take): a newcomer may claim the
//              spinner's place meanwhile (see Who spins); set by the take, cleared by the owner's (slow) unlock
//   bit  30    SLOW: every fast path fails and the caller takes its slow path (statistics, other kinds); only
//              changed by the owner, since only the owner writes the owner field while it is held
//   bit  31    HANDOFF: a waiter that has waited too long (the heir) asks for the lock (see Fairness); set by the
//              heir while the lock is held, so the owner's unlock leaves the word reserved for it (owner 0, HANDOFF)
//
// Contention, the design. At most one thread spins and every other waiter sleeps on a word that moves only when
// somebody is woken; an owner change costs at most four read-modify-writes on the lock's cache line (the spinner's: its
// claim, the take, the release; a sleeper's: its registration, the take, its leave, the release; a thread that finds
// the lock held reads the word, it does not try a compare-exchange bound to fail), plus one when the release wakes a
// sleeper, and no system call while the spinner or a woken thread takes the lock; a release makes a futex wake only
// when sleepers are registered and nobody is awake to take the lock, and only a thread that sleeps makes a futex wait
// (Linux's mutex with its one optimistic spinner, Go's runtime lock, WebKit's `WTF::Lock`, which stop spinning once a
// thread sleeps). Who spins:
//   - a newcomer (a thread that finds the lock held) claims `spinner` if nobody spins (a compare-exchange of that
//     word from 0 to 1, with WAKING clear in `waiters`, or set but REGISTERED in the word) and spins for a while;
//     otherwise, and when its spin ends without the lock, it registers and sleeps. `spinner` is a word of its own
//     beside the lock word, so a free lock's word is 0 whether or not somebody spins: a running thread takes it
//     with the one compare-exchange of the fast path even while the spinner is preempted (barging, which keeps the
//     lock fast). The spinner clears `spinner` with a plain store once it holds the lock, or when it gives up.
//   - a woken thread (the unlock that woke it set WAKING in `waiters` for it) spins for a while with WAKING set,
//     then clears WAKING and sleeps again.
// So under heavy contention the lock moves between the owner, one spinner and the running threads that barge, and
// a woken thread replaces a sleeper in that set only when the spinner's place is free: a bounded set of threads
// fights for the line whatever the thread count.
//
// Fairness. Barging and the spinner can starve a sleeper. An unlock that finds `spinner` set still wakes a sleeper
// when no sleeper was woken for CTHR_LOCK_STARVATION_NS (`woken_at`), so sleepers take turns being awake. A registered
// waiter that has waited more than CTHR_LOCK_STARVATION_NS
// (1 ms) since it registered, and lost the race once more after a wake-up, becomes the heir if the lock has not
// been handed over in the last millisecond (`handoff_at`: at most one fair hand-off per lock per millisecond, as
// WebKit's ParkingLot and Rust's parking_lot time their fair unlocks): it sets HANDOFF in the held word (one heir at
// a time: whoever finds the bit clear). The owner's unlock then leaves the word reserved (owner 0, HANDOFF set),
// which no compare-exchange from 0 and no attempt takes except the heir's, and wakes the heir, which sleeps on the
// word itself (nobody else does). Its sleeps on the word last 1 ms at most before it looks again, so a HANDOFF lost
// to the membarrier mode's plain-store unlock costs latency, never a hang; a heir whose deadline passes withdraws
// the bit (or takes the lock, if it was handed over meanwhile). Starvation is bounded by about 1 ms plus one
// critical section per thread ahead of it; the hand-off passes the lock without freeing it, so the other waiters
// are not affected, and the heir's own unlock is an ordinary one.
//
// Sleeping. A waiter registers in `waiters` (a count) and sleeps on `sequence`, a futex word (the two are the halves of
// one 64-bit word, `sleepers`) that only a wake-up moves: registrations, departures and the WAKING bit change
// `waiters`, never `sequence`, so a futex wait returns at once only when a wake-up was issued between the look at the
// lock and the sleep. The top bit of `waiters`, WAKING, means "a woken thread is awake and will look at the lock
// again": an unlock that finds a nonzero count and WAKING clear in `waiters`, and then `spinner` clear, sets WAKING
// with a compare-exchange that requires the count still nonzero and adds one to `sequence` in the same step (the two
// share a word, `sleepers`), and, if it set it, wakes one sleeper. An unlock that finds no count, WAKING or a
// spinner does nothing more (no system call).
//
// The sleep step, for a registered thread: (1) a read-modify-write of `waiters` (the registration, count + 1, or the
// clear of WAKING after a wake-up), which reads `sequence` as `s` in the same step (one word); (2) the barrier B;
// (3) load the word and take the lock if free; (4) futex-wait on `sequence` while it still equals `s`. Once it holds
// the lock (or gives up on it at its deadline), (5) it leaves: count - 1 and WAKING cleared in one read-modify-write.
//
// Why no wake-up is lost. The unlock is a release S of the owner field and, after it, a load R of `waiters` and,
// when R is positive, a load Q of `spinner`. The
// sleeper needs: if its step (3) saw the lock held, R reads its step-(1) value or a later one. Two ways to get it:
//   - Default: S is a sequentially consistent read-modify-write, R and step (3) are sequentially consistent loads,
//     and B is a sequentially consistent fence: in the single total order either R comes after step (1) or step
//     (3) comes after S (Dekker's pairing; the read-modify-write is what glibc's and the standard library's
//     mutexes pay too). No system call, no cost outside the two threads.
//   - Membarrier mode (opt-in, `cthr_lock_use_membarrier`): S is a plain release store with only a compiler
//     barrier before R, and B is `membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED)`, which runs a full memory barrier
//     on every CPU currently running a thread of the process, so it acts as a fence placed somewhere in the
//     unlocker's instruction stream during the call (liburcu's urcu-memb argument, with the fence moved to the
//     side that is about to pay for a system call anyway). The unlock is cheaper; every sleeper interrupts every
//     CPU running the process, and the kernel serialises these calls on one host-wide lock, so the cost grows
//     with the core count and reaches other processes. Only for a process that has measured it.
// Either way, take a sleeper X whose step (3) saw the lock held, and the unlock S that frees it.
//   - If Q finds `spinner` set, the spinner answers: it takes the lock, or gives up and, registered, runs steps (1)
//     to (3) with its clear C of `spinner` between (1) and (2). Q read the value before C, so in the single total
//     order S < Q < C, and its step (3) sees the lock free or held by a later owner, whose unlock's R comes after
//     the spinner's step (1) and counts X and the spinner, and whose Q reads `spinner` as C left it or a later
//     claim's. (A spinner that gives up unregistered clears `spinner` and then looks at the lock again after its
//     own registration.) Sequentially consistent: C, Q, and in membarrier mode the sleeper's membarrier orders S.
//   - Otherwise R reads X's step-(1) value or a later one, so a nonzero count. If R finds WAKING clear, the unlock
//     sets it (or finds that another did) at a point P; else let P be R. Let W be the setting of WAKING that P
//     reads. W was made while the count was nonzero, so a registered thread existed then; W moved `sequence` in
//     the same step and its maker woke one sleeper, so some thread answers for W: the sleeper it woke, or every
//     registered thread that was awake then (one about to sleep read its `s` in its step (1), so before W: its
//     futex wait returns at once; one awake after a wake-up owes a look anyway). An answering thread
//     takes the lock and leaves clearing WAKING (step 5) before its own release, whose R comes after the leave and
//     counts X; or clears WAKING in a step (1) after P and looks at the lock in its step (3): by the pairing above,
//     with that thread in X's place, it sees the lock free (or held by a later owner, whose unlock comes after the
//     clear and finds WAKING clear and X counted).
// Every exit keeps this: a registered thread leaves the waiters with WAKING cleared in the same read-modify-write (the
// bit may have been set for it; one set for another woken thread costs nothing, that thread looks anyway). One that
// took the lock leaves at once, while it holds it: no owner carries a WAKING past its release. (For a while the leave
// came after the release, merged with its unlock's check; between the two, a spinner's unlock read the owner's stale
// WAKING as "somebody will look" while the leave counted on the spinner to look, and a sleeper slept on a free lock.
// `formal/lock.pml` shows it with three threads of two rounds.) A thread that times out leaves at once and wakes one
// sleeper if others remain, passing on a wake it may have consumed. Should a membarrier call fail after a successful
// registration, that sleeper sleeps 1 ms at most before looking again, so a wake-up the failure let slip costs latency,
// never a hang.
// `formal/lock.pml` checks the protocol (mutual exclusion, no lost wake-up) in both modes, with the spinner, deadlines
// and the hand-off.
//
#ifndef CTHREADING_LOCK_H
#define CTHREADING_LOCK_H

#include "cthr_atomic.h"
#include "cthr_nullability.h"
#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define CTHR_LOCK_OWNER_MASK 0x003fffffu
#define CTHR_LOCK_REGISTERED 0x20000000u
#define CTHR_LOCK_SLOW 0x40000000u
#define CTHR_LOCK_HANDOFF 0x80000000u
// How long a registered waiter waits before it asks for the lock to be handed to it.
#define CTHR_LOCK_STARVATION_NS 1000000u
// The least time between two hand-offs of one lock, in microseconds.
#define CTHR_LOCK_HANDOFF_INTERVAL_US 1000u
// In `waiters`: the count of registered waiters, and the WAKING bit (a woken thread will look at the lock again).
#define CTHR_LOCK_WAITER_MASK 0x7fffffffu
#define CTHR_LOCK_WAKING 0x80000000u

// A lock: initialise it with `cthr_lock_init`, or with all fields zero (a free lock). Must not move while in use.
typedef struct cthr_lock {
    cthr_atomic_u32_t word;        // owner id | SLOW | HANDOFF
    cthr_atomic_u32_t woken_at;    // when an unlock last woke a sleeper (microseconds, wrapping)
    // `waiters` and `sequence` in one word: the low half is `waiters`, the threads registered to sleep (count) |
    // WAKING; the high half is `sequence`, the futex sleepers wait on, moved by each wake-up and by nothing else.
    // One word, so a wake-up sets WAKING and moves the sequence in one read-modify-write, and a registration reads
    // the sequence its sleep compares in the read-modify-write that counts it.
    cthr_atomic_u64_t sleepers;
    cthr_atomic_u32_t handoff_at;  // when the lock was last handed to a heir (microseconds, wrapping)
    cthr_atomic_u32_t spinner;     // 1 while a newcomer spins for the lock (see Who spins), else 0
} cthr_lock_t;

// Nonzero when the process opted in to the membarrier unlock (see the header comment); read by the inline unlock.
extern cthr_atomic_i32_t cthr_lock_membarrier_mode;


// Opts the process in to the membarrier unlock: registers for expedited private membarriers and switches every
// lock's unlock to a plain store, their sleepers to `membarrier`. Only safe before any lock is used (at the start
// of main); setting THREADING_LOCK_MEMBARRIER=1 in the environment does the same before main. Returns 0, or the
// errno of the refused registration (ENOSYS, EINVAL, EPERM: the process stays in the default mode).
int cthr_lock_use_membarrier(void);

// Whether the process unlocks in membarrier mode (1) or in the default mode (0).
int cthr_lock_uses_membarrier(void);

// How many `membarrier` calls the locks of this process made (sleepers in membarrier mode); 0 in the default mode.
uint64_t cthr_lock_membarrier_calls(void);

// How many times the locks of this process were handed to a waiter that had waited too long (see Fairness).
uint64_t cthr_lock_handoffs(void);

// Called by an unlock after releasing, when its load of `waiters` found sleepers and WAKING clear: sets WAKING and,
// moving `sequence` in the same step and, unless another unlock set it first, wakes one sleeper.
void cthr_lock_wake_one(cthr_lock_t *_Nonnull lock);

// Whether a lock last handed over at `last_us` may be handed over again at `now_us` (microseconds on the monotonic
// clock, wrapping in 32 bits): at least CTHR_LOCK_HANDOFF_INTERVAL_US (1 ms) has passed. See Fairness.
static inline bool cthr_lock_handoff_due(uint32_t now_us, uint32_t last_us) {
    return now_us - last_us >= CTHR_LOCK_HANDOFF_INTERVAL_US;
}

// Called by an unlock whose release found HANDOFF in the word: wakes the heir sleeping on the word.
void cthr_lock_wake_heir(cthr_lock_t *_Nonnull lock);

// Called by an unlock after releasing, when its load of `waiters` found sleepers and WAKING clear: with `spinner`
// set, wakes a sleeper only if nobody was woken for CTHR_LOCK_STARVATION_NS (the spinner will look, but sleepers
// must not starve behind it); otherwise (or in a forked child, whose spinner may be a thread of the parent)
// `cthr_lock_wake_one`.
void cthr_lock_released_to_sleepers(cthr_lock_t *_Nonnull lock);

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

// Counts a compare-exchange of a fast lock that failed (the word was taken between its load and the exchange), when
// the process counts (`cthr_lock_set_counting`); called by the fast paths only on that failure.
void cthr_lock_count_fast_miss(void);

// Takes a free lock with a load and one compare-exchange (acquire), whether or not a thread spins for it. Returns
// false when the lock is held, reserved for a heir or its SLOW bit is set: the caller then calls
// `cthr_lock_lock_slow` (or `cthr_lock_trylock`). The load first: a thread that finds the lock held reads the line
// instead of taking it exclusive from the owner with a compare-exchange bound to fail, so a contended acquisition
// starts with no read-modify-write (a free line last written on another core costs a read and an upgrade).
static inline bool cthr_lock_fast_lock(cthr_lock_t *_Nonnull lock) {
    uint32_t expected = cthr_atomic_u32_load(&lock->word, CTHR_RELAXED);
    if (expected != 0) return false;
    if (cthr_atomic_u32_compare_exchange_strong(&lock->word, &expected, cthr_lock_self(), CTHR_ACQUIRE,
                                                CTHR_RELAXED)) {
        return true;
    }
    cthr_lock_count_fast_miss();
    return false;
}

// Releases a lock the caller holds (without the SLOW and REGISTERED bits): a load that checks the owner field, then one
// fetch-and-subtract of the caller's id (a release store in membarrier mode, for a word without flags), which keeps
// a HANDOFF set meanwhile; then, when the word carried HANDOFF, wakes the heir; otherwise a load of `sleepers` and,
// only when sleepers are registered and no woken thread is awake (WAKING clear), `cthr_lock_released_to_sleepers`
// (a spinner will look; else a wake-up). Returns false without changing anything when the caller does not own the
// word or its SLOW or REGISTERED bit is set: the caller then calls `cthr_lock_unlock_slow`.
static inline bool cthr_lock_fast_unlock(cthr_lock_t *_Nonnull lock) {
    uint32_t self = cthr_lock_self();
    uint32_t word = cthr_atomic_u32_load(&lock->word, CTHR_RELAXED);
    if (__builtin_expect(cthr_atomic_i32_load(&cthr_lock_membarrier_mode, CTHR_RELAXED) != 0, 0)) {
        if (word != self) return false;
        cthr_atomic_u32_store(&lock->word, 0, CTHR_RELEASE);
        cthr_atomic_signal_fence(CTHR_SEQ_CST);  // the sleeper's membarrier orders the store before the load
    } else {
        // Only the owner changes the owner field of a held word, so this load is exact for the caller's own holds.
        if ((word & (CTHR_LOCK_OWNER_MASK | CTHR_LOCK_REGISTERED | CTHR_LOCK_SLOW)) != self) return false;
        word = cthr_atomic_u32_fetch_sub(&lock->word, self, CTHR_SEQ_CST);
        if (__builtin_expect((word & CTHR_LOCK_HANDOFF) != 0, 0)) {
            cthr_lock_wake_heir(lock);
            return true;
        }
    }
    // Positive: waiters registered and WAKING clear (WAKING is the sign bit of the low half, `waiters`).
    if ((int32_t)(uint32_t)cthr_atomic_u64_load(&lock->sleepers, CTHR_SEQ_CST) > 0) cthr_lock_released_to_sleepers(lock);
    return true;
}

// Takes the lock if it is free (whatever its SLOW bit). Returns 0, EBUSY (another thread holds it), EDEADLK (the
// caller holds it) or EINVAL (NULL).
int cthr_lock_trylock(cthr_lock_t *_Nullable lock);

// Takes the lock, spinning for it if nobody else spins and then sleeping on the futex, until `deadline_ns` on
// CLOCK_MONOTONIC at most (UINT64_MAX = forever). A deadline in the past still takes a free lock. Returns 0,
// ETIMEDOUT, EDEADLK (the caller already holds it; nothing changes) or EINVAL (NULL).
int cthr_lock_lock_slow(cthr_lock_t *_Nullable lock, uint64_t deadline_ns);

// The first half of `cthr_lock_lock_slow`, for callers that record a wait only when the thread is about to sleep:
// takes the lock if it is free, or spins for it if nobody else spins, until `deadline_ns` at most. Returns 0,
// EDEADLK, EINVAL (NULL) or EBUSY (not taken, and this thread holds no part of the lock's state: call
// `cthr_lock_lock_sleep` next).
int cthr_lock_lock_spin(cthr_lock_t *_Nullable lock, uint64_t deadline_ns);

// The second half of `cthr_lock_lock_slow`: registers as a waiter and sleeps until the lock is taken or
// `deadline_ns` passes (a woken thread spins before it sleeps again). Returns 0, ETIMEDOUT, EDEADLK or EINVAL.
int cthr_lock_lock_sleep(cthr_lock_t *_Nullable lock, uint64_t deadline_ns);

// Releases the lock held by the caller, keeping its SLOW bit and waking one sleeper if there is one and nobody
// spins; when a heir asked for it (HANDOFF), hands the lock to the heir instead (the word stays reserved for it)
// and wakes it.
// Returns 0, EPERM (the caller does not hold it; nothing changes) or EINVAL (NULL).
int cthr_lock_unlock_slow(cthr_lock_t *_Nullable lock);

// The id of the thread holding the lock, 0 when free or for NULL (relaxed load: a snapshot).
uint32_t cthr_lock_owner(const cthr_lock_t *_Nullable lock);

// Whether the calling thread holds the lock (false for NULL): the word's owner is the caller's id or, in the first
// thread of a forked child, the id the forking thread had in the parent (a lock held across fork() belongs to the
// child's thread, as with pthread mutexes). Relaxed load: exact for the caller's own holds.
bool cthr_lock_held_by_caller(const cthr_lock_t *_Nullable lock);

// The whole lock word, 0 for NULL (relaxed load: a snapshot for diagnostics and tests).
uint32_t cthr_lock_load(const cthr_lock_t *_Nullable lock);

// The number of threads registered to sleep on the lock (asleep, or woken and not yet left: a thread that takes the
// lock leaves at once), without the WAKING bit; 0 for NULL (a relaxed load: a snapshot).
uint32_t cthr_lock_waiter_count(const cthr_lock_t *_Nullable lock);

// Sets (`on` true) or clears the SLOW bit, which sends every lock and unlock to the slow paths. The caller must
// hold the lock (only the owner writes a held word). Returns 0, EINVAL (NULL) or EPERM (the caller does not
// hold it; nothing changes).
int cthr_lock_set_slow(cthr_lock_t *_Nullable lock, bool on);

// Contention counters of the calling thread, kept only while the process counts (`cthr_lock_set_counting`): what
// the thread's own lock and unlock calls did on contended paths, summed over every `cthr_lock_t`. The fast paths
// never count (an uncontended lock costs the same with counting on or off), except a fast compare-exchange that
// failed (`cthr_lock_count_fast_miss`); an acquisition that took the slow path counts its release as one
// read-modify-write.
typedef struct cthr_lock_counters {
    uint64_t contended;      // acquisitions that took the slow path (`cthr_lock_lock_slow` calls)
    uint64_t rmw;            // atomic read-modify-writes on the lock's words for them, failed compare-exchanges included
    uint64_t futex_waits;    // futex waits
    uint64_t futex_eagain;   // futex waits that returned at once (EAGAIN: the value had already changed)
    uint64_t futex_wakes;    // futex wake calls
    uint64_t spin_ns;        // CPU time spent spinning for a lock, in nanoseconds (time descheduled in a yield excluded)
    uint64_t handoffs;       // hand-offs this thread received as a heir
} cthr_lock_counters_t;

// Turns the process's counting on or off (off at start; THREADING_LOCK_COUNTERS=1 in the environment turns it on
// before main). While off, the slow paths pay one relaxed load of a process-wide flag and nothing else.
void cthr_lock_set_counting(bool on);

// Whether the process counts (see `cthr_lock_set_counting`).
bool cthr_lock_counting(void);

// Copies the calling thread's counters into *out (all zero when the thread never counted). No-op for NULL.
void cthr_lock_thread_counters(cthr_lock_counters_t *_Nullable out);

// Sets the calling thread's counters back to zero.
void cthr_lock_reset_thread_counters(void);

// A condition for use with any lock: a futex sequence number, which every signal and broadcast moves, and the count
// of threads asleep on it. Zero-initialised is valid. A wait: while holding the lock, read the sequence
// (`cthr_lock_cond_begin`); release the lock; `cthr_lock_cond_spin` (a signal that comes within a few microseconds
// ends the wait there, with no system call on either side), and if it returns false `cthr_lock_cond_wait` (register
// as a sleeper and sleep); retake the lock and test the predicate again. A signal moves the sequence and makes the
// wake-up system call only when a sleeper is registered.
typedef struct cthr_lock_cond {
    cthr_atomic_u32_t sequence;
    cthr_atomic_u32_t sleepers;
} cthr_lock_cond_t;

// Initializes *cond. Returns 0 or EINVAL (NULL).
int cthr_lock_cond_init(cthr_lock_cond_t *_Nullable cond);

// First step of a wait, called while holding the lock the condition is used with: returns the sequence number to
// pass to `cthr_lock_cond_spin` and `cthr_lock_cond_wait` (every signal or broadcast from now on moves it).
// Returns 0 for a NULL cond.
uint32_t cthr_lock_cond_begin(const cthr_lock_cond_t *_Nullable cond);

// Watches the sequence number for a short while (`cthr_futex_backoff`: doubling pauses for a few microseconds, then a
// few sched_yields, which stop once `deadline_ns` (CLOCK_MONOTONIC; UINT64_MAX = none) has passed). Returns true when it
// differs from `sequence` (a signal or broadcast came since `cthr_lock_cond_begin`: the wait is over), false when it
// did not move (call `cthr_lock_cond_wait`) or for NULL.
bool cthr_lock_cond_spin(const cthr_lock_cond_t *_Nullable cond, uint32_t sequence, uint64_t deadline_ns);

// Sleeps until the sequence number differs from `sequence` (a signal or broadcast since `cthr_lock_cond_begin`)
// or until `deadline_ns` (CLOCK_MONOTONIC; UINT64_MAX = forever), registered as a sleeper meanwhile. May return 0
// spuriously. Returns 0 (woken), ETIMEDOUT or EINVAL (NULL).
int cthr_lock_cond_wait(cthr_lock_cond_t *_Nullable cond, uint32_t sequence, uint64_t deadline_ns);

// Wakes at least one waiter if there is one (no system call when nobody sleeps). Returns 0 or EINVAL (NULL).
int cthr_lock_cond_signal(cthr_lock_cond_t *_Nullable cond);

// Wakes every waiter (no system call when nobody sleeps). Returns 0 or EINVAL (NULL).
int cthr_lock_cond_broadcast(cthr_lock_cond_t *_Nullable cond);

#ifdef __cplusplus
}
#endif
#endif // CTHREADING_LOCK_H
