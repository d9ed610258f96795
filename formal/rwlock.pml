/* SPDX-License-Identifier: MIT */
/* SPDX-FileCopyrightText: 2026 The Threading authors */

/*
 * The reader-writer lock's bias: include/cthr_rwlock.h and Sources/CThreading/rwlock.c (the protocol is described
 * at the top of cthr_rwlock.h).
 *
 * Modelled steps (every atomic of the code is sequentially consistent; each is one step here):
 *   Reader r (NREADERS of them, stripe r; ROUNDS read sections each):
 *       cthr_rwlock_fast_rdlock / cthr_rwlock_read_attempt: load the word; when BIASED and not BLOCK: add 1 to the
 *       stripe, reload the word, inside when still BIASED and not BLOCK, else cthr_rwlock_leave_stripe and again;
 *       otherwise, when not BLOCK: CAS the word from the loaded value to count + 1 (and BIASED when another reader
 *       is counted and no writer claims); when BLOCK: wait until BLOCK clears (the read_seq sleep is not modelled:
 *       a guard that blocks until the condition holds).
 *       Unlock: cthr_rwlock_leave_stripe (subtract 1 from the stripe; when it reached 0, load the word and wake the
 *       drainer when DRAIN_WAIT is set) or the central fetch_sub; when the count it replaced was 1 and HANDOVER or
 *       DRAIN_WAIT was set, cthr_rwlock_last_reader_left: while the word reads count 0, HANDOVER and not BLOCK, a
 *       CAS sets BLOCK and clears HANDOVER (one step: a CAS loop on the whole word); then cthr_rwlock_wake_drain:
 *       fetch_and clears DRAIN_WAIT; if this thread cleared it, drain_seq + 1 and a futex wake.
 *   Writer w (NWRITERS of them, ROUNDS write sections each):
 *       cthr_rwlock_fast_wrlock: CAS the word from 0 to WRITER|BLOCK, and nothing else.
 *       cthr_rwlock_write_acquire: phase 1, the claim: CAS WRITER on, BIASED off and REBIAS on when it was set
 *       (preferring writers also BLOCK on); a claimed word is waited out (the write_seq sleep is not modelled: a
 *       guard; nor is `writers`, the cthr_lock_t that a writer finding the word claimed takes first so that only one
 *       such writer waits for the claim at a time: it only thins out who tries the claim, and formal/lock.pml checks
 *       it). Phase 2, the drain, each round: load the word; unless the stripes were already seen drained (or
 *       REBIAS is off: nothing to scan), scan them (one load per stripe), drained when every stripe reads 0; then,
 *       drained and count 0: CAS the loaded value to BLOCK on, HANDOVER and DRAIN_WAIT off: owned; drained, count
 *       not 0 and neither BLOCK nor HANDOVER: CAS HANDOVER on; otherwise the sleep step: load drain_seq, set
 *       DRAIN_WAIT with a load of the word, ready again (count 0 and the stripes drained or a scan clear), futex
 *       wait on drain_seq while it still holds the value loaded.
 *       With -DTIMEOUTS=1 a writer may give up instead of sleeping (cthr_rwlock_release_write: clear the writer's
 *       bits, restore BIASED after a revocation).
 *       Unlock: cthr_rwlock_release_write (the same).
 *       (The split wait of the Swift wrapper, cthr_rwlock_spinrdlock / cthr_rwlock_spinwrlock, then the sleeping
 *       call, is not modelled apart: it stops where a sleep step begins, holding nothing or, in the drain, the claim,
 *       and cthr_rwlock_wrlock_drain resumes the drain with the stripes to scan again: a pause between two rounds
 *       and a scan more, both within the interleavings checked here.)
 *
 * Properties: exclusion (a writer is never inside with a reader or another writer: assertions on entry); no lost
 * wake-up of the draining writer and no thread waiting forever (no invalid end state; every thread finishes);
 * preferring readers, BLOCK is only set while no reader holds the lock (so a reader waiting for another thread's
 * read hold is never stuck behind a writer: assertions where BLOCK is set).
 *
 * Variants (-D):
 *   PREFER_WRITERS=1       the claim sets BLOCK at once
 *   TIMEOUTS=1             a writer may give its claim back instead of sleeping
 *   MUTANT_NO_RECHECK      a stripe reader enters without reloading the word after its increment: must fail
 *   MUTANT_NO_SCAN         a writer that revoked the bias does not scan the stripes: must fail
 *   MUTANT_KEEP_REVOKED    a writer that gives its claim back does not restore BIASED (with TIMEOUTS=1): must fail
 *                          (a stripe reader still inside while the word reads 0: a fast-path writer walks in)
 *   MUTANT_KEEP_BIAS       preferring readers, the claim leaves the bias on: must fail (a stripe reader comes in
 *                          after the writer saw the stripes drained)
 *   MUTANT_EARLY_HANDOVER  the writer sets HANDOVER before the stripes are drained: must fail (the last central
 *                          reader sets BLOCK while a stripe reader still holds the lock)
 *   MUTANT_NO_DRAIN_WAKE   a leaving stripe reader never wakes the drainer: must fail (the writer sleeps forever)
 */

