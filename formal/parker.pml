/* SPDX-License-Identifier: MIT */
/* SPDX-FileCopyrightText: 2026 The Threading authors */

/*
 * The worker pools's parker: a thread waiting in a queue for its grant, with help offers.
 * Sources/Threading/Queues/Cores/SyncParker.swift (waitGranted, help, helpGranted, prepareWait, grantWaiter,
 * offerHelpToWaiter) as driven by Sources/Threading/Queues/Cores/ConcurrentCore.swift (acquireSync, pumpLocked, start,
 * offerHelp, pendingBarrier).
 *
 * Parker states (the raw values of Parker.State): 0 = waiting (awake), 2 = sleeping (asleep on the futex),
 * 1 = granted, 3 = helpOffered, 4 = grantedWithHelp (granted with an offered item still to run). helpItem is the slot of the offered item (0 = nil).
 *
 * Modelled steps:
 *   Waiter   acquireSync: under the queue lock prepareWait (store 0) and queue itself behind NITEMS async barriers;
 *            waitGranted: SPIN_ROUNDS spin rounds (load: 1 return, 4 helpGranted and return, 3 help), then the
 *            blocking loop (the same, and in state 0 CAS 0 -> 2, then futex wait while the word is 2).
 *            help: read and clear helpItem, CAS 3 -> 0, claim the item and run it if the claim succeeds.
 *            helpGranted: if helpItem is set, clear it, claim and run.
 *   Queue    pumpLocked starts barrier i (the queue is owned until it completes): start -> offerHelp ->
 *            offerHelp to the waiter when it is queued (load; only in 0 or 2: write helpItem, CAS to 3, wake
 *            if it was 2; else clear helpItem and retry); the barrier is left claimable (pendingBarrier), and when
 *            no offer was taken it goes to the pool. After the last barrier completes, start(.syncWaiter) ->
 *            grantWaiter (load; in 3: CAS 3 -> 4; else CAS state -> 1 and wake if it was 2).
 *   Pool     a pool worker claims each barrier submitted to it (ItemClaim) and runs it.
 *   Claimer  another thread entering `sync`, which claims a pendingBarrier and runs it, or never comes.
 * A claim is an atomic test-and-set; a futex wait compares and sleeps atomically, a wake clears the sleeper's flag.
 * Not modelled: the nested `sync` inside a running item that reuses the parker (ConcurrentCore.offerHelp explains why
 * only barriers are offered: the queue is owned while one runs, so the waiter's grant cannot arrive meanwhile; the
 * model grants only after the barriers complete).
 *
 * Variants (-D):
 *   MUTANT_NO_ANNOUNCE   the waiter sleeps without announcing it (no CAS 0 -> 2; futex wait on 0): must fail, the
 *                        grant stores 1 and wakes nobody (lost wake-up)
 *   MUTANT_OFFER_NO_WAKE offerHelp does not wake a sleeping waiter: must fail (the offered barrier waits for
 *                        a waiter that sleeps until its grant, which waits for the barrier)
 *
 * Properties: every barrier runs exactly once (assertions); help() finds its item in helpItem; the waiter returns
 * only after its grant; no lost wake-up: no invalid end state, and LTL `progress` (the waiter returns and every
 * barrier ran) under weak fairness.
 */

#ifndef NITEMS
#define NITEMS 2
#endif
#ifndef SPIN_ROUNDS
#define SPIN_ROUNDS 1
#endif

byte state = 1;              /* the waiter's parker */
byte slot = 0;               /* helpItem: 0 = nil, else the item */
bit asleep = 0;              /* the waiter sleeps on the futex */
bit queued = 0;              /* the waiter is in the queue's FIFO */
bit claimed[NITEMS + 1];
byte runs[NITEMS + 1];
bit completed[NITEMS + 1];
bit to_pool[NITEMS + 1];     /* submitted to the pool (claimedBarrier) */
bit claimable[NITEMS + 1];   /* pendingBarrier */
bit granted = 0;
bit returned = 0;

/* ItemClaim.claim() and, when it succeeds, runStarted: run, then release the barrier. */
inline claim_and_run(item) {
    atomic {
        if
        :: !claimed[item] -> claimed[item] = 1; won = 1
        :: else -> won = 0
        fi
    };
    if
    :: won ->
        atomic { runs[item]++; assert(runs[item] == 1) };
        completed[item] = 1
    :: else
    fi
}

/* help(): read and clear the slot, leave state 3, claim and run. */
inline help() {
    offered = slot;
    assert(offered != 0);
    slot = 0;
    atomic {
        if
        :: state == 3 -> state = 0
        :: else
        fi
    };
    claim_and_run(offered)
}

