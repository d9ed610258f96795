/* SPDX-License-Identifier: MIT */
/* SPDX-FileCopyrightText: 2026 The Threading authors */

/*
 * The pool scheduler's local queues, injection, stealing and parking: Sources/Threading/Pools/PoolCore.swift
 * (submit, notify, notifySlow, findWork, steal, workerMain's spin, park) and PoolRunQueue.swift (push, take, each
 * under the run queue's own lock).
 *
 * Modelled steps:
 *   Producer  submit from a thread outside the pool: push to the injection shard (under the shard's lock; the count
 *             hint is stored sequentially consistent), then notify: read `searchers` (`PoolSearchers`), `idle` and
 *             `running` (three separate sequentially consistent loads); if nobody searches and a worker is idle or a
 *             slot is free, take the pool lock and, if still nobody searches, a slot is free and work is queued, pop an
 *             idle worker, store its parker = 1, running + 1, unlock, futex-wake it.
 *   Worker    findWork: take from the own local queue, else the shard, else steal from the other worker's local
 *             queue (each take under that queue's lock). A unit taken from the shard may submit one more unit
 *             (at most LOCAL in all) from inside the task: pushed to the worker's own local queue, then notify.
 *             Nothing found: search (searchers + 1, one look at every queue, searchers - 1); found: search again
 *             and, once a unit is taken, notify if work remains (pass the wake-up on). Else park: under the pool lock
 *             running - 1, join the idle list (idle + 1), parker = 0, then re-check every queue: work and a free
 *             slot: leave the idle list and search again; else unlock and `while parker == 0 { futex wait }` (a
 *             wait may time out, at most TIMEOUTS times in all), then under the lock: woken (parker == 1, the
 *             waker gave it a slot) or timed out (leave the idle list, running + 1); search again.
 * Every sequentially consistent atomic is a plain shared variable (Promela is sequentially consistent); each step
 * under a lock is one atomic block (the locks are formal/lock.pml's). Thread creation, blocking hooks, the monitor
 * and shutdown are not modelled: the pool has NWORKERS threads from the start, all running.
 *
 * Properties: every submitted unit runs exactly once (assertions; init waits until all ran: a unit left queued
 * while every worker sleeps is an invalid end state); LTL `progress` under weak fairness.
 *
 * Variants (-D):
 *   MUTANT_NO_RECHECK       park does not re-check the queues after joining the idle list: must fail (a producer
 *                           that read `idle` = 0 before the worker joined skips the wake-up; the worker looked at
 *                           the queues before the push, and sleeps with a unit queued)
 *   MUTANT_STORE_AFTER_UNLOCK  park stores parker = 0 after releasing the pool lock (after joining the idle
 *                           list): must fail (a waker's store of 1 is overwritten; the worker sleeps, off the idle
 *                           list, with a unit queued)
 *   MUTANT_STEAL_NO_LOCK    steal reads the victim's count and takes without the victim's lock: must fail (the
 *                           owner and the thief take the same unit: it runs twice)
 */

#ifndef NWORKERS
#define NWORKERS 2
#endif
#ifndef INJECT
#define INJECT 2
#endif
#ifndef LOCAL
#define LOCAL 1
#endif
#ifndef TIMEOUTS
#define TIMEOUTS 1
#endif
#define LIMIT NWORKERS
#define TOTAL (INJECT + LOCAL)

bit elock = 0;
byte shard = 0;             /* units in the injection shard */
byte lq[NWORKERS];          /* units in each worker's local queue */
byte running = NWORKERS;
byte searchers = 0;
byte idleCount = 0;
bit idle[NWORKERS];
byte parker[NWORKERS];
bit asleep[NWORKERS];
byte timeouts = 0;
byte submitted = 0;
byte ran = 0;
byte localBudget = LOCAL;

inline lock() { atomic { !elock -> elock = 1 } }
inline unlock() { elock = 0 }

#define QUEUED (shard + lq[0] + lq[NWORKERS - 1])

