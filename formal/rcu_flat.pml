/* SPDX-License-Identifier: MIT */
/* SPDX-FileCopyrightText: 2026 The Threading authors */

/*
 * The flat RCU table's writers against a rebuild and against readers: Sources/CThreading/rcu_flat.c and
 * include/cthr_rcu.h.
 *
 * Modelled steps:
 *   Writer (one per stripe; two stripes, one key each; the stripe lock itself is not modelled: one writer per stripe)
 *       cthr_rcu_flat_set -> set_held:
 *         enter(): seq_cst store stripe->active = 1; seq_cst load map->rebuilding; if set: store active = 0, wait
 *                  while rebuilding, retry; else acquire load map->head.array;
 *         the write into that array (publish / the release store of the value; one step);
 *         leave(): release store active = 0.
 *   Rebuilder (rebuild(), serialised by rebuild_lock, so one):
 *         seq_cst store rebuilding = 1; for each stripe wait until a seq_cst load of `active` reads 0; copy every
 *         live slot of the old array into the new one (one step per key, so a writer's store may fall between);
 *         release store map->head.array = new; store rebuilding = 0; urcu_memb_call_rcu(old) -> array_reclaim:
 *         the old array is freed after a grace period.
 *   Reader (cthr_rcu_flat_get inside a read-side section, READERS sections):
 *         rcu_read_lock; acquire load map->head.array; read the key's slot (control byte, key, value);
 *         rcu_read_unlock.
 *   Grace period: waits until every reader that was inside a read-side section when it began has left.
 *
 * Memory: every step of the Dekker pairing (active / rebuilding) is sequentially consistent, so interleavings
 * are the model, except in MUTANT_RELEASE_ACTIVE, where the writer's store of `active` is a release store that
 * sits in its store buffer (x86-TSO) while it loads `rebuilding`.
 *
 * Variants (-D):
 *   MUTANT_RELEASE_ACTIVE  enter()'s store of `active` is a plain release store (no store-load order): must fail
 *                          (a writer's update lands in the old array after it was copied: a lost update)
 *   MUTANT_NO_WAIT         rebuild() does not wait for the stripes' `active` flags: must fail (lost update)
 *   MUTANT_NO_GRACE        the old array is freed without a grace period: must fail (a reader reads freed memory)
 *   NO_RECLAIM             the old array is never freed: with the first two mutants, the failure is then the lost
 *                          update itself (the final assertion) rather than the writer touching the freed array
 *
 * Properties: no lost update (at the end the current array holds every writer's value); no reader reads an array
 * after it was freed (assertion); LTL `progress`: every process finishes, under weak fairness.
 */

#ifndef READERS
#define READERS 2
#endif

#define WRITERS 2

byte current = 0;             /* map->head.array: array 0 (old) or 1 (new) */
byte value[4];                /* value[array * 2 + key] */
bit freed[2];
bit rebuilding = 0;
bit stripe_active[WRITERS];          /* stripe->active, in memory */
bit buffered[WRITERS];        /* MUTANT_RELEASE_ACTIVE: the store active = 1 still in the writer's buffer */
bit reading[READERS];         /* reader r is inside a read-side section */
byte done = 0;
bit lost_update = 0;

proctype Writer(byte s) {
    byte array;
restart:
    /* enter(): the Dekker half of the writer */
#ifdef MUTANT_RELEASE_ACTIVE
    buffered[s] = 1;
#else
    stripe_active[s] = 1;
#endif
    if
    :: rebuilding ->
        atomic { buffered[s] = 0; stripe_active[s] = 0 };
        !rebuilding;  /* while rebuilding: yield */
        goto restart
    :: else ->
        array = current
    fi;
    /* the write: the key of this stripe gets value 1 */
    value[array * 2 + s] = 1;
    assert(!freed[array]);
    /* leave() */
    atomic { buffered[s] = 0; stripe_active[s] = 0 };
    done++
}

#ifdef MUTANT_RELEASE_ACTIVE
/* The writer's store buffer drains on its own, eventually. */
proctype Drain(byte s) {
end:
    do
    :: atomic { buffered[s] -> stripe_active[s] = 1; buffered[s] = 0 }
    od
}
#endif

proctype Rebuilder() {
    byte r;
    rebuilding = 1;
#ifndef MUTANT_NO_WAIT
    !stripe_active[0];
    !stripe_active[1];
#endif
    /* copy the live slots, one at a time */
    value[2 + 0] = value[0];
    value[2 + 1] = value[1];
    current = 1;
    rebuilding = 0;
    /* urcu_memb_call_rcu(old, array_reclaim): a grace period, then free */
#ifndef MUTANT_NO_GRACE
    r = 0;
    do
    :: r < READERS -> !reading[r]; r++   /* a reader inside since before: wait for it to leave */
    :: else -> break
    od;
#endif
#ifndef NO_RECLAIM
    freed[0] = 1;
#endif
    done++
}

proctype Reader(byte r) {
    byte array;
    byte seen;
    byte sections = 0;
    do
    :: sections < 2 ->
        reading[r] = 1;           /* rcu_read_lock */
        array = current;          /* acquire load of map->head.array */
        assert(!freed[array]);    /* cthr_rcu_flat_get reads the control byte ... */
        seen = value[array * 2 + r % WRITERS];
        assert(!freed[array]);    /* ... and the slot */
        reading[r] = 0;           /* rcu_read_unlock */
        sections++
    :: else -> break
    od;
    done++
}

init {
    atomic {
        run Writer(0);
        run Writer(1);
#ifdef MUTANT_RELEASE_ACTIVE
        run Drain(0);
        run Drain(1);
#endif
        run Rebuilder();
        run Reader(0);
#if READERS >= 2
        run Reader(1);
#endif
    }
    (done == WRITERS + 1 + READERS);
    /* no lost update: the current array holds both writers' values */
    lost_update = value[current * 2 + 0] != 1 || value[current * 2 + 1] != 1;
    assert(!lost_update)
}

ltl progress { <> (done == WRITERS + 1 + READERS) }
