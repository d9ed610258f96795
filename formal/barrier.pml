/* SPDX-License-Identifier: MIT */
/* SPDX-FileCopyrightText: 2026 The Threading authors */

/*
 * The concurrent queue's barrier grant with striped readers: Sources/Threading/Queues/Cores/ConcurrentCore.swift
 * (states of QueueState in QueueCore.swift: owned, hasItems, draining, readers in bits 8...).
 *
 * Modelled steps (a queue with striped readers: no width limit, no target; not suspended):
 *   Reader r (sync, NREADERS of them, stripe r):
 *       acquireSync -> enterStriped: seq_cst add 1 to the stripe; seq_cst load of the word; inside when neither
 *       owned nor hasItems, else leaveStriped and tryReadFast (CAS readers + 1 when neither owned nor hasItems),
 *       else the slow path: under the queue lock, items.append(.syncWaiter), bitOr hasItems, pumpLocked; wait for
 *       the grant (grantWaiter; the parker itself is formal/parker.pml).
 *       Release: leaveStriped (seq_cst subtract 1, seq_cst load of the word, pump() when draining) or releaseRead
 *       (readers - 1, pump() when hasItems was set).
 *   Barrier B1 (sync, barrier: true): tryBarrierFast: stripesBusy (one seq_cst load per stripe), CAS 0 -> owned,
 *       stripesBusy again (busy: releaseBarrier and fail); else the slow path as above. Release: releaseBarrier
 *       (bitAnd ~owned, pump() when hasItems was set).
 *   Barrier B2 (async; present when NASYNC = 1): enqueue: under the lock items.append, bitOr hasItems,
 *       pumpLocked; a pool worker runs it when started (runStarted), then releaseBarrier.
 *   pumpLocked (queue lock held): when draining, startDrainedBarrier first (return when the stripes are busy); then
 *       from the FIFO's head: a barrier needs neither owned nor readers, a reader needs no owned; CAS the word; pop;
 *       clear hasItems when empty; a barrier becomes drainingItem, bitOr draining (seq_cst), startDrainedBarrier
 *       (stripesBusy, else clear draining and start it), return; others start. start: a sync waiter is granted, an
 *       async item goes to the pool.
 * Each word operation is one atomic step (a load followed by a CAS that retries on failure is the CAS's step);
 * the stripe add, the word load and each stripe load are separate steps: the Dekker pairing of the comment at the
 * top of ConcurrentCore.swift. Not modelled: offerHelp/pendingBarrier (formal/parker.pml), barrier chaining
 * (takeChainedBarrier), suspension, width limits.
 *
 * Properties: exclusivity (a barrier never runs beside a reader or another barrier: assertions); the documented
 * order: work that arrives after a barrier was queued (its first step comes after the barrier's hasItems) runs
 * after that barrier finished, and the FIFO starts items in order (a barrier starts only when every item queued
 * before it has finished); progress: no invalid end state, LTL `progress` (everything finishes) under weak fairness.
 *
 * Variants (-D):
 *   MUTANT_NO_RECHECK      tryBarrierFast without its second stripesBusy: must fail (a striped reader that came in
 *                          between the first check and the CAS runs beside the barrier)
 *   MUTANT_LEAVE_NO_PUMP   leaveStriped does not pump when draining: must fail (the parked barrier never starts)
 *   MUTANT_IGNORE_ITEMS    enterStriped enters when only hasItems is set: must fail (a reader overtakes a queued
 *                          barrier)
 */

#ifndef NREADERS
#define NREADERS 1
#endif
#ifndef NASYNC
#define NASYNC 1
#endif

/* item ids: 1..NREADERS readers' sync waiters, B1 = the sync barrier, B2 = the async barrier */
#define B1 (NREADERS + 1)
#define B2 (NREADERS + 2)
#define IS_BARRIER(id) ((id) > NREADERS)

/* the word */
bit owned = 0;
bit has_items = 0;
bit draining = 0;
byte readers = 0;

byte stripe[NREADERS];
bit qlock = 0;
chan fifo = [4] of { byte };
byte draining_item = 0;
chan pool = [2] of { byte };
bit granted[B2 + 1];

/* what runs, for the properties */
byte running_readers = 0;
byte running_barriers = 0;
bit queued[B2 + 1];      /* barrier id is in the FIFO (its hasItems was published) */
bit finished[B2 + 1];
byte done = 0;

inline lock() { atomic { !qlock -> qlock = 1 } }
inline unlock() { qlock = 0 }

/* start(item): grant a sync waiter, submit an async item to the pool */
inline start(id) {
    if
    :: id == B2 -> pool!id
    :: else -> granted[id] = 1
    fi
}

/* stripesBusy(): one seq_cst load per stripe */
inline stripes_busy() {
    busy = 0;
    k = 0;
    do
    :: k < NREADERS ->
        if
        :: stripe[k] != 0 -> busy = 1; break
        :: else -> k++
        fi
    :: else -> break
    od
}

/* startDrainedBarrier(), queue lock held: `started` tells whether it started (or nothing was left) */
inline start_drained() {
    stripes_busy();
    if
    :: busy -> started = 0
    :: else ->
        draining = 0;
        started = 1;
        if
        :: draining_item != 0 -> item = draining_item; draining_item = 0; start(item)
        :: else
        fi
    fi
}

