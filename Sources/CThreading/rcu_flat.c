// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

#define _GNU_SOURCE
#include "rcu_internal.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cthr_lock.h"
#include "cthr_rcu.h"

// The largest initial capacity cthr_rcu_flat_create accepts, as for cthr_rcu_map_create (two slots per key: 2^30).
#define FLAT_CAPACITY_MAX (1ul << 29)
#define FLAT_SLOTS_MAX (1ul << 30)
#define FLAT_SLOTS_MIN 16ul

// One array in one allocation: this header, then the control bytes, then the slots, each 64-byte aligned.
struct flat_array {
    cthr_rcu_flat_array_t head;
    struct rcu_head rcu;
};

// The map: the read-side part on its own cache line (written only when an array is replaced), then the writer's.
struct flat_map {
    cthr_rcu_flat_t head;
    _Alignas(64) cthr_lock_t lock;
    // Slots of the current array that are not EMPTY (keys plus tombstones). Guarded by `lock`.
    uint64_t used;
    // Live keys. Written under `lock`, read anywhere (relaxed).
    long count;
    struct rcu_head rcu;
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
    array->head.control = (uint8_t *)array + header;
    array->head.slots = (cthr_rcu_flat_slot_t *)(array->head.control + control);
    memset(array->head.control, CTHR_RCU_FLAT_EMPTY, (size_t)slots);
    return array;
}

