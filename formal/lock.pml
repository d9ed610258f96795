/* SPDX-License-Identifier: MIT */
/* SPDX-FileCopyrightText: 2026 The Threading authors */

/*
 * The futex mutex's spinner, sleep and wake-up: include/cthr_lock.h and Sources/CThreading/lock.c.
 * (Not modelled: the release, in a forked child, of a lock the forking thread held. It is the same release and
 * wake-up as cthr_lock_unlock_slow's, except that HANDOFF is cleared instead of honoured and `spinner` ignored.)
 *
 * Modelled steps, per thread (NTHREADS threads, ROUNDS lock/unlock rounds each; deadlines with -DTIMEOUTS; no
 * SLOW bit):
 *   lock    cthr_lock_fast_lock        a load of the word and, only when it read 0, one CAS of the whole word
 *                                      0 -> id (the spinner's flag is a word of its own, `spinner`, so a free
 *                                      lock's word is 0 whether or not a thread spins)
 *           cthr_lock_lock_slow        cthr_lock_claim_spinner: attempt (take a free word); with HANDOFF set, or
 *                                      WAKING set in `waiters` while the word does not carry REGISTERED, go to
 *                                      sleep; else CAS `spinner` from 0 to 1 (it failing: somebody spins; go to
 *                                      sleep). The spinner: SPINS attempts, each
 *                                      taking a free word; with the lock, a store of 0 to `spinner`; giving up:
 *                                      cthr_lock_sleep(spinner). With -DSPLIT the spinner gives up unregistered
 *                                      first (cthr_lock_lock_spin: clear `spinner`, then the release check), then
 *                                      enters cthr_lock_sleep as a non-spinner (cthr_lock_lock_sleep).
 *           cthr_lock_sleep            (1) register (count + 1, WAKING kept), reading s = `sequence` in the
 *                                      same step (the two halves of `sleepers`); a spinner then clears `spinner`;
 *                                      (2) barrier B (membarrier: a fence on every thread); (3) seq_cst load of
 *                                      the word + attempt; (4) futex wait on `sequence` while it equals s. Awake:
 *                                      SPINS attempts; then (1) WAKING cleared, reading s = `sequence` in the same
 *                                      step, back to (2). A registered thread takes the lock with REGISTERED in
 *                                      the word (so that newcomers may spin while the WAKING it answered is still
 *                                      set) and (5) leaves at once: count - 1 and WAKING cleared in one step.
 *                                      Its release is the subtraction (never the plain store), clearing
 *                                      REGISTERED, then the same check as the fast unlock's.
 *   unlock  cthr_lock_fast_unlock      exchange mode (the default): one fetch-and-subtract of the id, keeping
 *                                      HANDOFF (a locked instruction); with HANDOFF the heir is woken and nothing
 *                                      more; else a load R of `waiters` and, when it is positive (count > 0,
 *                                      WAKING clear), a load Q of `spinner`: set, nothing more unless nobody was
 *                                      woken for 1 ms; clear, cthr_lock_wake_one: a CAS that sets WAKING while the
 *                                      count is nonzero and adds one to `sequence` in the same step and, if it
 *                                      did, a futex wake of one sleeper. Membarrier mode: a word holding exactly
 *                                      the id is released by a plain store of 0 (which may overwrite a HANDOFF set
 *                                      after the load), then the same loads; any other word by the subtraction.
 *
 * Memory: x86-TSO. Every thread has a store buffer for its plain store of the word (the only plain store of the
 * protocol; every other write is a read-modify-write, which drains the writer's buffer first and is a full
 * fence). Another thread reads the word from memory; a buffer drains at any time (process Drain). The membarrier
 * is one atomic step that drains every thread's buffer. On ARMv8 the same reordering (a later load satisfied
 * before an earlier release store is visible) is the one that matters here; TSO is the abstraction of it.
 * futex: FUTEX_WAIT compares and sleeps atomically (asleep[t] = 1); FUTEX_WAKE(1) clears the flag of one sleeper.
 *
 * Variants (-D):
 *   (default)              plain-store unlock + membarrier on the sleeper's side (cthr_lock.h's "membarrier mode")
 *   RMW_UNLOCK             the default mode: the fetch-and-subtract unlock, no membarrier
 *   SPLIT                  the spinner gives up through cthr_lock_lock_spin and cthr_lock_lock_sleep (MutexLock's
 *                          path, which records the wait between the two)
 *   HANDOFF                the fairness hand-off: a woken thread that gave up may (once per round; "it has waited
 *                          more than 1 ms and the lock's interval has passed") call cthr_lock_inherit; the heir
 *                          sleeps on the word, bounded (1 ms), until the unlock reserves the word for it
 *   TIMEOUTS=n             up to n futex waits (in all) end at their deadline while asleep: one last attempt, else
 *                          leave the waiters (clearing WAKING) and, when others remain, cthr_lock_wake_one
 *   FORKED                 a forked child: the parent's threads left a waiter counted, WAKING set and `spinner`
 *                          set; registrations clear WAKING and an unlock ignores `spinner`
 *   MUTANT_FORKED_KEEP     FORKED, but without those two rules (the parent's protocol): must fail
 *   MUTANT_NO_BARRIER      membarrier mode, the sleeper's barrier B removed: must fail (lost wake-up)
 *   MUTANT_RMW_RELAXED     RMW_UNLOCK, but the load of `waiters` may be satisfied before the subtraction is
 *                          visible (C11 allows it for a relaxed load; ARMv8 LDADDL then LDR does it): must fail
 *   MUTANT_KEEP_WAKING     a woken thread that gives up does not clear WAKING: must fail (unlocks wake nobody)
 *   MUTANT_KEEP_SPINNING   the spinner takes the lock without clearing `spinner`: must fail (unlocks wake nobody)
 *   MUTANT_LATE_SEQUENCE   the registration's s read in a step of its own after it: must fail (a wake-up issued
 *                          between them is slept through)
 *   MUTANT_NO_SEQUENCE     cthr_lock_wake_one does not move `sequence`: must fail (a registered thread that has
 *                          not slept yet sleeps through the wake-up meant for it)
 *   MUTANT_WAKE_UNCOUNTED  cthr_lock_wake_one sets WAKING with fetch_or, whatever the count: must fail (a WAKING set
 *                          after the last registered thread left has nobody to answer for it; unlocks then wake
 *                          nobody, and a thread that registers next sleeps for ever). It takes a thread that
 *                          locks again after the late wake-up (run with NTHREADS=2 ROUNDS=2)
 *   MUTANT_HEIR_UNBOUNDED  HANDOFF, but the heir's sleep has no 1 ms bound: must fail in membarrier mode (the plain-
 *                          store unlock overwrites HANDOFF after its load; nobody wakes the heir)
 *   MUTANT_LEAVE_KEEP_WAKING a registered thread that took the lock leaves the waiters keeping WAKING: must fail (a
 *                          WAKING that was this thread's stays set with nobody awake to answer for it)
 *   MUTANT_LEAVE_AFTER_RELEASE the design this lock had for a while: a registered thread that took the lock stays
 *                          counted, keeping WAKING, until its release, which then leaves in one CAS that is also its
 *                          check: after a load Q of `spinner`, count - 1, WAKING cleared and, when others remain and
 *                          the wake is owed (no hand-off; `spinner` clear, or nobody woken for 1 ms), WAKING set,
 *                          `sequence` + 1 and a futex wake. Must fail with NTHREADS=3 ROUNDS=2: between the release
 *                          and the leave, the spinner takes the lock and its unlock finds the leaver's WAKING still
 *                          set (no wake-up), while the leave counted on the spinner (no wake-up), and a third thread
 *                          that registered meanwhile sleeps on a free lock
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

byte owner = 0;              /* the word's owner field in memory (0 = free) */
bit spinning = 0;            /* `spinner`, the spinner's word beside the lock word (1: a thread spins) */
bit handoff = 0;             /* the word's HANDOFF bit */
bit regbit = 0;              /* the word's REGISTERED bit (the owner took the lock as a registered waiter) */
byte wcount = 0;             /* `sleepers`, its low half `waiters`: the count of registered waiters */
bit waking = 0;              /* `sleepers`, its low half `waiters`: the WAKING bit */
byte sequence = 0;           /* `sleepers`, its high half `sequence`: moved by each wake-up */
bit asleep[NTHREADS + 1];    /* futex sleepers on `sequence` */
bit buffered[NTHREADS + 1];  /* thread t's store buffer holds `word = 0` */
byte inside = 0;             /* threads in the critical section */
byte finished = 0;
byte timeouts = 0;           /* TIMEOUTS: deadlines that passed so far */
bit heir_asleep[NTHREADS + 1];  /* the heir's futex sleep on the word */

