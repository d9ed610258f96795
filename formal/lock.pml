/* SPDX-License-Identifier: MIT */
/* SPDX-FileCopyrightText: 2026 The Threading authors */

/*
 * The futex mutex's sleep and wake-up: include/cthr_lock.h and Sources/CThreading/lock.c.
 * (Not modelled: the release, in a forked child, of a lock the forking thread held. It is the same CAS release and
 * wake-up as cthr_lock_unlock_slow's, except that a HANDOFF in the word is cleared instead of honoured (the heir
 * that asked lives in the parent, or is a child thread that treats it as a lost hand-off, as the model's heir does).)
 *
 * Modelled steps, per thread (NTHREADS threads, ROUNDS lock/unlock rounds each; deadlines with -DTIMEOUTS; no
 * SLOW bit, no fenced mode):
 *   lock    cthr_lock_fast_lock        one CAS word 0 -> id (a locked instruction: drains the thread's store buffer)
 *           cthr_lock_lock_slow        phase 1: cthr_lock_spin as a newcomer (SPINS attempts, stops as soon as the
 *                                      waiter count is nonzero); phase 2: register (RMW of `waiters`: count + 1,
 *                                      WAKING cleared, result = `seen`), then the sleep step:
 *                                        (2) barrier B = cthr_lock_barrier (membarrier: a fence on every thread),
 *                                        (3) seq_cst load of the word + cthr_lock_attempt,
 *                                        (4) futex wait on `waiters` while it equals `seen`;
 *                                      awake: cthr_lock_spin (SPINS attempts), then `waiters &= ~WAKING` (new
 *                                      `seen`) and back to (2); with the lock: leave the waiters (count - 1,
 *                                      WAKING cleared).
 *   unlock  cthr_lock_fast_unlock      release store word = 0, then a relaxed load of `waiters`; when it is
 *                                      positive (count > 0, WAKING clear) cthr_lock_wake_one: fetch_or WAKING and,
 *                                      if this thread set it, futex wake of one sleeper.
 *
 * Memory: x86-TSO. Every thread has a store buffer for its plain store of the word (the only plain store of the
 * protocol; every other write is a read-modify-write, which drains the writer's buffer first and is a full
 * fence). Another thread reads the word from memory; a buffer drains at any time (process Drain). The membarrier
 * is one atomic step that drains every thread's buffer (each running thread executes a full barrier; a thread not
 * running passed one when it was switched out). On ARMv8 the same reordering (a later load satisfied before an
 * earlier release store is visible) is the one that matters here; TSO is the abstraction of it.
 * futex: FUTEX_WAIT compares and sleeps atomically (asleep[t] = 1); FUTEX_WAKE(1) clears the flag of one sleeper.
 *
 * Variants (-D):
 *   (default)              plain-store unlock + membarrier on the sleeper's side (cthr_lock.h's "membarrier mode")
 *   RMW_UNLOCK             the unlock stores with an atomic exchange (a locked instruction) and the sleeper runs
 *                          no membarrier: the default mode
 *   MUTANT_NO_BARRIER      plain-store unlock, the sleeper's barrier B removed: must fail (lost wake-up)
 *   MUTANT_RMW_RELAXED     RMW_UNLOCK where the exchange's store may still be passed by the following relaxed load
 *                          of `waiters` (C11 allows it for a seq_cst exchange followed by a relaxed load; ARMv8
 *                          LDAXR/STLXR then LDR does it): must fail. So the RMW mode needs the load of `waiters`
 *                          seq_cst (or a fence), not relaxed.
 *   MUTANT_KEEP_WAKING     a woken thread that gives up does not clear WAKING: must fail (unlocks wake nobody)
 *   HANDOFF                the fairness hand-off (cthr_lock.h, "Fairness"): a woken thread that gave up may (once
 *                          per round; "it has waited more than 1 ms") call cthr_lock_inherit: with the word free it
 *                          takes it; with HANDOFF already set it goes back to waiting; else it sets HANDOFF (a CAS,
 *                          drains its buffer) and, as the heir, sleeps on the word while it is held with HANDOFF; it
 *                          takes the reserved word (owner 0, HANDOFF set), or finds HANDOFF gone (lost to a plain-
 *                          store unlock) and goes back to waiting, clearing WAKING. Its sleep also ends by itself
 *                          (the 1 ms bound). attempt() refuses a reserved word. The fast unlock refuses a word with
 *                          HANDOFF (exchange mode: the CAS from the owner's id fails; membarrier mode: the load sees
 *                          it), and the slow unlock reserves the word and wakes the heir (no `waiters` wake). In
 *                          membarrier mode the plain store of 0 may still overwrite a HANDOFF set after its load.
 *                          (The heir's own deadline, which withdraws the bit, is not modelled.)
 *   MUTANT_HEIR_UNBOUNDED  HANDOFF, but the heir's sleep has no 1 ms bound: must fail in membarrier mode (the plain-
 *                          store unlock overwrites HANDOFF after its load; nobody wakes the heir)
 *   TIMEOUTS=n             up to n futex waits (in all) end at their deadline while asleep: cthr_lock_lock_slow's
 *                          timeout path (one last attempt; else leave the waiters keeping WAKING and, when others
 *                          remain, set WAKING and wake one, passing on a wake this thread may have consumed); the
 *                          round then ends without the lock. (Removing the pass-on was not refuted: with 3
 *                          threads, 1 round, 1 timeout exhaustively, and 2 rounds in a bitstate search. Under Linux
 *                          futex semantics a woken waiter returns 0, not ETIMEDOUT, and a thread that consumed a
 *                          wake clears WAKING itself before it can time out; so it is not used as a mutant.)
 *
 * Properties: mutual exclusion (assertion in the critical section); no lost wake-up: no thread sleeps forever
 * (invalid end states in the safety run) and the LTL property `progress` (every thread finishes its rounds) under
 * weak fairness.
 */