// Probes `array` for `key`: returns 1 and its slot in *index when present, else 0 and the first EMPTY slot of its
// probe run (where an insertion goes: tombstones are never reused, see the header) in *index. Writer lock held.
static int probe(const cthr_rcu_flat_array_t *array, uint64_t key, uint64_t hash, uint64_t *index) {
    uint8_t tag = tag_of(hash);
    for (uint64_t at = hash & array->mask;; at = (at + 1) & array->mask) {
        uint8_t control = __atomic_load_n(&array->control[at], __ATOMIC_RELAXED);
        if (control == tag && __atomic_load_n(&array->slots[at].key, __ATOMIC_RELAXED) == key) {
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
    __atomic_store_n(&array->slots[index].key, key, __ATOMIC_RELAXED);
    __atomic_store_n(&array->slots[index].value, value, __ATOMIC_RELAXED);
    __atomic_store_n(&array->control[index], tag_of(hash), __ATOMIC_RELEASE);
}

static void array_reclaim(struct rcu_head *head) {
    struct flat_array *array = caa_container_of(head, struct flat_array, rcu);
    CTHR_TSAN_ACQUIRE(array);
    CTHR_TSAN_ACQUIRE(&cthr_rcu_tsan_grace_period);
    free(array);
    CTHR_TSAN_RELEASE(&cthr_rcu_tsan_callbacks_done);
}

// Copies the live keys into a new array with four slots per key, publishes it and retires the old one. Writer lock
// held. Returns 0 or ENOMEM (nothing changes).
static int rehash(struct flat_map *map) {
    const cthr_rcu_flat_array_t *old = map->head.array;
    long count = __atomic_load_n(&map->count, __ATOMIC_RELAXED);
    struct flat_array *fresh = array_new(slots_for((uint64_t)count + 1, 4));
    if (fresh == NULL) return ENOMEM;
    for (uint64_t at = 0; at <= old->mask; at++) {
        if (!(__atomic_load_n(&old->control[at], __ATOMIC_RELAXED) & CTHR_RCU_FLAT_FULL)) continue;
        uint64_t key = __atomic_load_n(&old->slots[at].key, __ATOMIC_RELAXED);
        uint64_t value = __atomic_load_n(&old->slots[at].value, __ATOMIC_RELAXED);
        uint64_t hash = cthr_rcu_flat_hash(&map->head, key);
        uint64_t index;
        (void)probe(&fresh->head, key, hash, &index);
        publish(&fresh->head, index, key, value, hash);
    }
    __atomic_store_n(&map->head.array, &fresh->head, __ATOMIC_RELEASE);
    map->used = (uint64_t)count;
    struct flat_array *retired = caa_container_of(old, struct flat_array, head);
    CTHR_TSAN_RELEASE(retired);
    (void)cthr_rcu_ensure_registered_inline();
    urcu_memb_call_rcu(&retired->rcu, array_reclaim);
    return 0;
}

static inline int holds_lock(struct flat_map *map) { return cthr_lock_owner(&map->lock) == cthr_lock_self(); }

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
    map->head.array = &array->head;
    map->head.seed = seed;
    map->head.multiplier = multiplier | 1;
    (void)cthr_lock_init(&map->lock);
    map->used = 0;
    map->count = 0;
    *out = &map->head;
    return 0;
}

static void map_reclaim(struct rcu_head *head) {
    struct flat_map *map = caa_container_of(head, struct flat_map, rcu);
    CTHR_TSAN_ACQUIRE(map);
    CTHR_TSAN_ACQUIRE(&cthr_rcu_tsan_grace_period);
    free(caa_container_of(map->head.array, struct flat_array, head));
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
    return __atomic_load_n(&((const struct flat_map *)map)->count, __ATOMIC_RELAXED);
}

int cthr_rcu_flat_lock(cthr_rcu_flat_t *map) {
    if (map == NULL) return EINVAL;
    CTHR_RCU_REFUSE_IN_READ_ONLY_CHILD();
    struct flat_map *flat = impl(map);
    if (cthr_lock_fast_lock(&flat->lock)) return 0;
    return cthr_lock_lock_slow(&flat->lock, UINT64_MAX);
}

int cthr_rcu_flat_unlock(cthr_rcu_flat_t *map) {
    if (map == NULL) return EINVAL;
    struct flat_map *flat = impl(map);
    if (cthr_lock_fast_unlock(&flat->lock)) return 0;
    return cthr_lock_unlock_slow(&flat->lock);
}

// The body of cthr_rcu_flat_set_locked, for a caller known to hold the lock.
static int set_held(struct flat_map *map, uint64_t key, uint64_t value) {
    const cthr_rcu_flat_array_t *array = map->head.array;
    uint64_t hash = cthr_rcu_flat_hash(&map->head, key);
    uint64_t index;
    if (probe(array, key, hash, &index)) {
        __atomic_store_n(&array->slots[index].value, value, __ATOMIC_RELEASE);
        return 0;
    }
    uint64_t slots = array->mask + 1;
    if (map->used + 1 > slots / 2) {
        // Over half full: move to a new array, unless it could be no larger and there is no tombstone to drop. If
        // that is impossible or fails, the key still goes in while a quarter of the slots stays EMPTY, so probes
        // always end.
        long count = __atomic_load_n(&map->count, __ATOMIC_RELAXED);
        if ((slots < FLAT_SLOTS_MAX || map->used > (uint64_t)count) && rehash(map) == 0) {
            array = map->head.array;
            slots = array->mask + 1;
            (void)probe(array, key, hash, &index);
        }
        if (map->used + 1 > slots / 4 * 3) return ENOMEM;
    }
    publish(array, index, key, value, hash);
    map->used += 1;
    __atomic_store_n(&map->count, __atomic_load_n(&map->count, __ATOMIC_RELAXED) + 1, __ATOMIC_RELAXED);
    return 0;
}

// The body of cthr_rcu_flat_remove_locked, for a caller known to hold the lock.
static int remove_held(struct flat_map *map, uint64_t key, uint64_t *old) {
    const cthr_rcu_flat_array_t *array = map->head.array;
    uint64_t index;
    if (!probe(array, key, cthr_rcu_flat_hash(&map->head, key), &index)) return ENOENT;
    if (old != NULL) *old = __atomic_load_n(&array->slots[index].value, __ATOMIC_RELAXED);
    __atomic_store_n(&array->control[index], CTHR_RCU_FLAT_DELETED, __ATOMIC_RELEASE);
    __atomic_store_n(&map->count, __atomic_load_n(&map->count, __ATOMIC_RELAXED) - 1, __ATOMIC_RELAXED);
    return 0;
}

int cthr_rcu_flat_set_locked(cthr_rcu_flat_t *map, uint64_t key, uint64_t value) {
    if (map == NULL) return EINVAL;
    if (!holds_lock(impl(map))) return EPERM;
    return set_held(impl(map), key, value);
}

int cthr_rcu_flat_remove_locked(cthr_rcu_flat_t *map, uint64_t key, uint64_t *old) {
    if (map == NULL) return EINVAL;
    if (!holds_lock(impl(map))) return EPERM;
    return remove_held(impl(map), key, old);
}

int cthr_rcu_flat_set(cthr_rcu_flat_t *map, uint64_t key, uint64_t value) {
    int rc = cthr_rcu_flat_lock(map);
    if (rc != 0) return rc;
    rc = set_held(impl(map), key, value);
    (void)cthr_rcu_flat_unlock(map);
    return rc;
}

int cthr_rcu_flat_remove(cthr_rcu_flat_t *map, uint64_t key, uint64_t *old) {
    int rc = cthr_rcu_flat_lock(map);
    if (rc != 0) return rc;
    rc = remove_held(impl(map), key, old);
    (void)cthr_rcu_flat_unlock(map);
    return rc;
}
