// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

#define _GNU_SOURCE
#include "rcu_internal.h"

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <urcu/rculfhash.h>

#include "cthr_rcu.h"

_Static_assert(sizeof(cthr_rcu_map_iter_t) == sizeof(struct cds_lfht_iter), "cthr_rcu_map_iter_t mirrors cds_lfht_iter");
_Static_assert(_Alignof(cthr_rcu_map_iter_t) == _Alignof(struct cds_lfht_iter), "cthr_rcu_map_iter_t alignment");

#define CTHR_RCU_MAP_STRIPES 64u
// The largest initial capacity cthr_rcu_map_create accepts (two buckets per entry: 2^30 buckets).
#define CTHR_RCU_MAP_CAPACITY_MAX (1ul << 29)

struct cthr_rcu_map_node;

// The part of a node only writers and reclamation use, kept off the cache line lookups read. The release callback
// travels with the node so that a deferred release never touches the map, which may be gone by then.
struct cthr_rcu_map_tail {
    struct rcu_head rcu;
    struct cthr_rcu_map_node *node;
    uint64_t hash;
    cthr_rcu_map_release_t release;
    void *context;
};

// The key_count of a node that holds no key bytes (cthr_rcu_map_entry_alloc, or a key too long to count in 32 bits):
// the byte lookups treat it as a key they cannot decide on.
#define CTHR_RCU_MAP_NO_KEY_BYTES UINT32_MAX

// One entry of the table: 32 bytes that lookups read, then the inline entry (so its first bytes, typically its key,
// usually share the node's cache line), then the key's bytes if any, then the tail. Every entry is inline, so the
// header holds no entry pointer: the entry is at inline_entry.
struct cthr_rcu_map_node {
    struct cds_lfht_node lfht;
    struct cthr_rcu_map_tail *tail;
    // The byte lookups (cthr_rcu_map_find_bytes) compare these key bytes in the node itself, next to what a lookup
    // reads anyway, instead of following the caller's key object to its storage (a cache miss, and for a Swift
    // String a reference count every reader would increment).
    uint32_t key_count;
    uint32_t key_offset;  // from the start of the node
    // Storage of the inline entry (cthr_rcu_map_entry_alloc, cthr_rcu_map_entry_alloc_keyed).
    _Alignas(16) unsigned char inline_entry[];
};

_Static_assert(sizeof(struct cthr_rcu_map_node) == 32, "node header is 32 bytes");

static inline size_t round16(size_t size) { return (size + 15) & ~(size_t)15; }

// Allocates a node with `inline_size` bytes of inline entry storage, then room for `key_count` key bytes right after
// it (not rounded: they are read as bytes), then its tail. Returns NULL when out of memory or for sizes whose sum
// would overflow.
static struct cthr_rcu_map_node *node_alloc(size_t inline_size, size_t key_count) {
    // glibc's malloc returns 16-byte-aligned blocks on x86-64 and aarch64 (and is cheaper than aligned_alloc).
    _Static_assert(_Alignof(max_align_t) >= 16, "malloc alignment below 16 bytes");
    _Static_assert(offsetof(struct cthr_rcu_map_node, inline_entry) % 16 == 0, "inline entry alignment");
    if (inline_size > SIZE_MAX / 4 || key_count > SIZE_MAX / 4) return NULL;
    size_t body = round16(inline_size + key_count);
    struct cthr_rcu_map_node *node = malloc(sizeof *node + body + sizeof(struct cthr_rcu_map_tail));
    if (node == NULL) return NULL;
    node->tail = (struct cthr_rcu_map_tail *)(node->inline_entry + body);
    node->tail->node = node;
    node->key_count = CTHR_RCU_MAP_NO_KEY_BYTES;
    node->key_offset = 0;
    return node;
}

// A writer stripe: the library's futex lock (owner in the word), one cache line each.
struct cthr_rcu_map_stripe {
    _Alignas(64) cthr_lock_t lock;
};

