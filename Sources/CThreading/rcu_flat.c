// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

#define _GNU_SOURCE
#include "rcu_internal.h"

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cthr_atomic.h"
#include "cthr_lock.h"
#include "cthr_rcu.h"
#include "cthr_thread.h"

// The largest initial capacity cthr_rcu_flat_create accepts, as for cthr_rcu_map_create (two slots per key: 2^30).
#define FLAT_CAPACITY_MAX (1ul << 29)
#define FLAT_SLOTS_MAX (1ul << 30)
#define FLAT_SLOTS_MIN 16ul

// One array in one allocation: this header, then the control bytes, then the slots, each 64-byte aligned.
struct flat_array {
    cthr_rcu_flat_array_t head;
    struct rcu_head rcu;
};

// Control byte of a slot a writer has claimed for a new key but not yet filled (probes go on past it).
#define FLAT_BUSY 2u
#define FLAT_STRIPES 64u

// A writer lock and the flag its holder raises while it changes the current array (see `enter`).
struct flat_stripe {
    _Alignas(64) cthr_lock_t lock;
    cthr_atomic_u32_t active;
};

// The map: the read-side part on its own cache line (written only when an array is replaced), the rebuild state on
// another (read by every write, written by rebuilds), the counters on a third, then the stripes.
struct flat_map {
    cthr_rcu_flat_t head;
    // 1 while a rebuild copies the array: writers stay out of it (see `enter`).
    _Alignas(64) cthr_atomic_u32_t rebuilding;
    // Serialises rebuilds.
    cthr_lock_t rebuild_lock;
    // Slots of the current array that are not EMPTY (keys, tombstones, claims), reserved before each claim.
    _Alignas(64) cthr_atomic_u64_t used;
    // Live keys.
    cthr_atomic_i64_t count;
    struct rcu_head rcu;
    struct flat_stripe stripes[FLAT_STRIPES];
};

_Static_assert(offsetof(struct flat_map, head) == 0, "the public part comes first");
_Static_assert(offsetof(struct flat_array, head) == 0, "the public part comes first");

static inline struct flat_map *impl(cthr_rcu_flat_t *map) { return (struct flat_map *)map; }

static inline size_t round64(size_t size) { return (size + 63) & ~(size_t)63; }

static inline uint8_t tag_of(uint64_t hash) { return (uint8_t)(CTHR_RCU_FLAT_FULL | (hash >> 57)); }

// The smallest power-of-two slot count, at least 16, that keeps `keys` at no more than a `1/share` of it.
static uint64_t slots_for(uint64_t keys, uint64_t share) {
    uint64_t slots = FLAT_SLOTS_MIN;
    while (slots < keys * share && slots < FLAT_SLOTS_MAX) slots <<= 1;
    return slots;
}

// A new array of `slots` slots (a power of two), every control byte EMPTY. NULL when out of memory.
static struct flat_array *array_new(uint64_t slots) {
    size_t header = round64(sizeof(struct flat_array));
    size_t control = round64((size_t)slots);
    struct flat_array *array = aligned_alloc(64, header + control + (size_t)slots * sizeof(cthr_rcu_flat_slot_t));
    if (array == NULL) return NULL;
    array->head.mask = slots - 1;
    array->head.control = (cthr_atomic_u8_t *)((uint8_t *)array + header);
    array->head.slots = (cthr_rcu_flat_slot_t *)(array->head.control + control);
    memset(array->head.control, CTHR_RCU_FLAT_EMPTY, (size_t)slots);
    return array;
}

// Probes `array` for `key`: returns 1 and its slot in *index when present, else 0 and the first EMPTY slot of its
// probe run (where an insertion starts looking for a slot to claim: tombstones are never reused) in *index. The
// caller holds the key's stripe, so no other writer adds or removes `key` meanwhile.
static int probe(const cthr_rcu_flat_array_t *array, uint64_t key, uint64_t hash, uint64_t *index) {
    uint8_t tag = tag_of(hash);
    for (uint64_t at = hash & array->mask;; at = (at + 1) & array->mask) {
        uint8_t control = cthr_atomic_u8_load(&array->control[at], CTHR_ACQUIRE);
        if (control == tag && cthr_atomic_u64_load(&array->slots[at].key, CTHR_RELAXED) == key) {
            *index = at;
            return 1;
        }
        if (control == CTHR_RCU_FLAT_EMPTY) {
            *index = at;
            return 0;
        }
    }
}

