/* SPDX-License-Identifier: MIT */
/* SPDX-FileCopyrightText: 2026 The Threading authors */

/*
 * The futex condition: include/cthr_lock.h and Sources/CThreading/lock.c (cthr_lock_cond_t), as
 * Sources/Threading/Conditions/ConditionVariable.swift and Monitor.swift use it.
 *
 *   wait (ConditionVariable.wait, the predicate loop around it)
 *     lock; while !flag {
 *       seq = sequence                          cthr_lock_cond_begin, under the lock
 *       unlock
 *       spin: look at sequence a few times      cthr_lock_cond_spin (pauses, then sched_yields); a bounded number
 *             (moved: the wait is over)         of looks, modelled as looking any number of times up to SPINS
 *       else:
 *         fetch_add sleepers + 1                cthr_lock_cond_wait: register (seq_cst read-modify-write)
 *         while sequence == seq:                a seq_cst load, then
 *           futex wait while sequence == seq    the kernel compares and sleeps in one step
 *         fetch_sub sleepers - 1
 *       lock }
 *     unlock
 *   signal / broadcast (cthr_lock_cond_notify)
 *     fetch_add sequence + 1                    seq_cst read-modify-write
 *     if sleepers != 0: futex wake 1 / all      (seq_cst load)
 *
 * Memory: the protocol's writes are read-modify-writes (locked instructions on x86: they drain the store buffer and
 * act as full fences) and its loads are sequentially consistent, so the model is sequentially consistent, except in
 * the mutant below, which turns the signaller's increment into a plain store that waits in a store buffer.
 *
 * Scenario: NWAITERS threads wait for `flag`; one thread sets it under the lock, then (after the unlock, as
 * `Monitor` does, or with -DSIGNAL_UNDER_LOCK before it) signals (NWAITERS = 1) or broadcasts.
 *
 * Properties: no lost wake-up (every waiter returns: no invalid end state; LTL `progress` under weak fairness);
 * at the end nobody is counted as a sleeper.
 *
 * Variants (-D):
 *   SIGNAL_UNDER_LOCK       signal before releasing the lock (ConditionVariable's users may do either)
 *   MUTANT_CHECK_FIRST      the signaller reads `sleepers` before it moves the sequence: must fail (a waiter
 *                           registers and sleeps between the two, and nobody wakes it)
 *   MUTANT_PLAIN_INCREMENT  the sequence increment is a plain store (store buffer) followed by the load of
 *                           `sleepers`: must fail (TSO lets the load pass the store, Dekker's pairing breaks)
 *   MUTANT_NO_REGISTER      the waiter sleeps without registering: must fail (the signal sees no sleeper)
 */

#ifndef NWAITERS
#define NWAITERS 1
#endif
#ifndef SPINS
#define SPINS 2
#endif

bit locked = 0;
bit flag = 0;
byte sequence = 0;
byte sleepers = 0;
bit asleep[NWAITERS];
byte done = 0;
#ifdef MUTANT_PLAIN_INCREMENT
bit buffered = 0;  /* the signaller's store of sequence + 1 sits in its store buffer */
#endif

inline lock() {
    atomic { !locked -> locked = 1 }
}

inline unlock() {
    locked = 0
}

/* FUTEX_WAKE: one sleeper (any), or every sleeper */
inline futex_wake(all) {
    atomic {
        if
        :: all -> i = 0;
            do
            :: i < NWAITERS -> asleep[i] = 0; i++
            :: else -> break
            od
        :: else ->
            if
            :: asleep[0] -> asleep[0] = 0
#if NWAITERS >= 2
            :: asleep[1] -> asleep[1] = 0
#endif
#if NWAITERS >= 3
            :: asleep[2] -> asleep[2] = 0
#endif
            :: else
            fi
        fi
    }
}

proctype Waiter(byte me) {
    byte seq;
    byte looks;
    lock();
    do
    :: flag -> break
    :: !flag ->
        seq = sequence;
        unlock();
        /* cthr_lock_cond_spin: looks a bounded number of times (any number up to SPINS before giving up) */
        looks = 0;
        do
        :: sequence != seq -> goto relock
        :: looks < SPINS -> looks++
        :: break
        od;
        /* cthr_lock_cond_wait */
#ifndef MUTANT_NO_REGISTER
        sleepers++;
#endif
        do
        :: sequence == seq ->
            atomic {
                if
                :: sequence == seq -> asleep[me] = 1
                :: else
                fi
            };
            !asleep[me];
            break
        :: else -> break
        od;
#ifndef MUTANT_NO_REGISTER
        sleepers--;
#endif
relock:
        lock()
    od;
    unlock();
    done++
}

proctype Signaller() {
    byte i;
    byte seen;
    lock();
    flag = 1;
#ifndef SIGNAL_UNDER_LOCK
    unlock();
#endif
#if defined(MUTANT_CHECK_FIRST)
    seen = sleepers;
    sequence++;
#elif defined(MUTANT_PLAIN_INCREMENT)
    buffered = 1;
    seen = sleepers;
#else
    sequence++;
    seen = sleepers;
#endif
    if
    :: seen != 0 -> futex_wake(NWAITERS > 1)
    :: else
    fi;
#ifdef SIGNAL_UNDER_LOCK
    unlock();
#endif
    done++
}

#ifdef MUTANT_PLAIN_INCREMENT
/* The store buffer drains on its own, eventually. */
active proctype Drain() {
end_drain:
    atomic { buffered -> sequence++; buffered = 0 }
}
#endif

init {
    byte i = 0;
    atomic {
        do
        :: i < NWAITERS -> run Waiter(i); i++
        :: else -> break
        od;
        run Signaller()
    };
    (done == NWAITERS + 1);
    assert(sleepers == 0)
}

ltl progress { <> (done == NWAITERS + 1) }