struct cthr_rcu_map {
    struct cds_lfht *table;
    cthr_rcu_map_release_t release;
    void *context;
    _Alignas(64) cthr_atomic_i64_t count;
    // Bucket count last requested (initial size, then each growth this file asked for); see count_add.
    cthr_atomic_u64_t size_hint;
    struct cthr_rcu_map_stripe stripes[CTHR_RCU_MAP_STRIPES];
};

static inline struct cthr_rcu_map_node *node_of(struct cds_lfht_node *lfht) {
    if (lfht == NULL) return NULL;
    struct cthr_rcu_map_node *node = caa_container_of(lfht, struct cthr_rcu_map_node, lfht);
    CTHR_TSAN_ACQUIRE(node);
    return node;
}

static inline void *entry_at(struct cds_lfht_iter *iter) {
    struct cthr_rcu_map_node *node = node_of(cds_lfht_iter_get_node(iter));
    return node == NULL ? NULL : node->inline_entry;
}

static void node_prepare(const cthr_rcu_map_t *map, struct cthr_rcu_map_node *node, uint64_t hash) {
    cds_lfht_node_init(&node->lfht);
    node->tail->hash = hash;
    node->tail->release = map->release;
    node->tail->context = map->context;
    CTHR_TSAN_RELEASE(node);
}

static inline struct cthr_rcu_map_node *node_of_inline(void *entry) {
    return (struct cthr_rcu_map_node *)((unsigned char *)entry - offsetof(struct cthr_rcu_map_node, inline_entry));
}

void *cthr_rcu_map_entry_alloc(size_t size) {
    struct cthr_rcu_map_node *node = node_alloc(size, 0);
    return node == NULL ? NULL : node->inline_entry;
}

void *cthr_rcu_map_entry_alloc_keyed(size_t size, const void *key, size_t key_count) {
    if (key == NULL && key_count != 0) return NULL;
    // A key longer than a 32-bit count is kept out of the node: its lookups go to the caller's own comparison.
    int stored = key_count < CTHR_RCU_MAP_NO_KEY_BYTES &&
                 size <= UINT32_MAX - offsetof(struct cthr_rcu_map_node, inline_entry);
    struct cthr_rcu_map_node *node = node_alloc(size, stored ? key_count : 0);
    if (node == NULL) return NULL;
    if (stored) {
        node->key_count = (uint32_t)key_count;
        node->key_offset = (uint32_t)(offsetof(struct cthr_rcu_map_node, inline_entry) + size);
        if (key_count != 0) memcpy((unsigned char *)node + node->key_offset, key, key_count);
    }
    return node->inline_entry;
}

void cthr_rcu_map_entry_free(void *entry) {
    if (entry != NULL) free(node_of_inline(entry));
}

static void node_reclaim(struct rcu_head *head) {
    struct cthr_rcu_map_tail *tail = caa_container_of(head, struct cthr_rcu_map_tail, rcu);
    CTHR_TSAN_ACQUIRE(tail);
    CTHR_TSAN_ACQUIRE(&cthr_rcu_tsan_grace_period);
    struct cthr_rcu_map_node *node = tail->node;
    cthr_rcu_in_callback++;
    tail->release(node->inline_entry, tail->context);
    cthr_rcu_in_callback--;
    free(node);
    CTHR_TSAN_RELEASE(&cthr_rcu_tsan_callbacks_done);
}

// Hands a node that left the table to the call_rcu worker.
static void node_retire(struct cthr_rcu_map_node *node) {
    CTHR_TSAN_RELEASE(node->tail);
    urcu_memb_call_rcu(&node->tail->rcu, node_reclaim);
}

// cds_lfht compares the full hash before calling match, so accepting every node finds "same hash, any key".
static int match_any(struct cds_lfht_node *lfht, const void *key) {
    (void)lfht;
    (void)key;
    return 1;
}

static int match_identity(struct cds_lfht_node *lfht, const void *key) { return lfht == key; }

// What a byte lookup looks for, and what it met on the way.
struct bytes_match {
    const void *bytes;
    size_t count;
    // Set when a node with the same hash held other bytes or none: an equal key with other bytes may be there.
    int ambiguous;
};

