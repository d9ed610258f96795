/* SPDX-License-Identifier: MIT */
/* SPDX-FileCopyrightText: 2026 The Threading authors */

/*
 * The pool worker's parker: Sources/Threading/Queues/Engine/Engine.swift (workerMain, submit, dispatchLocked,
 * Actions.perform; EngineWord in EngineLock.swift).
 *
 * Modelled steps:
 *   Worker   workerMain's loop: under the engine lock, count the finished unit (running - 1) and take the next
 *            pending one while running < limit; else spin (spinning + 1, unlock, spin, lock, spinning - 1, take
 *            pending work); else go idle: parker.store(0) and idle.append under the lock, unlock, then
 *            `while parker.load() == 0 { parker.wait(expected: 0, deadline) }` (a wait may time out: at most
 *            TIMEOUTS times in all); then under the lock take `assigned` if set, else leave the idle list.
 *   Submit   submit: under the lock append the unit (pending + 1) and dispatchLocked: while running < limit and
 *            pending > spinning, pop an idle worker (any), give it the next unit (`assigned`), parker.store(1),
 *            running + 1; unlock; then Actions.perform wakes the popped workers (futex wake). Spawning is not
 *            modelled (the pool is at its thread limit), nor the monitor.
 * The engine lock is a mutex (formal/lock.pml); each step under it is atomic with respect to other holders.
 *
 * Properties: every submitted unit runs exactly once (assertions, and init waits for all of them: a unit left
 * pending with every worker asleep is an invalid end state); LTL `progress` under weak fairness.
 *
 * Variants (-D):
 *   MUTANT_STORE_AFTER_UNLOCK  the worker stores parker = 0 after releasing the lock (after idle.append): must
 *                              fail (a dispatcher's store of 1 is overwritten and the worker sleeps with a unit)
 */

#ifndef NWORKERS
#define NWORKERS 2
#endif
#ifndef UNITS
#define UNITS 2
#endif
#ifndef TIMEOUTS
#define TIMEOUTS 1
#endif
#define LIMIT NWORKERS

bit elock = 0;
byte pending = 0;
byte running = 0;
byte spinning = 0;
bit idle[NWORKERS];
bit assigned[NWORKERS];
byte parker[NWORKERS];
bit asleep[NWORKERS];
byte timeouts = 0;
byte submitted = 0;
byte ran = 0;

inline lock() { atomic { !elock -> elock = 1 } }
inline unlock() { elock = 0 }

inline run_unit() {
    atomic { ran++; assert(ran <= submitted) }
}

proctype Worker(byte me) {
    bit have = 0;
    bit took;
    do
    :: lock();
        if
        :: have -> running--; have = 0
        :: else
        fi;
        if
        :: running < LIMIT && pending > 0 -> pending--; running++; unlock(); have = 1; run_unit()
        :: else ->
            /* spin a little before parking */
            spinning++;
            unlock();
            lock();
            spinning--;
            if
            :: running < LIMIT && pending > 0 -> pending--; running++; unlock(); have = 1; run_unit()
            :: else ->
                /* go idle */
#ifndef MUTANT_STORE_AFTER_UNLOCK
                parker[me] = 0;
#endif
                idle[me] = 1;
                unlock();
#ifdef MUTANT_STORE_AFTER_UNLOCK
                parker[me] = 0;
#endif
                do
                :: parker[me] != 0 -> break
                :: else ->
                    atomic {
                        if
                        :: parker[me] == 0 -> asleep[me] = 1
                        :: else
                        fi
                    };
end_sleep:
                    if
                    :: !asleep[me]                                               /* woken, or not equal */
                    :: atomic { asleep[me] && timeouts < TIMEOUTS -> asleep[me] = 0; timeouts++ }; break
                    fi
                od;
                lock();
                if
                :: assigned[me] -> assigned[me] = 0; unlock(); have = 1; run_unit()
                :: else -> idle[me] = 0; unlock()
                fi
            fi
        fi
    od
}

proctype Submitter(byte units) {
    byte n = 0;
    byte w;
    bit wake[NWORKERS];
    do
    :: n < units ->
        lock();
        pending++;
        submitted++;
        /* dispatchLocked */
        do
        :: running < LIMIT && pending > spinning ->
            if
            :: idle[0] -> w = 0
#if NWORKERS >= 2
            :: idle[1] -> w = 1
#endif
            :: else -> break  /* no idle worker, no thread to spawn */
            fi;
            idle[w] = 0;
            assigned[w] = 1;
            pending--;
            parker[w] = 1;
            running++;
            wake[w] = 1
        :: else -> break
        od;
        unlock();
        /* Actions.perform: wake the popped workers */
        w = 0;
        do
        :: w < NWORKERS ->
            if
            :: wake[w] -> asleep[w] = 0; wake[w] = 0
            :: else
            fi;
            w++
        :: else -> break
        od;
        n++
    :: else -> break
    od
}

init {
    byte i = 0;
    atomic {
        do
        :: i < NWORKERS -> run Worker(i); i++
        :: else -> break
        od;
        run Submitter(UNITS / 2);
        run Submitter(UNITS - UNITS / 2)
    };
    (ran == UNITS && submitted == UNITS)
}

ltl progress { <> (ran == UNITS && submitted == UNITS) }