/* notify: the lock-free checks, then notifySlow under the pool lock; `w` and `s`, `i`, `r` are the caller's. */
inline notify() {
    s = searchers;
    i = idleCount;
    r = running;
    if
    :: s == 0 && (i > 0 || r < LIMIT) ->
        lock();
        w = NWORKERS;
        if
        :: searchers == 0 && running < LIMIT && QUEUED > 0 ->
            if
            :: idle[0] -> w = 0
            :: idle[NWORKERS - 1] -> w = NWORKERS - 1
            :: else    /* no idle worker: the real code creates a thread; here every thread exists */
            fi;
            if
            :: w < NWORKERS -> idle[w] = 0; idleCount--; parker[w] = 1; running++
            :: else
            fi
        :: else
        fi;
        unlock();
        if
        :: w < NWORKERS -> asleep[w] = 0    /* futex wake */
        :: else
        fi
    :: else
    fi;
    /* forget the locals (fewer states) */
    d_step { w = 0; s = 0; i = 0; r = 0 }
}

inline run_unit() {
    atomic { ran++; assert(ran <= submitted) }
}

proctype Producer(byte units) {
    byte n = 0;
    byte w, s, i, r;
    do
    :: n < units ->
        atomic { shard++; submitted++ };
        notify();
        n++
    :: else -> break
    od
}

proctype Worker(byte me) {
    byte other = NWORKERS - 1 - me;
    byte w, s, i, r;
    byte c;
    bit found;
    bit fromShard;
    bit searching = 0;
    do
    :: /* findWork */
        d_step { found = 0; fromShard = 0; c = 0 };
        atomic {
            if
            :: lq[me] > 0 -> lq[me]--; found = 1
            :: else
            fi
        };
        if
        :: !found ->
            atomic {
                if
                :: shard > 0 -> shard--; found = 1; fromShard = 1
                :: else
                fi
            }
        :: else
        fi;
        if
        :: !found ->
            /* steal */
#ifndef MUTANT_STEAL_NO_LOCK
            atomic {
                if
                :: lq[other] > 0 -> lq[other]--; found = 1
                :: else
                fi
            }
#else
            c = lq[other];
            if
            :: c > 0 -> lq[other] = c - 1; found = 1
            :: else
            fi
#endif
        :: else
        fi;
        if
        :: found ->
            if
            :: searching ->
                /* pass the wake-up on, the unit taken, if more work waits */
                searching = 0;
                if
                :: QUEUED > 0 -> notify()
                :: else
                fi
            :: else
            fi;
            run_unit();
            /* the task submits to its own pool (at most LOCAL times in all): the worker's local queue */
            c = 0;
            atomic {
                if
                :: fromShard && localBudget > 0 -> localBudget--; lq[me]++; submitted++; c = 1
                :: else
                fi
            };
            if
            :: c -> notify()
            :: else
            fi
        :: else ->
            /* spin: one look at every queue */
            searchers++;
            found = (QUEUED > 0);
            searchers--;
            if
            :: found -> searching = 1
            :: else ->
                searching = 0;
                /* park */
                lock();
                running--;
                idle[me] = 1;
                idleCount++;
#ifndef MUTANT_STORE_AFTER_UNLOCK
                parker[me] = 0;
#endif
#ifndef MUTANT_NO_RECHECK
                if
                :: running < LIMIT && QUEUED > 0 ->
                    idle[me] = 0;
                    idleCount--;
                    running++;
                    unlock();
                    goto searched
                :: else
                fi;
#endif
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
                :: parker[me] == 1    /* woken: the waker gave it a slot */
                :: else -> idle[me] = 0; idleCount--; running++
                fi;
                unlock();
searched:
                skip
            fi
        fi
    od
}

init {
    byte k = 0;
    atomic {
        do
        :: k < NWORKERS -> run Worker(k); k++
        :: else -> break
        od;
        run Producer(INJECT)
    };
    (ran == TOTAL && submitted == TOTAL)
}

ltl progress { <> (ran == TOTAL && submitted == TOTAL) }