// cds_lfht calls this only for a present node with exactly the lookup's hash: it matches when the node's key bytes
// are the lookup's bytes, and records any other node of that hash. `key` points to the caller's own, writable
// `struct bytes_match` (cds_lfht passes it through as const).
static int match_bytes(struct cds_lfht_node *lfht, const void *key) {
    struct bytes_match *match = (struct bytes_match *)(uintptr_t)key;
    struct cthr_rcu_map_node *node = node_of(lfht);
    if (node->key_count == match->count &&
        cthr_rcu_bytes_equal((const unsigned char *)node + node->key_offset, match->bytes, match->count))
        return 1;
    match->ambiguous = 1;
    return 0;
}

// For a call_rcu callback that must not run while a fork is being prepared (it would wait for the resize worker
// that cthr_rcu_before_fork paused): takes cthr_rcu_fork_mutex and returns 1; or, while a fork is prepared, queues
// `head` again behind it (counted once in cthr_rcu_requeued, which cthr_rcu_barrier waits for) and returns 0.
static int fork_quiet_or_requeue(struct rcu_head *head, int *requeued, void (*callback)(struct rcu_head *)) {
    if (pthread_mutex_trylock(&cthr_rcu_fork_mutex) == 0) return 1;
    if (!*requeued) (void)cthr_atomic_i64_fetch_add(&cthr_rcu_requeued, 1, CTHR_RELAXED);
    *requeued = 1;
    CTHR_TSAN_RELEASE(head);
    urcu_memb_call_rcu(head, callback);
    return 0;
}

struct resize_request {
    struct rcu_head rcu;
    cthr_rcu_map_t *map;
    unsigned long size;
    int requeued;
};

// Both records start with their rcu_head, so the TSan release on `head` in fork_quiet_or_requeue pairs with the
// callbacks' acquire on the record.
_Static_assert(offsetof(struct resize_request, rcu) == 0, "rcu_head first");

static void resize_run(struct rcu_head *head) {
    struct resize_request *request = caa_container_of(head, struct resize_request, rcu);
    CTHR_TSAN_ACQUIRE(request);
    // On the call_rcu worker: registered, outside any read section, as cds_lfht_resize requires. The table is still
    // alive: its destruction is queued behind this request (one FIFO call_rcu queue, and no writer runs after
    // cthr_rcu_map_destroy).
    // A fork is being prepared: resizing now could wait for the paused resize worker (see rcu_internal.h).
    if (!fork_quiet_or_requeue(&request->rcu, &request->requeued, resize_run)) return;
    cds_lfht_resize(request->map->table, request->size);
    (void)pthread_mutex_unlock(&cthr_rcu_fork_mutex);
    int requeued = request->requeued;
    free(request);
    if (requeued) (void)cthr_atomic_i64_fetch_sub(&cthr_rcu_requeued, 1, CTHR_RELEASE);
    CTHR_TSAN_RELEASE(&cthr_rcu_tsan_callbacks_done);
}

// liburcu grows a table of more than about 2,048 entries only when its load factor reaches 8 (and only at
// power-of-two counts), which makes lookups in large maps walk long chains. When the count passes the size last
// requested, ask for a table with one bucket per entry, on the call_rcu worker so the writer never blocks.
static void grow_if_needed(cthr_rcu_map_t *map, long count) {
    uint64_t hint = cthr_atomic_u64_load(&map->size_hint, CTHR_RELAXED);
    if (count <= 0 || (unsigned long)count <= hint || hint >= (1ul << 30)) return;
    unsigned long size = hint << 1;
    while (size < (unsigned long)count && size < (1ul << 30)) size <<= 1;
    if (!cthr_atomic_u64_compare_exchange_strong(&map->size_hint, &hint, size, CTHR_RELAXED, CTHR_RELAXED)) return;
    struct resize_request *request = malloc(sizeof *request);
    if (request == NULL) return;  // liburcu's own policy still applies
    request->map = map;
    request->size = size;
    request->requeued = 0;
    CTHR_TSAN_RELEASE(request);
    (void)cthr_rcu_ensure_registered_inline();
    urcu_memb_call_rcu(&request->rcu, resize_run);
}