/* Drains thread t's store buffer (in one step): the plain store writes the whole word. */
inline drain(t) {
    if
    :: buffered[t] -> owner = 0; handoff = 0; buffered[t] = 0
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

/* FUTEX_WAKE of one sleeper on `sequence` (none: no effect). */
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

/* FUTEX_WAKE of the heir on the word. */
inline wake_heir() {
    atomic {
        heir_asleep[1] = 0; heir_asleep[2] = 0;
#if NTHREADS >= 3
        heir_asleep[3] = 0;
#endif
    }
}

/* cthr_lock_attempt: CAS of a free word (owner 0, no HANDOFF) -> me (a locked instruction: drains this thread's
 * buffer first). */
inline attempt() {
    atomic {
        drain(me);
        if
        :: owner == 0 && !handoff -> owner = me; got = 1
        :: else -> skip
        fi
    }
}

/* cthr_lock_wake_one: CAS WAKING in while the count is nonzero, sequence + 1 in the same step (MUTANT_WAKE_UNCOUNTED:
 * whatever the count); if this thread set it, wake one sleeper. */
#ifdef MUTANT_NO_SEQUENCE
#define MOVE_SEQUENCE skip
#else
#define MOVE_SEQUENCE sequence++
#endif
inline wake_one() {
    atomic {
        drain(me);
#ifdef MUTANT_WAKE_UNCOUNTED
        before = waking; waking = 1; MOVE_SEQUENCE
#else
        if
        :: wcount > 0 && !waking -> before = 0; waking = 1; MOVE_SEQUENCE
        :: else -> before = 1
        fi
#endif
    };
    if
    :: before == 0 -> futex_wake_one()
    :: else
    fi
}

/* cthr_lock_release_check: a load of `waiters`; positive = count > 0, WAKING clear: cthr_lock_wake_one. */
inline release_check() {
    if
    :: wcount > 0 && waking == 0 -> wake_one()
    :: else
    fi
}

/* The unlock's check after its release, `positive` being its load R of `waiters` (count > 0, WAKING clear): then a
 * load Q of `spinner`; a spinner set means a wake-up only when nobody was woken for 1 ms (any time, here:
 * cthr_lock_released_spinning); in a forked child, where the spinner may be a thread of the parent, the wake-up
 * regardless; a spinner clear, cthr_lock_wake_one. */
inline unlock_check(positive) {
    if
    :: positive ->
#if defined(FORKED) && !defined(MUTANT_FORKED_KEEP)
        wake_one()
#else
        if
        :: spinning ->
            if
            :: wake_one()
            :: skip
            fi
        :: else -> wake_one()
        fi
#endif
    :: else
    fi
}

/* The store buffer drains on its own, eventually. */
proctype Drain(byte t) {
end:
    do
    :: atomic { buffered[t] -> owner = 0; handoff = 0; buffered[t] = 0 }
    od
}

proctype Thread(byte me) {
    byte round = 0;
    byte tries;
    bit got;
    bit before;
    bit spinner;
    bit old_handoff;
    byte s;
    byte after;
    bit inherited;
    bit registered;
    bit owed;
    do
    :: round < ROUNDS ->
        got = 0;
        spinner = 0;
        inherited = 0;
        registered = 0;
        /* cthr_lock_fast_lock: a load of the word (which reads this thread's own buffered store first), and only
         * when it read a free word, the CAS 0 -> me */
        if
        :: (owner == 0 && !handoff) || buffered[me] -> attempt()
        :: else
        fi;
        if
        :: got -> goto critical
        :: else
        fi;
        /* cthr_lock_claim_spinner: attempt (with the load of the word it made, the HANDOFF check); then sleep if
         * the word was reserved, or a woken thread is awake (a load of `waiters`), or somebody spins (the CAS of
         * `spinner` from 0 to 1 fails); else this thread is the spinner */
        attempt();
        if
        :: got -> goto critical
        :: else
        fi;
        if
        :: handoff -> skip
        :: else ->
            if
            :: waking && !regbit -> skip
            :: else -> atomic { drain(me); if :: !spinning -> spinning = 1; spinner = 1 :: else fi }
            fi
        fi;
        if
        :: spinner ->
            /* cthr_lock_spin; with the lock, a store of 0 to `spinner` */
            tries = 0;
            do
            :: tries >= SPINS -> break
            :: else ->
                attempt();
                tries++;
                if
                :: got ->
#ifndef MUTANT_KEEP_SPINNING
                    spinning = 0;
#endif
                    goto critical
                :: else
                fi
            od
#ifdef SPLIT
            /* cthr_lock_lock_spin gives up unregistered: clear `spinner` (a sequentially consistent store, which
             * drains the buffer), then cthr_lock_release_check */
            ;
            atomic { drain(me); spinning = 0 };
            release_check();
            spinner = 0
#endif
        :: else
        fi;
        /* cthr_lock_sleep: (1), the registration, which reads s in the same step */
#ifdef MUTANT_LATE_SEQUENCE
#define READ_S skip
#else
#define READ_S s = sequence
#endif
#if defined(FORKED) && !defined(MUTANT_FORKED_KEEP)
        atomic { drain(me); wcount++; waking = 0; READ_S };  /* a forked child: the registration clears WAKING */
#else
        atomic { drain(me); wcount++; READ_S };
#endif
#ifdef MUTANT_LATE_SEQUENCE
        s = sequence;
#endif
        if
        :: spinner -> atomic { drain(me); spinning = 0 }; spinner = 0
        :: else
        fi;
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
        /* step (4): futex wait on `sequence` while it equals s: compares and sleeps atomically */
        atomic {
            if
            :: sequence == s -> asleep[me] = 1
            :: else -> skip
            fi
        }
#ifdef TIMEOUTS
        ;
        if
        :: !asleep[me]
        :: atomic { asleep[me] && timeouts < TIMEOUTS -> asleep[me] = 0; timeouts++ };
            /* ETIMEDOUT: one last attempt, else leave the waiters without the lock */
            attempt();
            if
            :: got -> goto leave
            :: else
            fi;
            atomic { drain(me); wcount--; waking = 0; after = wcount };
            /* pass on a wake this thread may have consumed: cthr_lock_wake_one */
            if
            :: after != 0 -> wake_one()
            :: else
            fi;
            goto next_round
        fi;
#else
        ;
        !asleep[me];
#endif
        /* awake: cthr_lock_spin (a woken thread does not hold `spinner`) */
        tries = 0;
        do
        :: tries >= SPINS -> break
        :: else -> attempt(); tries++;
            if
            :: got -> goto leave
            :: else
            fi
        od;
        /* give up: (1) clear WAKING, reading s in the same step, back to the barrier */
        atomic {
            drain(me);
            s = sequence;
#ifndef MUTANT_KEEP_WAKING
            waking = 0
#endif
        };
#ifdef HANDOFF
        /* waited more than 1 ms (any time, once per round): cthr_lock_inherit */
        if
        :: !inherited ->
            inherited = 1;
            atomic {
                drain(me);
                if
                :: handoff -> skip                                   /* another heir asked first */
                :: !handoff && owner == 0 -> owner = me; got = 1
                :: !handoff && owner != 0 -> handoff = 1; heir_asleep[me] = 0
                fi
            };
            if
            :: got -> goto leave
            :: else
            fi;
            do
            :: atomic { !handoff -> skip }; break                   /* none or lost: back to waiting */
            :: atomic { handoff && owner == 0 -> handoff = 0; owner = me; got = 1 }; break
            :: atomic { handoff && owner != 0 -> heir_asleep[me] = 1 };
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
            /* no hand-off: a fresh step (1), then the barrier and check */
            atomic { drain(me); s = sequence; waking = 0 }
        :: else
        fi;
#endif
        goto sleep_step;
leave:
        /* taken by a registered thread: REGISTERED in the word (set by the taking CAS; only the owner writes it) */
        registered = 1;
        regbit = 1;
#ifndef MUTANT_LEAVE_AFTER_RELEASE
        /* (5) it leaves at once, clearing WAKING */
        atomic {
            drain(me);
            wcount--
#ifndef MUTANT_LEAVE_KEEP_WAKING
            ;
            waking = 0
#endif
        };
#endif
critical:
        inside++;
        assert(inside == 1);
        inside--;
        if
        :: registered ->
            /* cthr_lock_unlock_slow (a word with REGISTERED never takes the plain store): the subtraction */
            atomic { drain(me); old_handoff = handoff; owner = 0; regbit = 0 };
#ifndef MUTANT_LEAVE_AFTER_RELEASE
            /* then the fast unlock's check: a load R of `waiters`, and Q of `spinner` when positive */
            before = (wcount > 0 && waking == 0);
            if
            :: old_handoff -> wake_heir()
            :: else -> unlock_check(before)
            fi;
            goto next_round
#else
            if
            :: old_handoff -> wake_heir()
            :: else
            fi;
            /* cthr_lock_leave_released: the load Q of `spinner` (a forked child ignores it), then one CAS */
            owed = !old_handoff;
#if !defined(FORKED) || defined(MUTANT_FORKED_KEEP)
            if
            :: owed && spinning ->
                if
                :: owed = 1  /* nobody woken for 1 ms */
                :: owed = 0
                fi
            :: else
            fi;
#endif
            atomic {
                drain(me);
                wcount--;
                waking = 0;
                if
                :: owed && wcount > 0 -> waking = 1; MOVE_SEQUENCE; before = 0
                :: else -> before = 1
                fi
            };
            if
            :: before == 0 -> futex_wake_one()
            :: else
            fi;
            goto next_round
#endif
        :: else
        fi;
        /* cthr_lock_fast_unlock */
#ifdef RMW_UNLOCK
#ifdef MUTANT_RMW_RELAXED
        /* the load of `waiters` satisfied before the subtraction is visible */
        before = (wcount > 0 && waking == 0);
        atomic { drain(me); old_handoff = handoff; owner = 0 };
#else
        atomic { drain(me); old_handoff = handoff; owner = 0 };
        before = (wcount > 0 && waking == 0);
#endif
        if
        :: old_handoff -> wake_heir()
        :: else -> unlock_check(before)
        fi;
#else
        /* membarrier mode: a word holding exactly the id is released by a plain store; else by the subtraction */
        atomic {
            if
            :: !handoff -> buffered[me] = 1; old_handoff = 0
            :: else -> drain(me); old_handoff = handoff; owner = 0
            fi
        };
        if
        :: old_handoff -> wake_heir()
        :: else -> before = (wcount > 0 && waking == 0); unlock_check(before)
        fi;
#endif
next_round:
        round++
    :: else -> break
    od;
    finished++
}

init {
    byte i = 1;
#ifdef FORKED
    /* A forked child: a thread of the parent, which does not exist here, stays counted as a waiter with WAKING set
     * for it, and another left `spinner` set. */
    wcount = 1;
    waking = 1;
    spinning = 1;
#endif
    atomic {
        do
        :: i <= NTHREADS -> run Thread(i); run Drain(i); i++
        :: else -> break
        od
    }
}

/* No lost wake-up: every thread finishes its rounds (checked with -a under weak fairness). */
ltl progress { <> (finished == NTHREADS) }