#ifndef NTHREADS
#define NTHREADS 3
#endif
#ifndef ROUNDS
#define ROUNDS 1
#endif
#ifndef SPINS
#define SPINS 1
#endif

#if defined(MUTANT_RMW_RELAXED) && !defined(RMW_UNLOCK)
#define RMW_UNLOCK
#endif

byte word = 0;               /* the lock word in memory: owner id, 0 = free */
byte wcount = 0;             /* `waiters`: the count of registered waiters */
bit waking = 0;              /* `waiters`: the WAKING bit */
bit asleep[NTHREADS + 1];    /* futex sleepers on `waiters` */
bit buffered[NTHREADS + 1];  /* thread t's store buffer holds `word = 0` */
byte inside = 0;             /* threads in the critical section */
byte finished = 0;
byte timeouts = 0;           /* TIMEOUTS: deadlines that passed so far */
bit handoff = 0;             /* the word's HANDOFF bit (in memory) */
bit heir_asleep[NTHREADS + 1];  /* the heir's futex sleep on the word */

/* Drains thread t's store buffer (in one step). */
inline drain(t) {
    if
    :: buffered[t] -> word = 0; handoff = 0; buffered[t] = 0  /* the store writes the whole word */
    :: else -> skip
    fi
}

/* membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED): a full barrier on every thread of the process. */
inline membarrier() {
    atomic {
        drain(1);
        drain(2);
#if NTHREADS >= 3
        drain(3);
#endif
    }
}

/* FUTEX_WAKE of one sleeper on `waiters` (none: no effect). */
inline futex_wake_one() {
    atomic {
        if
        :: asleep[1] -> asleep[1] = 0
        :: asleep[2] -> asleep[2] = 0
#if NTHREADS >= 3
        :: asleep[3] -> asleep[3] = 0
#endif
        :: else -> skip
        fi
    }
}

/* cthr_lock_attempt after a load of the word: CAS 0 -> me (locked: drains this thread's buffer first). */
inline attempt() {
    atomic {
        drain(me);
        if
        :: word == 0 && !handoff -> word = me; got = 1
        :: else -> skip
        fi
    }
}

/* The store buffer drains on its own, eventually. */
proctype Drain(byte t) {
end:
    do
    :: atomic { buffered[t] -> word = 0; handoff = 0; buffered[t] = 0 }
    od
}