static inline void count_add(cthr_rcu_map_t *map, long delta) {
    long count = (long)cthr_atomic_i64_fetch_add(&map->count, delta, CTHR_RELAXED) + delta;
    if (delta > 0) grow_if_needed(map, count);
}

static inline struct cthr_rcu_map_stripe *stripe_of(cthr_rcu_map_t *map, uint64_t hash) {
    uint64_t mixed = hash ^ (hash >> 29) ^ (hash >> 47);
    return &map->stripes[mixed & (CTHR_RCU_MAP_STRIPES - 1)];
}

int cthr_rcu_map_create(size_t initial_capacity, cthr_rcu_map_release_t release, void *context,
                        cthr_rcu_map_t **out) {
    // Above 2^29 entries the table would be pre-sized beyond its 2^30-bucket cap; such a count is a negative or
    // otherwise corrupt size (a negative Int from Swift arrives as a huge size_t), not a real request.
    if (release == NULL || out == NULL || initial_capacity > CTHR_RCU_MAP_CAPACITY_MAX) return EINVAL;
    // A new table could start liburcu's resize worker, which registers into the dead threads' registry.
    CTHR_RCU_REFUSE_IN_READ_ONLY_CHILD();
    // Two buckets per expected entry: a lookup then walks past fewer nodes of other keys in its bucket (measured: a
    // 1,024-key map at 95% reads costs about 9% less per operation than with one bucket per entry).
    unsigned long buckets = 64;
    while (buckets < 2 * initial_capacity && buckets < (1ul << 30)) buckets <<= 1;
    cthr_rcu_map_t *map = aligned_alloc(64, sizeof *map);
    if (map == NULL) return ENOMEM;
    map->release = release;
    map->context = context;
    cthr_atomic_i64_init(&map->count, 0);
    cthr_atomic_u64_init(&map->size_hint, buckets);
    for (unsigned i = 0; i < CTHR_RCU_MAP_STRIPES; i++) (void)cthr_lock_init(&map->stripes[i].lock);
    cthr_atomic_i32_store(&cthr_rcu_helpers_started, 1, CTHR_RELAXED);
    map->table = cds_lfht_new_flavor(buckets, 64, 0, CDS_LFHT_AUTO_RESIZE | CDS_LFHT_ACCOUNTING, &urcu_memb_flavor,
                                     NULL);
    if (map->table == NULL) {
        free(map);
        return ENOMEM;
    }
    *out = map;
    return 0;
}

struct table_retirement {
    struct rcu_head rcu;
    cthr_rcu_map_t *map;
    int requeued;
};

_Static_assert(offsetof(struct table_retirement, rcu) == 0, "rcu_head first");

static void table_reclaim(struct rcu_head *head) {
    struct table_retirement *retirement = caa_container_of(head, struct table_retirement, rcu);
    CTHR_TSAN_ACQUIRE(retirement);
    CTHR_TSAN_ACQUIRE(&cthr_rcu_tsan_grace_period);
    cthr_rcu_map_t *map = retirement->map;
    // A fork is being prepared: cds_lfht_destroy would wait for the resize worker that cthr_rcu_before_fork paused,
    // while the fork waits for this worker (see rcu_internal.h). Retry after it; the record stays behind every node of
    // the table in the queue.
    if (!fork_quiet_or_requeue(&retirement->rcu, &retirement->requeued, table_reclaim)) return;
    // Runs outside any read section, after the grace period that follows the removal of every node.
    (void)cds_lfht_destroy(map->table, NULL);
    (void)pthread_mutex_unlock(&cthr_rcu_fork_mutex);
    cthr_rcu_map_release_t release = map->release;
    void *context = map->context;
    free(map);
    // Every node retired before this record has been released (the call_rcu queue is FIFO): the context may go.
    cthr_rcu_in_callback++;
    release(NULL, context);
    cthr_rcu_in_callback--;
    int requeued = retirement->requeued;
    free(retirement);
    CTHR_TSAN_RELEASE(&cthr_rcu_tsan_callbacks_done);
    if (requeued) (void)cthr_atomic_i64_fetch_sub(&cthr_rcu_requeued, 1, CTHR_RELEASE);
}