#ifndef NREADERS
#define NREADERS 2
#endif
#ifndef NWRITERS
#define NWRITERS 1
#endif
#ifndef ROUNDS
#define ROUNDS 2
#endif
#ifndef PREFER_WRITERS
#define PREFER_WRITERS 0
#endif
#ifndef TIMEOUTS
#define TIMEOUTS 0
#endif

/* the word */
bit biased = 0;
bit writer = 0;
bit block = 0;
bit rebias = 0;
bit handover = 0;
bit drain_wait = 0;
byte count = 0;
/* the stripes */
byte stripe[NREADERS];
/* the drainer's futex */
byte drain_seq = 0;
bit drainer_asleep = 0;
/* observers */
byte readers_in = 0;
byte holders = 0;    /* read holds taken and not yet given back (stripe or central) */
byte writers_in = 0;
byte finished = 0;

/* cthr_rwlock_wake_drain: fetch_and clears DRAIN_WAIT; the thread that cleared it bumps drain_seq and wakes */
inline wake_drain() {
    atomic { w = drain_wait; drain_wait = 0 };
    if
    :: w -> atomic { drain_seq++; drainer_asleep = 0 }
    :: else
    fi
}

proctype Reader(byte me) {
    byte round = 0;
    bit s_biased, s_block, s_writer, ok, striped, w, h;
    byte s_count, left;
    do
    :: round < ROUNDS ->
        /* read lock */
        do
        :: atomic { s_biased = biased; s_block = block; s_writer = writer; s_count = count };
            if
            :: s_biased && !s_block ->
                stripe[me]++;
#ifdef MUTANT_NO_RECHECK
                atomic { ok = 1; holders++ };
#else
                atomic { ok = biased && !block; if :: ok -> holders++ :: else fi };
#endif
                if
                :: ok -> striped = 1; break
                :: else ->
                    /* cthr_rwlock_leave_stripe */
                    atomic { stripe[me]--; left = stripe[me] };
                    if
                    :: left == 0 -> atomic { w = drain_wait };
                        if
                        :: w -> wake_drain()
                        :: else
                        fi
                    :: else
                    fi
                fi
            :: !s_biased && !s_block ->
                /* CAS from the loaded value */
                atomic {
                    if
                    :: biased == s_biased && block == s_block && writer == s_writer && count == s_count ->
                        count++;
                        if
                        :: s_count > 0 && !s_writer -> biased = 1
                        :: else
                        fi;
                        ok = 1;
                        holders++
                    :: else -> ok = 0
                    fi
                };
                if
                :: ok -> striped = 0; break
                :: else
                fi
            :: s_block -> !block   /* wait until the writer leaves (the read_seq sleep) */
            fi
        od;
        atomic { readers_in++; assert(writers_in == 0) };
        readers_in--;
        /* unlock */
        if
        :: striped ->
            atomic { stripe[me]--; left = stripe[me]; holders-- };
#ifndef MUTANT_NO_DRAIN_WAKE
            if
            :: left == 0 -> atomic { w = drain_wait };
                if
                :: w -> wake_drain()
                :: else
                fi
            :: else
            fi
#endif
        :: else ->
            atomic { left = count; count--; w = drain_wait; h = handover; holders-- };
            if
            :: left == 1 && (w || h) ->
                /* cthr_rwlock_last_reader_left */
                atomic {
                    if
                    :: count == 0 && handover && !block ->
                        assert(PREFER_WRITERS || holders == 0);
                        block = 1; handover = 0
                    :: else
                    fi
                };
                wake_drain()
            :: else
            fi
        fi;
        round++
    :: else -> break
    od;
    finished++
}