// Fills slot `index` and then publishes it (release: a reader that sees the control byte sees the key and value).
static void publish(const cthr_rcu_flat_array_t *array, uint64_t index, uint64_t key, uint64_t value, uint64_t hash) {
    cthr_atomic_u64_store(&array->slots[index].key, key, CTHR_RELAXED);
    cthr_atomic_u64_store(&array->slots[index].value, value, CTHR_RELAXED);
    cthr_atomic_u8_store(&array->control[index], tag_of(hash), CTHR_RELEASE);
}

static void array_reclaim(struct rcu_head *head) {
    struct flat_array *array = caa_container_of(head, struct flat_array, rcu);
    CTHR_TSAN_ACQUIRE(array);
    CTHR_TSAN_ACQUIRE(&cthr_rcu_tsan_grace_period);
    free(array);
    CTHR_TSAN_RELEASE(&cthr_rcu_tsan_callbacks_done);
}

static inline struct flat_stripe *stripe_of(struct flat_map *map, uint64_t hash) {
    return &map->stripes[(hash >> 40) & (FLAT_STRIPES - 1)];
}

// Raises the stripe's `active` flag outside any rebuild and returns the current array, which no rebuild replaces
// until `leave`. The pairing with `rebuild` is Dekker's: a writer stores `active` and then loads `rebuilding`, a
// rebuilder stores `rebuilding` and then loads every `active`, all sequentially consistent, so either the writer
// sees the rebuild and waits for its end, or the rebuilder sees the writer and waits for it to leave.
static const cthr_rcu_flat_array_t *enter(struct flat_map *map, struct flat_stripe *stripe) {
    for (;;) {
        cthr_atomic_u32_store(&stripe->active, 1, CTHR_SEQ_CST);
        if (!cthr_atomic_u32_load(&map->rebuilding, CTHR_SEQ_CST)) {
            return cthr_atomic_ptr_load(&map->head.array, CTHR_ACQUIRE);
        }
        cthr_atomic_u32_store(&stripe->active, 0, CTHR_RELEASE);
        while (cthr_atomic_u32_load(&map->rebuilding, CTHR_ACQUIRE)) (void)cthr_thread_yield();
    }
}

static inline void leave(struct flat_stripe *stripe) { cthr_atomic_u32_store(&stripe->active, 0, CTHR_RELEASE); }

// Replaces `seen` (unless another rebuild already did) with a new array holding the live keys, four slots per key,
// and retires it. Called by a writer that may hold a stripe but is not inside `enter`. Returns 0, or ENOMEM when no
// new array could be made, or none would help (at the size limit with no tombstone); nothing changes then.
static int rebuild(struct flat_map *map, const cthr_rcu_flat_array_t *seen) {
    (void)cthr_rcu_writer_lock(&map->rebuild_lock);
    const cthr_rcu_flat_array_t *old = cthr_atomic_ptr_load(&map->head.array, CTHR_RELAXED);
    struct flat_array *retired = NULL;
    int rc = 0;
    if (old == seen) {
        cthr_atomic_u32_store(&map->rebuilding, 1, CTHR_SEQ_CST);
        for (unsigned i = 0; i < FLAT_STRIPES; i++) {
            while (cthr_atomic_u32_load(&map->stripes[i].active, CTHR_SEQ_CST)) (void)cthr_thread_yield();
        }
        // No writer is inside the array: no claim is half done, and the counters are exact.
        long count = cthr_atomic_i64_load(&map->count, CTHR_RELAXED);
        uint64_t used = cthr_atomic_u64_load(&map->used, CTHR_RELAXED);
        struct flat_array *fresh = NULL;
        if (old->mask + 1 < FLAT_SLOTS_MAX || used > (uint64_t)count) {
            fresh = array_new(slots_for((uint64_t)count + 1, 4));
        }
        if (fresh == NULL) {
            rc = ENOMEM;
        } else {
            for (uint64_t at = 0; at <= old->mask; at++) {
                if (!(cthr_atomic_u8_load(&old->control[at], CTHR_RELAXED) & CTHR_RCU_FLAT_FULL)) continue;
                uint64_t key = cthr_atomic_u64_load(&old->slots[at].key, CTHR_RELAXED);
                uint64_t value = cthr_atomic_u64_load(&old->slots[at].value, CTHR_RELAXED);
                uint64_t hash = cthr_rcu_flat_hash(&map->head, key);
                uint64_t index;
                (void)probe(&fresh->head, key, hash, &index);
                publish(&fresh->head, index, key, value, hash);
            }
            cthr_atomic_ptr_store(&map->head.array, &fresh->head, CTHR_RELEASE);
            cthr_atomic_u64_store(&map->used, (uint64_t)count, CTHR_RELAXED);
            retired = caa_container_of(old, struct flat_array, head);
        }
        cthr_atomic_u32_store(&map->rebuilding, 0, CTHR_RELEASE);
    }
    (void)cthr_rcu_writer_unlock(&map->rebuild_lock);
    if (retired != NULL) {
        CTHR_TSAN_RELEASE(retired);
        (void)cthr_rcu_ensure_registered_inline();
        urcu_memb_call_rcu(&retired->rcu, array_reclaim);
    }
    return rc;
}