/* pumpLocked(), queue lock held */
inline pump_locked() {
    started = 1;
    if
    :: draining -> start_drained()
    :: else
    fi;
    if
    :: started ->
        do
        :: nempty(fifo) ->
            fifo?<item>;  /* items.first */
            if
            :: IS_BARRIER(item) ->
                atomic {
                    if
                    :: owned || readers != 0 -> ok = 0
                    :: else -> owned = 1; ok = 1
                    fi
                }
            :: else ->
                atomic {
                    if
                    :: owned -> ok = 0
                    :: else -> readers++; ok = 1
                    fi
                }
            fi;
            if
            :: !ok -> break
            :: else
            fi;
            atomic {
                fifo?item;  /* popFirst; clear hasItems when empty */
                if
                :: empty(fifo) -> has_items = 0
                :: else
                fi
            };
            if
            :: IS_BARRIER(item) ->
                draining_item = item;
                draining = 1;
                start_drained();
                break
            :: else -> start(item)
            fi
        :: empty(fifo) -> break
        od
    :: else
    fi
}

inline pump() {
    lock();
    pump_locked();
    unlock()
}

/* releaseBarrier() */
inline release_barrier() {
    atomic { had = has_items; owned = 0 };
    if
    :: had -> pump()
    :: else
    fi
}

/* the slow path of acquireSync: queue behind the FIFO, pump, wait for the grant */
inline slow_path(id) {
    lock();
    atomic { fifo!id; has_items = 1; queued[id] = IS_BARRIER(id) };
    pump_locked();
    unlock();
    granted[id]
}

proctype Reader(byte r) {
    byte item, k;
    bit busy, started, ok, had, striped;
    bit after[2];
    /* the read arrives: its first step; what was queued before it must finish before it runs */
    atomic {
        stripe[r]++;
        after[0] = queued[B1] && !finished[B1];
        after[1] = queued[B2] && !finished[B2]
    };
    /* enterStriped: seq_cst load of the word */
#ifdef MUTANT_IGNORE_ITEMS
    if
    :: !owned -> striped = 1
#else
    if
    :: !owned && !has_items -> striped = 1
#endif
    :: else ->
        striped = 0;
        /* leaveStriped */
        stripe[r]--;
        if
        :: draining -> pump()
        :: else
        fi;
        /* tryReadFast, else the slow path */
        atomic {
            if
            :: !owned && !has_items -> readers++; ok = 1
            :: else -> ok = 0
            fi
        };
        if
        :: !ok -> slow_path(r + 1)
        :: else
        fi
    fi;
    /* the read runs */
    atomic {
        running_readers++;
        assert(running_barriers == 0);
        assert(!after[0] || finished[B1]);
        assert(!after[1] || finished[B2])
    };
    running_readers--;
    if
    :: striped ->
        /* leaveStriped */
        stripe[r]--;
#ifndef MUTANT_LEAVE_NO_PUMP
        if
        :: draining -> pump()
        :: else
        fi
#endif
    :: else ->
        /* releaseRead */
        atomic { had = has_items; readers-- };
        if
        :: had -> pump()
        :: else
        fi
    fi;
    done++
}

/* The sync barrier: tryBarrierFast, else the slow path. */
proctype SyncBarrier() {
    byte item, k;
    bit busy, started, ok, had, after_b2;
    after_b2 = queued[B2] && !finished[B2];  /* its first step: was B2 queued before it arrived? */
    stripes_busy();
    if
    :: busy -> ok = 0
    :: else ->
        atomic {
            if
            :: !owned && !has_items && !draining && readers == 0 -> owned = 1; ok = 1
            :: else -> ok = 0
            fi
        };
#ifndef MUTANT_NO_RECHECK
        if
        :: ok ->
            stripes_busy();
            if
            :: busy -> release_barrier(); ok = 0
            :: else
            fi
        :: else
        fi
#endif
    fi;
    if
    :: !ok -> slow_path(B1)
    :: else
    fi;
    /* the barrier runs alone */
    atomic {
        running_barriers++;
        assert(running_barriers == 1 && running_readers == 0);
        assert(!after_b2 || finished[B2])
    };
    atomic { running_barriers--; finished[B1] = 1 };
    release_barrier();
    done++
}

/* The async barrier: enqueue under the lock; a pool worker runs it. */
bit after_b1 = 0;  /* B2 was queued while B1 was in the FIFO */

proctype AsyncBarrier() {
    byte item, k;
    bit busy, started, ok, had;
    lock();
    atomic { fifo!B2; has_items = 1; queued[B2] = 1; after_b1 = queued[B1] && !finished[B1] };
    pump_locked();
    unlock();
    done++
}

proctype Pool() {
    byte item, k;
    bit busy, started, ok, had;
end:
    pool?item;
    /* runStarted: the barrier runs alone */
    atomic {
        running_barriers++;
        assert(running_barriers == 1 && running_readers == 0);
        assert(!after_b1 || finished[B1])
    };
    atomic { running_barriers--; finished[B2] = 1 };
    release_barrier();
    done++
}

init {
    byte i = 0;
    atomic {
        do
        :: i < NREADERS -> run Reader(i); i++
        :: else -> break
        od;
        run SyncBarrier();
#if NASYNC
        run AsyncBarrier();
        run Pool()
#endif
    }
}

ltl progress { <> (done == NREADERS + 1 + 2 * NASYNC) }