/* cthr_rwlock_stripes_clear: a scan, one stripe load per step. */
inline stripes_clear(result) {
    result = 1;
#ifndef MUTANT_NO_SCAN
    if
    :: true ->
        i = 0;
        do
        :: i < NREADERS ->
            if
            :: stripe[i] != 0 -> result = 0; break
            :: else -> i++
            fi
        :: else -> break
        od
    :: else
    fi
#endif
}

/* cthr_rwlock_release_write */
inline release_write() {
    atomic {
        writer = 0;
        block = 0;
        handover = 0;
        drain_wait = 0;
        if
        :: rebias -> rebias = 0;
#ifndef MUTANT_KEEP_REVOKED
            biased = 1
#endif
        :: else
        fi
    }
}

proctype Writer() {
    byte round = 0;
    bit fast, ok, s_block, s_handover, d, drained_once;
    byte s_count, seq, i;
    do
    :: round < ROUNDS ->
again:
        /* cthr_rwlock_fast_wrlock: CAS 0 -> WRITER|BLOCK */
        atomic {
            if
            :: !biased && !writer && !block && !rebias && !drain_wait && count == 0 -> writer = 1; block = 1; fast = 1
            :: else -> fast = 0
            fi
        };
        if
        :: fast -> goto inside
        :: else
        fi;
        /* phase 1: the claim: revoke the bias; preferring writers, block new readers */
        atomic {
            !writer ->
            writer = 1;
            if
#ifdef MUTANT_KEEP_BIAS
            :: biased && PREFER_WRITERS -> biased = 0; rebias = 1
#else
            :: biased -> biased = 0; rebias = 1
#endif
            :: else
            fi;
            if
            :: PREFER_WRITERS -> block = 1
            :: else
            fi;
            drained_once = !rebias
        };
        /* phase 2: the drain */
        do
        :: atomic { s_count = count; s_block = block; s_handover = handover };
            if
            :: !drained_once -> stripes_clear(drained_once)
            :: else
            fi;
            if
            :: drained_once && s_count == 0 ->
                /* CAS from the loaded value: BLOCK on, HANDOVER and DRAIN_WAIT off */
                atomic {
                    if
                    :: count == s_count && block == s_block && handover == s_handover ->
                        assert(PREFER_WRITERS || holders == 0);
                        block = 1; handover = 0; drain_wait = 0; ok = 1
                    :: else -> ok = 0
                    fi
                };
                if
                :: ok -> break
                :: else
                fi
#ifdef MUTANT_EARLY_HANDOVER
            :: s_count != 0 && !s_block && !s_handover ->
#else
            :: drained_once && s_count != 0 && !s_block && !s_handover ->
#endif
                atomic {
                    if
                    :: count == s_count && block == s_block && handover == s_handover -> handover = 1
                    :: else
                    fi
                }
            :: else ->
#if TIMEOUTS
                if
                :: release_write(); goto again
                :: true
                fi;
#endif
                /* the sleep step */
                seq = drain_seq;
                atomic { drain_wait = 1; s_count = count };
                d = drained_once;
                if
                :: !d -> stripes_clear(d)
                :: else
                fi;
                if
                :: d && s_count == 0
                :: else ->
                    atomic {
                        if
                        :: drain_seq == seq -> drainer_asleep = 1
                        :: else
                        fi
                    };
                    !drainer_asleep
                fi
            fi
        od;
inside:
        atomic { writers_in++; assert(writers_in == 1 && readers_in == 0) };
        writers_in--;
        /* unlock: the fast path only when nothing else is set, else release_write: the same effect here */
        release_write();
        round++
    :: else -> break
    od;
    finished++
}

init {
    byte r;
    atomic {
        r = 0;
        do
        :: r < NREADERS -> run Reader(r); r++
        :: else -> break
        od;
        r = 0;
        do
        :: r < NWRITERS -> run Writer(); r++
        :: else -> break
        od
    };
    finished == NREADERS + NWRITERS
}