int cthr_rcu_flat_create(size_t initial_capacity, uint64_t seed, uint64_t multiplier, cthr_rcu_flat_t **out) {
    if (out == NULL || initial_capacity > FLAT_CAPACITY_MAX) return EINVAL;
    CTHR_RCU_REFUSE_IN_READ_ONLY_CHILD();
    struct flat_map *map = aligned_alloc(64, sizeof *map);
    if (map == NULL) return ENOMEM;
    struct flat_array *array = array_new(slots_for(initial_capacity, 2));
    if (array == NULL) {
        free(map);
        return ENOMEM;
    }
    cthr_atomic_ptr_init(&map->head.array, &array->head);
    map->head.seed = seed;
    map->head.multiplier = multiplier | 1;
    cthr_atomic_u32_init(&map->rebuilding, 0);
    (void)cthr_lock_init(&map->rebuild_lock);
    cthr_atomic_u64_init(&map->used, 0);
    cthr_atomic_i64_init(&map->count, 0);
    for (unsigned i = 0; i < FLAT_STRIPES; i++) {
        (void)cthr_lock_init(&map->stripes[i].lock);
        cthr_atomic_u32_init(&map->stripes[i].active, 0);
    }
    *out = &map->head;
    return 0;
}

static void map_reclaim(struct rcu_head *head) {
    struct flat_map *map = caa_container_of(head, struct flat_map, rcu);
    CTHR_TSAN_ACQUIRE(map);
    CTHR_TSAN_ACQUIRE(&cthr_rcu_tsan_grace_period);
    cthr_rcu_flat_array_t *last = cthr_atomic_ptr_load(&map->head.array, CTHR_RELAXED);
    free(caa_container_of(last, struct flat_array, head));
    free(map);
    CTHR_TSAN_RELEASE(&cthr_rcu_tsan_callbacks_done);
}

int cthr_rcu_flat_destroy(cthr_rcu_flat_t *map) {
    if (map == NULL) return EINVAL;
    if (cthr_rcu_read_only_child) return 0;
    struct flat_map *flat = impl(map);
    CTHR_TSAN_RELEASE(flat);
    (void)cthr_rcu_ensure_registered_inline();
    urcu_memb_call_rcu(&flat->rcu, map_reclaim);
    return 0;
}

long cthr_rcu_flat_count(const cthr_rcu_flat_t *map) {
    if (map == NULL) return 0;
    return cthr_atomic_i64_load(&((const struct flat_map *)map)->count, CTHR_RELAXED);
}

// The stripe of `key`; its hash goes to *hash.
static inline struct flat_stripe *key_stripe(struct flat_map *map, uint64_t key, uint64_t *hash) {
    *hash = cthr_rcu_flat_hash(&map->head, key);
    return stripe_of(map, *hash);
}

// Takes the stripe of `key` for a write: the stripe goes to *stripe and the key's hash to *hash. Returns 0, EDEADLK,
// or ENOTRECOVERABLE in a read-only forked child.
static int lock_key(struct flat_map *map, uint64_t key, uint64_t *hash, struct flat_stripe **stripe) {
    CTHR_RCU_REFUSE_IN_READ_ONLY_CHILD();
    *stripe = key_stripe(map, key, hash);
    return cthr_rcu_writer_lock(&(*stripe)->lock);
}

int cthr_rcu_flat_lock(cthr_rcu_flat_t *map, uint64_t key) {
    if (map == NULL) return EINVAL;
    uint64_t hash;
    struct flat_stripe *stripe;
    return lock_key(impl(map), key, &hash, &stripe);
}

int cthr_rcu_flat_unlock(cthr_rcu_flat_t *map, uint64_t key) {
    if (map == NULL) return EINVAL;
    uint64_t hash;
    return cthr_rcu_writer_unlock(&key_stripe(impl(map), key, &hash)->lock);
}

// Reserves a slot for a claim unless that would make more than `limit` slots used. Returns whether it did.
static int reserve(struct flat_map *map, uint64_t limit) {
    if (cthr_atomic_u64_fetch_add(&map->used, 1, CTHR_RELAXED) + 1 <= limit) return 1;
    (void)cthr_atomic_u64_fetch_sub(&map->used, 1, CTHR_RELAXED);
    return 0;
}

