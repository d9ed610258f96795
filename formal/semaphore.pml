/* SPDX-License-Identifier: MIT */
/* SPDX-FileCopyrightText: 2026 The Threading authors */

/*
 * The semaphore: Sources/Threading/Conditions/Semaphore.swift over include/cthr_sem.h and Sources/CThreading/sem.c.
 *
 * The C layer implements glibc's 64-bit sem_t protocol itself (so the fast paths inline into Swift and timed waits
 * need no sem_clockwait): one 64-bit word holds the value (the futex word) and the count of registered waiters.
 *   cthr_sem_fast_trywait      load; while value > 0: CAS value - 1 (success: return). Semaphore.wait() tries it
 *                              inline, then calls cthr_sem_wait, which tries it once more.
 *   cthr_sem_timedwait (slow)  fetch_add nwaiters + 1; loop: value > 0: CAS (value - 1, nwaiters - 1) together
 *                              (success: return); else futex wait while the value is 0. With -DTIMEOUTS=1 waiter 0
 *                              has a deadline: its sleep may end by timing out (the kernel then no longer counts it
 *                              as a sleeper), after which it looks at the value once more (CAS as above) and else
 *                              leaves (fetch_sub nwaiters - 1) without a token.
 *   cthr_sem_fast_post / cthr_sem_post   CAS value + 1 (the inline form only while nwaiters == 0); if nwaiters > 0
 *                              in the word the CAS replaced: futex wake 1.
 * EINTR is not modelled (the code loops back to the same check).
 *
 * Scenario: NWAITERS threads call Semaphore.wait() and as many posts come from two posting threads on a semaphore
 * created with value 0.
 *
 * Properties: no token is taken twice (assertion: successful waits never exceed the posts); no lost wake-up (every
 * waiter returns: no invalid end state, LTL `progress` under weak fairness); at the end, every token is taken or
 * left in the value for a waiter that timed out, and no waiter is still counted.
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
byte timedout = 0;
#ifndef TIMEOUTS
#define TIMEOUTS 0
#endif

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
#if TIMEOUTS
        if
        :: me == 0 ->
            /* the deadline: the sleep ends by a wake-up or by timing out, whichever comes first */
            if
            :: atomic { !asleep[me] }
            :: atomic { asleep[me] -> asleep[me] = 0 };
                /* ETIMEDOUT: one more look at the value, else leave without a token */
                atomic {
                    if
                    :: value > 0 -> value--; nwaiters--; ok = 1
                    :: else -> nwaiters--; ok = 0; timedout++
                    fi
                };
                if
                :: ok -> take()
                :: else
                fi;
                break
            fi
        :: else -> !asleep[me]
        fi
#else
        !asleep[me]
#endif
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
    assert(taken + timedout == NWAITERS && value == timedout && nwaiters == 0)
}

ltl progress { <> (done == NWAITERS + 2) }