int cthr_rcu_map_destroy(cthr_rcu_map_t *map) {
    if (map == NULL) return EINVAL;
    // No grace period can run in a read-only forked child, so nothing that readers may see can be freed: the map
    // and its entries stay allocated.
    if (cthr_rcu_read_only_child) return 0;
    struct table_retirement *retirement = malloc(sizeof *retirement);
    cthr_rcu_read_lock();
    struct cds_lfht_iter iter;
    cds_lfht_first(map->table, &iter);
    struct cds_lfht_node *lfht;
    while ((lfht = cds_lfht_iter_get_node(&iter)) != NULL) {
        cds_lfht_next(map->table, &iter);
        if (cds_lfht_del(map->table, lfht) == 0) node_retire(node_of(lfht));
    }
    cthr_rcu_read_unlock();
    if (retirement == NULL) {
        // Out of memory for the deferral record: the table stays allocated (empty) rather than risk a reader.
        return 0;
    }
    retirement->map = map;
    retirement->requeued = 0;
    CTHR_TSAN_RELEASE(retirement);
    urcu_memb_call_rcu(&retirement->rcu, table_reclaim);
    return 0;
}

// The read-side entry points refuse a NULL map, iterator or match with one branch, predicted not taken (the two
// tests are combined with `|` so the compiler emits a single conditional jump).

void *cthr_rcu_map_find_hash(cthr_rcu_map_t *map, uint64_t hash, cthr_rcu_map_iter_t *iter) {
    if (__builtin_expect((map == NULL) | (iter == NULL), 0)) return NULL;
    struct cds_lfht_iter *it = (struct cds_lfht_iter *)iter;
    cds_lfht_lookup(map->table, (unsigned long)hash, match_any, NULL, it);
    return entry_at(it);
}

void *cthr_rcu_map_find_bytes(cthr_rcu_map_t *map, uint64_t hash, const void *bytes, size_t count,
                              cthr_rcu_map_iter_t *iter, int *ambiguous) {
    if (__builtin_expect((map == NULL) | (iter == NULL) | (ambiguous == NULL) | (bytes == NULL && count != 0), 0)) {
        if (ambiguous != NULL) *ambiguous = 1;
        return NULL;
    }
    struct bytes_match match = {bytes, count, 0};
    struct cds_lfht_iter *it = (struct cds_lfht_iter *)iter;
    cds_lfht_lookup(map->table, (unsigned long)hash, match_bytes, &match, it);
    void *entry = entry_at(it);
    *ambiguous = entry == NULL && match.ambiguous;
    return entry;
}

// One call for what a Swift lookup of an ASCII String key would otherwise do in two (hash, then find).
void *cthr_rcu_map_find_ascii(cthr_rcu_map_t *map, const void *bytes, size_t count, uint64_t seed,
                              cthr_rcu_map_iter_t *iter, int *outcome) {
    if (__builtin_expect(outcome == NULL, 0)) return NULL;
    uint64_t hash;
    if (!cthr_rcu_hash_ascii(bytes, count, seed, &hash)) {
        *outcome = CTHR_RCU_MAP_NOT_ASCII;
        return NULL;
    }
    int ambiguous;
    void *entry = cthr_rcu_map_find_bytes(map, hash, bytes, count, iter, &ambiguous);
    *outcome = ambiguous ? CTHR_RCU_MAP_AMBIGUOUS : CTHR_RCU_MAP_DECIDED;
    return entry;
}

void *cthr_rcu_map_next_hash(cthr_rcu_map_t *map, cthr_rcu_map_iter_t *iter) {
    if (__builtin_expect((map == NULL) | (iter == NULL), 0)) return NULL;
    struct cds_lfht_iter *it = (struct cds_lfht_iter *)iter;
    cds_lfht_next_duplicate(map->table, match_any, NULL, it);
    return entry_at(it);
}