// cthr_rcu_flat_set for a caller holding `stripe`, the stripe of `key` (whose hash is `hash`).
static int set_held(struct flat_map *map, struct flat_stripe *stripe, uint64_t key, uint64_t hash, uint64_t value) {
    int out_of_memory = 0;
    for (;;) {
        const cthr_rcu_flat_array_t *array = enter(map, stripe);
        uint64_t index;
        if (probe(array, key, hash, &index)) {
            cthr_atomic_u64_store(&array->slots[index].value, value, CTHR_RELEASE);
            leave(stripe);
            return 0;
        }
        // A new key: reserve a slot while at most half of them are used (three quarters once a rebuild failed, so
        // that probes still end soon at an EMPTY slot); past that, rebuild first.
        uint64_t slots = array->mask + 1;
        if (!reserve(map, out_of_memory ? slots / 4 * 3 : slots / 2)) {
            leave(stripe);
            if (out_of_memory) return ENOMEM;
            if (rebuild(map, array) == ENOMEM) out_of_memory = 1;
            continue;
        }
        // Claim the first EMPTY slot from the end of the key's probe run (a writer of another key may claim one
        // first; the reservation guarantees one is left).
        for (;; index = (index + 1) & array->mask) {
            uint8_t expected = CTHR_RCU_FLAT_EMPTY;
            if (cthr_atomic_u8_load(&array->control[index], CTHR_RELAXED) == CTHR_RCU_FLAT_EMPTY &&
                cthr_atomic_u8_compare_exchange_strong(&array->control[index], &expected, FLAT_BUSY, CTHR_RELAXED,
                                                       CTHR_RELAXED)) {
                break;
            }
        }
        publish(array, index, key, value, hash);
        (void)cthr_atomic_i64_fetch_add(&map->count, 1, CTHR_RELAXED);
        leave(stripe);
        return 0;
    }
}

// cthr_rcu_flat_remove for a caller holding `stripe`, the stripe of `key` (whose hash is `hash`).
static int remove_held(struct flat_map *map, struct flat_stripe *stripe, uint64_t key, uint64_t hash, uint64_t *old) {
    const cthr_rcu_flat_array_t *array = enter(map, stripe);
    uint64_t index;
    int rc = ENOENT;
    if (probe(array, key, hash, &index)) {
        if (old != NULL) *old = cthr_atomic_u64_load(&array->slots[index].value, CTHR_RELAXED);
        cthr_atomic_u8_store(&array->control[index], CTHR_RCU_FLAT_DELETED, CTHR_RELEASE);
        (void)cthr_atomic_i64_fetch_sub(&map->count, 1, CTHR_RELAXED);
        rc = 0;
    }
    leave(stripe);
    return rc;
}

// The stripe of `key` if the calling thread holds it, else NULL; the key's hash goes to *hash.
static struct flat_stripe *held_stripe(struct flat_map *map, uint64_t key, uint64_t *hash) {
    struct flat_stripe *stripe = key_stripe(map, key, hash);
    return cthr_lock_owner(&stripe->lock) == cthr_lock_self() ? stripe : NULL;
}

// One write of `key` under its stripe's writer lock: a set of `value`, or (`remove`) a removal that reports the old
// value in *old. The lock is taken and released here (`take`), or must be held by the caller (else EPERM).
static int write_key(cthr_rcu_flat_t *map, uint64_t key, bool take, bool remove, uint64_t value, uint64_t *old) {
    if (map == NULL) return EINVAL;
    uint64_t hash;
    struct flat_stripe *stripe;
    if (take) {
        int rc = lock_key(impl(map), key, &hash, &stripe);
        if (rc != 0) return rc;
    } else if ((stripe = held_stripe(impl(map), key, &hash)) == NULL) {
        return EPERM;
    }
    int rc = remove ? remove_held(impl(map), stripe, key, hash, old) : set_held(impl(map), stripe, key, hash, value);
    if (take) (void)cthr_rcu_writer_unlock(&stripe->lock);
    return rc;
}

int cthr_rcu_flat_set_locked(cthr_rcu_flat_t *map, uint64_t key, uint64_t value) {
    return write_key(map, key, false, false, value, NULL);
}

int cthr_rcu_flat_remove_locked(cthr_rcu_flat_t *map, uint64_t key, uint64_t *old) {
    return write_key(map, key, false, true, 0, old);
}

int cthr_rcu_flat_set(cthr_rcu_flat_t *map, uint64_t key, uint64_t value) {
    return write_key(map, key, true, false, value, NULL);
}

int cthr_rcu_flat_remove(cthr_rcu_flat_t *map, uint64_t key, uint64_t *old) {
    return write_key(map, key, true, true, 0, old);
}