/* helpGranted(): the offered item is still ours unless help() took it. */
inline help_granted() {
    if
    :: slot != 0 ->
        offered = slot;
        slot = 0;
        claim_and_run(offered)
    :: else
    fi
}

proctype Waiter() {
    byte s;
    byte offered;
    byte round = 0;
    bit won;
    bit ok;
    /* acquireSync, under the queue lock: prepareWait, then items.append(.syncWaiter) */
    atomic { state = 0; queued = 1 };
    /* waitGranted: the spin rounds */
    do
    :: round < SPIN_ROUNDS ->
        s = state;
        if
        :: s == 1 -> goto out
        :: s == 4 -> help_granted(); goto out
        :: s == 3 -> help()
        :: else
        fi;
        round++
    :: else -> break
    od;
    /* the blocking loop */
    do
    :: s = state;
        if
        :: s == 1 -> break
        :: s == 4 -> help_granted(); break
        :: s == 3 -> help()
        :: else ->
#ifdef MUTANT_NO_ANNOUNCE
            ok = 1;
#else
            if
            :: s == 0 ->
                atomic {
                    if
                    :: state == 0 -> state = 2; ok = 1
                    :: else -> ok = 0
                    fi
                };
                s = 2
            :: else -> ok = 1
            fi;
#endif
            if
            :: ok ->
                /* parker.wait(expected: s): compares and sleeps atomically */
                atomic {
                    if
                    :: state == s -> asleep = 1
                    :: else
                    fi
                };
                !asleep
            :: else
            fi
        fi
    od;
out:
    assert(granted);
    returned = 1
}

proctype Queue() {
    byte i = 1;
    byte s;
    bit ok;
    bit taken;
    do
    :: i <= NITEMS ->
        /* pumpLocked starts barrier i; start -> offerHelp: offerHelp to the waiter if it is queued */
        taken = 0;
        if
        :: queued ->
            do
            :: s = state;
                if
                :: s != 0 && s != 2 -> break
                :: else ->
                    slot = i;
                    atomic {
                        if
                        :: state == s -> state = 3; ok = 1
                        :: else -> ok = 0
                        fi
                    };
                    if
                    :: ok ->
#ifndef MUTANT_OFFER_NO_WAKE
                        if
                        :: s == 2 -> asleep = 0
                        :: else
                        fi;
#endif
                        taken = 1;
                        break
                    :: else -> slot = 0
                    fi
                fi
            od
        :: else
        fi;
        if
        :: taken -> claimable[i] = 1                    /* pendingBarrier = offered */
        :: else -> claimable[i] = 1; to_pool[i] = 1      /* pendingBarrier, PoolCore.submit(.claimedBarrier) */
        fi;
        /* the barrier owns the queue until it completes (releaseBarrier -> pump) */
        completed[i];
        i++
    :: else -> break
    od;
    /* the waiter's turn (it is in the FIFO behind the barriers): start(.syncWaiter) -> grantWaiter */
    queued;
    granted = 1;
    do
    :: s = state;
        if
        :: s == 3 ->
            atomic {
                if
                :: state == 3 -> state = 4; ok = 1
                :: else -> ok = 0
                fi
            };
            if
            :: ok -> break
            :: else
            fi
        :: else ->
            atomic {
                if
                :: state == s -> state = 1; ok = 1
                :: else -> ok = 0
                fi
            };
            if
            :: ok ->
                if
                :: s == 2 -> asleep = 0
                :: else
                fi;
                break
            :: else
            fi
        fi
    od
}

proctype Pool() {
    byte i = 1;
    bit won;
    do
    :: i <= NITEMS ->
        if
        :: to_pool[i] -> claim_and_run(i)
        :: completed[i]
        fi;
        i++
    :: else -> break
    od
}

proctype Claimer() {
    byte i = 1;
    bit won;
    do
    :: i <= NITEMS ->
        if
        :: claimable[i] -> claim_and_run(i)
        :: completed[i]
        :: true -> break   /* no further `sync` caller comes */
        fi;
        i++
    :: else -> break
    od
}

init {
    byte i = 1;
    atomic {
        run Waiter();
        run Queue();
        run Pool();
        run Claimer()
    };
    (returned && _nr_pr == 1);
    do
    :: i <= NITEMS -> assert(runs[i] == 1); i++
    :: else -> break
    od
}

ltl progress { <> (returned && completed[1] && completed[NITEMS]) }