void *cthr_rcu_map_first(cthr_rcu_map_t *map, cthr_rcu_map_iter_t *iter) {
    if (__builtin_expect((map == NULL) | (iter == NULL), 0)) return NULL;
    struct cds_lfht_iter *it = (struct cds_lfht_iter *)iter;
    cds_lfht_first(map->table, it);
    return entry_at(it);
}

void *cthr_rcu_map_next(cthr_rcu_map_t *map, cthr_rcu_map_iter_t *iter) {
    if (__builtin_expect((map == NULL) | (iter == NULL), 0)) return NULL;
    struct cds_lfht_iter *it = (struct cds_lfht_iter *)iter;
    cds_lfht_next(map->table, it);
    return entry_at(it);
}

int cthr_rcu_map_add_entry(cthr_rcu_map_t *map, uint64_t hash, void *entry) {
    if (map == NULL || entry == NULL) return EINVAL;
    CTHR_RCU_REFUSE_IN_READ_ONLY_CHILD();
    struct cthr_rcu_map_node *node = node_of_inline(entry);
    node_prepare(map, node, hash);
    cthr_rcu_read_lock();
    cds_lfht_add(map->table, (unsigned long)hash, &node->lfht);
    cthr_rcu_read_unlock();
    count_add(map, 1);
    return 0;
}

static int replace_node_at(cthr_rcu_map_t *map, cthr_rcu_map_iter_t *iter, struct cthr_rcu_map_node *old,
                           struct cthr_rcu_map_node *node) {
    cthr_rcu_read_lock();
    int rc = cds_lfht_replace(map->table, (struct cds_lfht_iter *)iter, (unsigned long)old->tail->hash, match_identity,
                              iter->node, &node->lfht);
    cthr_rcu_read_unlock();
    if (rc != 0) return rc == -ENOENT ? ENOENT : EINVAL;
    node_retire(old);
    return 0;
}

int cthr_rcu_map_replace_at_entry(cthr_rcu_map_t *map, cthr_rcu_map_iter_t *iter, void *entry) {
    if (map == NULL || iter == NULL || iter->node == NULL || entry == NULL) return EINVAL;
    CTHR_RCU_REFUSE_IN_READ_ONLY_CHILD();
    struct cthr_rcu_map_node *old = node_of(iter->node);
    struct cthr_rcu_map_node *node = node_of_inline(entry);
    node_prepare(map, node, old->tail->hash);
    return replace_node_at(map, iter, old, node);
}

int cthr_rcu_map_delete_at(cthr_rcu_map_t *map, cthr_rcu_map_iter_t *iter) {
    if (map == NULL || iter == NULL || iter->node == NULL) return EINVAL;
    CTHR_RCU_REFUSE_IN_READ_ONLY_CHILD();
    cthr_rcu_read_lock();
    int rc = cds_lfht_del(map->table, (struct cds_lfht_node *)iter->node);
    cthr_rcu_read_unlock();
    if (rc != 0) return ENOENT;
    node_retire(node_of(iter->node));
    count_add(map, -1);
    return 0;
}

long cthr_rcu_map_count(const cthr_rcu_map_t *map) {
    if (map == NULL) return 0;
    long count = (long)cthr_atomic_i64_load(&map->count, CTHR_RELAXED);
    return count < 0 ? 0 : count;
}

int cthr_rcu_map_writer_lock(cthr_rcu_map_t *map, uint64_t hash) {
    if (map == NULL) return EINVAL;
    CTHR_RCU_REFUSE_IN_READ_ONLY_CHILD();
    return cthr_rcu_writer_lock(&stripe_of(map, hash)->lock);
}

int cthr_rcu_map_writer_unlock(cthr_rcu_map_t *map, uint64_t hash) {
    if (map == NULL) return EINVAL;
    return cthr_rcu_writer_unlock(&stripe_of(map, hash)->lock);
}