proctype Thread(byte me) {
    byte round = 0;
    byte tries;
    bit got;
    bit before;
    byte seen_count;
    bit seen_waking;
    byte after;
    bit inherited;
    do
    :: round < ROUNDS ->
        got = 0;
        inherited = 0;
        /* cthr_lock_fast_lock */
        attempt();
        if
        :: got -> goto critical
        :: else
        fi;
        /* cthr_lock_lock_slow, phase 1: cthr_lock_spin(newcomer: true) */
        tries = 0;
        do
        :: tries >= SPINS || wcount != 0 -> break
        :: else -> attempt(); tries++;
            if
            :: got -> goto critical
            :: else
            fi
        od;
        /* phase 2, step (1): register, clearing WAKING */
        atomic { drain(me); wcount++; waking = 0; seen_count = wcount; seen_waking = 0 }
sleep_step:
        /* step (2): the barrier B */
#if !defined(RMW_UNLOCK) && !defined(MUTANT_NO_BARRIER)
        membarrier();
#endif
        /* step (3): seq_cst load of the word, cthr_lock_attempt */
        attempt();
        if
        :: got -> goto leave
        :: else
        fi;
        /* step (4): cthr_lock_futex_wait(&waiters, seen): compares and sleeps atomically */
        atomic {
            if
            :: wcount == seen_count && waking == seen_waking -> asleep[me] = 1
            :: else -> skip
            fi
        }
#ifdef TIMEOUTS
        /* woken (or the value differed), or, while asleep, the deadline passes (at most TIMEOUTS times in all) */
        if
        :: !asleep[me]
        :: atomic { asleep[me] && timeouts < TIMEOUTS -> asleep[me] = 0; timeouts++ };
            /* ETIMEDOUT: one last attempt, else leave the waiters without the lock */
            attempt();
            if
            :: got -> goto leave
            :: else
            fi;
            atomic { drain(me); wcount--; after = wcount };
            /* pass on a wake this thread may have consumed */
            if
            :: after != 0 ->
                atomic { drain(me); waking = 1 };
                futex_wake_one()
            :: else
            fi;
            goto next_round
        fi;
#else
        !asleep[me];
#endif
        /* awake: cthr_lock_spin(newcomer: false) */
        tries = 0;
        do
        :: tries >= SPINS -> break
        :: else -> attempt(); tries++;
            if
            :: got -> goto leave
            :: else
            fi
        od;
        /* give up: clear WAKING, `seen` = the result, back to the barrier */
        atomic {
            drain(me);
#ifndef MUTANT_KEEP_WAKING
            waking = 0;
#endif
            seen_count = wcount;
            seen_waking = waking
        }
#ifdef HANDOFF
        /* waited more than 1 ms (any time, once per round): cthr_lock_inherit */
        if
        :: !inherited ->
            inherited = 1;
            atomic {
                drain(me);
                if
                :: handoff -> skip                        /* another heir asked first */
                :: !handoff && word == 0 -> word = me; got = 1
                :: !handoff && word != 0 -> handoff = 1; heir_asleep[me] = 0
                fi
            };
            if
            :: got -> goto leave
            :: else
            fi;
            do
            :: atomic { !handoff -> skip }; break        /* none or lost: back to waiting */
            :: atomic { handoff && word == 0 -> handoff = 0; word = me; got = 1 }; break
            :: atomic { handoff && word != 0 -> heir_asleep[me] = 1 };
                /* futex wait on the word; ends by the unlock's wake or (the 1 ms bound) by itself */
                if
                :: atomic { !heir_asleep[me] }
#ifndef MUTANT_HEIR_UNBOUNDED
                :: atomic { heir_asleep[me] -> heir_asleep[me] = 0 }
#endif
                fi
            od;
            if
            :: got -> goto leave
            :: else
            fi;
            /* no hand-off: a fresh step (1), WAKING cleared, then the barrier and check */
            atomic { drain(me); waking = 0; seen_count = wcount; seen_waking = waking }
        :: else
        fi;
#endif
        goto sleep_step;
leave:
        /* leave the waiters with the lock: count - 1, WAKING cleared */
        atomic { drain(me); wcount--; waking = 0 }
critical:
        inside++;
        assert(inside == 1);
        inside--;
        /* cthr_lock_fast_unlock */
#ifdef HANDOFF
        /* HANDOFF set: the fast unlock fails; cthr_lock_unlock_slow reserves the word (CAS) and wakes the heir */
        atomic {
            if
            :: handoff -> drain(me); word = 0; heir_asleep[1] = 0; heir_asleep[2] = 0;
#if NTHREADS >= 3
                heir_asleep[3] = 0;
#endif
                got = 0
            :: else -> got = 1
            fi
        };
        if
        :: !got -> goto next_round
        :: else
        fi;
#endif
#if defined(RMW_UNLOCK) && !defined(MUTANT_RMW_RELAXED)
#ifdef HANDOFF
        /* the CAS from the owner's id: fails if a heir set HANDOFF since the check above (then: reserve) */
        atomic {
            drain(me);
            if
            :: handoff -> word = 0; heir_asleep[1] = 0; heir_asleep[2] = 0;
#if NTHREADS >= 3
                heir_asleep[3] = 0;
#endif
                got = 0
            :: else -> word = 0; got = 1
            fi
        };
        if
        :: !got -> goto next_round
        :: else
        fi;
#else
        atomic { drain(me); word = 0 }  /* atomic exchange: a locked instruction, a full fence */
#endif
#else
        buffered[me] = 1;               /* release store word = 0: enters the store buffer */
#endif
        /* relaxed load of `waiters`: positive = count > 0 and WAKING clear */
        if
        :: wcount > 0 && waking == 0 ->
            /* cthr_lock_wake_one: fetch_or WAKING (locked: drains the buffer), wake if this thread set it */
            atomic { drain(me); before = waking; waking = 1 };
            if
            :: before == 0 -> futex_wake_one()
            :: else
            fi
        :: else
        fi;
next_round:
        round++
    :: else -> break
    od;
    finished++
}

init {
    byte i = 1;
    atomic {
        do
        :: i <= NTHREADS -> run Thread(i); run Drain(i); i++
        :: else -> break
        od
    }
}

/* No lost wake-up: every thread finishes its rounds (checked with -a under weak fairness). */
ltl progress { <> (finished == NTHREADS) }
