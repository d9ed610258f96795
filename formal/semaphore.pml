/* SPDX-License-Identifier: MIT */
/* SPDX-FileCopyrightText: 2026 The Threading authors */

/*
 * The semaphore: Sources/Threading/Conditions/Semaphore.swift over Sources/CThreading/sem.c.
 *
 * Threading's semaphore hand-writes no protocol of its own: Semaphore.wait() calls cthr_sem_trywait (sem_trywait)
 * and then cthr_sem_wait (sem_wait, restarted after EINTR) inside Engine.blocking; signal() calls cthr_sem_post
 * (sem_post). sem.c is a thin wrapper over POSIX sem_t. This model therefore checks the wait/post protocol the
 * code relies on: glibc's sem_t on 64-bit Linux (nptl/sem_waitcommon.c, sem_post.c), one 64-bit word holding the
 * value and the count of waiters, a futex on the value:
 *   trywait / __new_sem_wait_fast  load; while value > 0: CAS value - 1 (success: return).
 *   __new_sem_wait_slow            fetch_add nwaiters + 1; loop: value == 0: futex wait while the value is 0,
 *                                  then reload; else CAS (value - 1, nwaiters - 1) together (success: return).
 *   __new_sem_post                 CAS value + 1; if nwaiters > 0 (in the word the CAS replaced): futex wake 1.
 * Timed waits (sem_clockwait) and EINTR are not modelled.
 *
 * Scenario: NWAITERS threads call Semaphore.wait() and as many posts come from NPOSTERS threads (NWAITERS posts in
 * all) on a semaphore created with value 0.
 *
 * Properties: no token is taken twice (assertion: successful waits never exceed the posts); no lost wake-up (every
 * waiter returns: no invalid end state, LTL `progress` under weak fairness).
 *
 * Variants (-D):
 *   MUTANT_WAKE_ON_ZERO   post wakes a sleeper only when the value it replaced was 0 (ignoring the waiter count):
 *                         must fail (two sleepers, two posts, one wake: a waiter sleeps forever with value 1)
 */

#ifndef NWAITERS
#define NWAITERS 2
#endif

byte value = 0;
byte nwaiters = 0;
byte posted = 0;
byte taken = 0;
bit asleep[NWAITERS];
byte done = 0;

inline take() {
    atomic { taken++; assert(taken <= posted) }
}

/* FUTEX_WAKE of one sleeper on the value */
inline futex_wake_one() {
    atomic {
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
    }
}

proctype Waiter(byte me) {
    bit ok;
    /* Semaphore.wait(): cthr_sem_trywait -> sem_trywait (__new_sem_wait_fast, definitive) */
    atomic {
        if
        :: value > 0 -> value--; ok = 1
        :: else -> ok = 0
        fi
    };
    if
    :: ok -> take(); goto out
    :: else
    fi;
    /* cthr_sem_wait -> sem_wait: __new_sem_wait_fast (one try), then __new_sem_wait_slow */
    atomic {
        if
        :: value > 0 -> value--; ok = 1
        :: else -> ok = 0
        fi
    };
    if
    :: ok -> take(); goto out
    :: else
    fi;
    nwaiters++;
    do
    :: value == 0 ->
        /* futex wait while the value is 0 */
        atomic {
            if
            :: value == 0 -> asleep[me] = 1
            :: else
            fi
        };
        !asleep[me]
    :: value > 0 ->
        /* CAS: take a token and stop being a waiter in one step (fails if the value changed meanwhile) */
        atomic {
            if
            :: value > 0 -> value--; nwaiters--; ok = 1
            :: else -> ok = 0
            fi
        };
        if
        :: ok -> take(); break
        :: else
        fi
    od;
out:
    done++
}

proctype Poster(byte posts) {
    byte n = 0;
    byte old_value, old_waiters;
    do
    :: n < posts ->
        /* sem_post: CAS value + 1 */
        atomic { old_value = value; old_waiters = nwaiters; value++; posted++ };
#ifdef MUTANT_WAKE_ON_ZERO
        if
        :: old_value == 0 -> futex_wake_one()
        :: else
        fi;
#else
        if
        :: old_waiters > 0 -> futex_wake_one()
        :: else
        fi;
#endif
        n++
    :: else -> break
    od;
    done++
}

init {
    byte i = 0;
    atomic {
        do
        :: i < NWAITERS -> run Waiter(i); i++
        :: else -> break
        od;
        /* NWAITERS posts from two threads */
        run Poster(NWAITERS / 2);
        run Poster(NWAITERS - NWAITERS / 2)
    };
    (done == NWAITERS + 2);
    assert(taken == NWAITERS && value == 0 && nwaiters == 0)
}

ltl progress { <> (done == NWAITERS + 2) }
