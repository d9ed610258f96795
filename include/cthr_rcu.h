// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

// Read-copy-update over liburcu's memb flavour (sys_membarrier, or full fences when the kernel lacks it), plus a
// wrapper over liburcu-cds's lock-free RCU hash table, and a flat RCU table of 64-bit keys and values. liburcu's
// headers are included only by the .c files, so its macro name maps never reach Swift or the users of this header.
//
// The RCU rules, in short (the DocC article RCURules.md has them in full):
// - a read section (cthr_rcu_read_lock .. cthr_rcu_read_unlock) must not block for long and must not call
//   cthr_rcu_synchronize or cthr_rcu_barrier (both return EDEADLK there instead of deadlocking);
// - a pointer read with cthr_rcu_dereference is valid only until the read section that read it ends;
// - a thread is registered with liburcu automatically by its first read lock / call, and unregistered at exit;
// - an object removed from a shared pointer is freed only after a grace period (cthr_rcu_synchronize or
//   cthr_rcu_call), never directly;
// - fork(): call cthr_rcu_before_fork / cthr_rcu_after_fork_parent / cthr_rcu_after_fork_child around it.
//
// One limit comes from liburcu itself: it aborts the process (urcu_die) instead of returning an error when it
// cannot create its call_rcu worker thread, when a lock of its reader registry fails, or when the membarrier
// registration it asked for at start-up fails. cthr_rcu_call (and the map writes, which use call_rcu),
// cthr_rcu_register_thread (and every entry point that registers the calling thread), cthr_rcu_synchronize and
// cthr_rcu_barrier inherit that limit: in those cases they never return.
#ifndef CTHREADING_RCU_H
#define CTHREADING_RCU_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>

#include "cthr_atomic.h"
#include "cthr_nullability.h"

#ifdef __cplusplus
extern "C" {
#endif

// MARK: - Threads

// Registers the calling thread as an RCU reader and arranges its unregistration at thread exit. Returns 0, EEXIST if
// the thread is already registered (automatically or explicitly; nothing changes), or the pthread_setspecific error
// if the exit hook could not be armed (the thread is registered anyway).
int cthr_rcu_register_thread(void);

// Unregisters the calling thread. Returns 0, ENOENT if it is not registered, EBUSY inside a read section, or EPERM on
// liburcu's own call_rcu worker thread.
int cthr_rcu_unregister_thread(void);

// Registers the calling thread if it is not yet registered (a thread-local flag test when it is). Returns 0, or the
// pthread_setspecific error if the exit hook could not be armed (the thread is registered anyway).
int cthr_rcu_ensure_registered(void);

// 1 if the calling thread is registered with liburcu, else 0.
int cthr_rcu_is_registered(void);

// MARK: - liburcu version check

// What the probe saw: CThreading inlines liburcu's read-side fast paths, so the liburcu loaded at run time must lay
// out its reader and grace-period state as the headers it was compiled with did. Each flag is 1 when the two agree.
typedef struct cthr_rcu_abi_observation {
    size_t gp_size_compiled;  // sizeof(urcu_memb_gp) in the headers CThreading was compiled with
    size_t gp_size_loaded;    // its size in the loaded library's symbol table (0 when the loader cannot say)
    int registered_seen;      // the inlined code saw the library's registration of the thread
    int tid_seen;             // ... and the thread id the library recorded
    int inline_lock_seen;     // the library saw a read section entered by the inlined fast path
    int inline_unlock_seen;   // ... and saw it end
    int library_lock_seen;    // the inlined code saw a read section entered by the library
} cthr_rcu_abi_observation_t;

// Bits of cthr_rcu_abi_verdict's result.
#define CTHR_RCU_ABI_GP_SIZE 1       // urcu_memb_gp has another size in the loaded library
#define CTHR_RCU_ABI_REGISTRATION 2  // the reader's registration fields moved
#define CTHR_RCU_ABI_READ_SECTION 4  // the reader's nesting counter moved or changed meaning

// Fills `out` by registering a new thread with liburcu and entering and leaving a read section once through the
// inlined fast path and once through the library. Returns 0, ECANCELED in a read-only forked child (nothing probed),
// or the pthread_create / pthread_join error.
int cthr_rcu_abi_probe(cthr_rcu_abi_observation_t *_Nullable out);

// 0 when `observation` shows that the loaded liburcu matches the headers, else a mask of CTHR_RCU_ABI_* bits.
int cthr_rcu_abi_verdict(const cthr_rcu_abi_observation_t *_Nullable observation);

// The file name under which the loader found liburcu-memb (e.g. /lib/x86_64-linux-gnu/liburcu-memb.so.8), or NULL.
const char *_Nullable cthr_rcu_abi_library_path(void);

// MARK: - Read side

// Enters a read section (nests). Registers the calling thread first if needed. Never fails, never blocks.
void cthr_rcu_read_lock(void);

// Leaves the innermost read section entered by cthr_rcu_read_lock on this thread. Never fails, never blocks.
void cthr_rcu_read_unlock(void);

// 1 if the calling thread is inside a read section, else 0.
int cthr_rcu_read_ongoing(void);

// MARK: - Pointers

// Reads an RCU-protected pointer (rcu_dereference). Call inside a read section; the result stays valid until it ends.
// Returns NULL for a NULL slot.
void *_Nullable cthr_rcu_dereference(void *_Nullable const *_Nullable slot);

// Publishes `value` in `slot` (rcu_assign_pointer): every store made to *value before is visible to readers.
// Does nothing for a NULL slot.
void cthr_rcu_assign_pointer(void *_Nullable *_Nullable slot, void *_Nullable value);

// Publishes `value` in `slot` and returns the previous pointer (rcu_xchg_pointer), with full ordering. For a NULL
// slot, publishes nothing and returns NULL (`value` stays the caller's).
void *_Nullable cthr_rcu_xchg_pointer(void *_Nullable *_Nullable slot, void *_Nullable value);

// Stores `desired` in `slot` if it holds `expected` (rcu_cmpxchg_pointer); returns the pointer found (== expected
// on success), with full ordering. For a NULL slot, stores nothing and returns NULL.
void *_Nullable cthr_rcu_cmpxchg_pointer(void *_Nullable *_Nullable slot, void *_Nullable expected,
                                         void *_Nullable desired);

// MARK: - Grace periods

// Waits until every read section that was running when it was called has ended (synchronize_rcu). Returns 0, or
// EDEADLK when called inside a read section (which would wait for itself forever), or ENOTRECOVERABLE in a read-only
// forked child (see cthr_rcu_writers_available).
int cthr_rcu_synchronize(void);

// A deferred-reclamation callback: runs once, on liburcu's call_rcu worker thread, outside any read section.
typedef void (*_Nullable cthr_rcu_callback_t)(void *_Nullable context);

// Schedules `callback(context)` to run after a grace period (call_rcu); allowed inside a read section. Registers the
// calling thread if needed. Returns 0, EINVAL for a NULL callback, ENOMEM, or ENOTRECOVERABLE in a read-only forked
// child.
int cthr_rcu_call(cthr_rcu_callback_t callback, void *_Nullable context);

// Waits until every callback scheduled so far has run (rcu_barrier). Returns 0, or EDEADLK inside a read section or
// inside a callback (both would wait for themselves), or ENOTRECOVERABLE in a read-only forked child.
int cthr_rcu_barrier(void);

// 1 if liburcu uses the membarrier system call (cheap read side: compiler barriers only), 0 if it fell back to a full
// memory fence in every read lock and unlock (kernel without membarrier, or a seccomp filter refusing it).
int cthr_rcu_uses_membarrier(void);

// 1 if this process can run grace periods; 0 in a child forked from a process where other threads (or liburcu's
// call_rcu and resize workers) had used RCU. liburcu 0.13's memb flavour keeps those dead threads' registrations,
// so in such a child every writer entry point (synchronize, call, barrier, cell lock, map writes) returns
// ENOTRECOVERABLE, new threads read without registering, and destroying a map leaks it. Reads work everywhere.
int cthr_rcu_writers_available(void);

// Call right before fork(): pauses the call_rcu and hash-table resize workers and takes their locks.
void cthr_rcu_before_fork(void);

// Call in the parent right after fork(): resumes what cthr_rcu_before_fork paused.
void cthr_rcu_after_fork_parent(void);

// Call in the child right after fork() (unless it execs at once): restarts a fresh call_rcu worker.
void cthr_rcu_after_fork_child(void);

// MARK: - RCU cell

// One RCU-protected pointer on its own cache line plus a writer lock (the futex lock `cthr_lock_t`, owner in the
// word) on another; never moves.
typedef struct cthr_rcu_cell cthr_rcu_cell_t;

// Creates a cell holding `initial` (may be NULL). Returns 0, EINVAL (NULL out), or ENOMEM.
int cthr_rcu_cell_create(void *_Nullable initial, cthr_rcu_cell_t *_Nullable *_Nullable out);

// Frees the cell (no reader or writer may use it any more) and returns the pointer it held, for the caller to free.
void *_Nullable cthr_rcu_cell_destroy(cthr_rcu_cell_t *_Nullable cell);

// The current pointer (rcu_dereference). Call inside a read section; valid until it ends. NULL for a NULL cell.
void *_Nullable cthr_rcu_cell_get(const cthr_rcu_cell_t *_Nullable cell);

// Publishes `value` and returns the previous pointer (rcu_xchg_pointer); reclaim it after a grace period. For a
// NULL cell, publishes nothing and returns NULL (`value` stays the caller's).
void *_Nullable cthr_rcu_cell_exchange(cthr_rcu_cell_t *_Nullable cell, void *_Nullable value);

// Takes the cell's writer lock (serialises read-modify-write updaters). Returns 0, EINVAL for NULL, EDEADLK if this
// thread holds it, or ENOTRECOVERABLE in a read-only forked child.
int cthr_rcu_cell_lock(cthr_rcu_cell_t *_Nullable cell);

// Releases the cell's writer lock. Returns 0, EINVAL for NULL, or EPERM if this thread does not hold it.
int cthr_rcu_cell_unlock(cthr_rcu_cell_t *_Nullable cell);

// MARK: - RCU hash map (cds_lfht)

// A lock-free RCU hash table of opaque entries keyed by a caller-computed 64-bit hash (liburcu-cds rculfhash,
// auto-resizing). Readers (inside a read section) take no lock; writers are lock-free; a removed or replaced entry
// is handed to the map's release callback after a grace period, on the call_rcu worker thread. In a read-only forked
// child (see cthr_rcu_writers_available) cthr_rcu_map_create and every write, including cthr_rcu_map_writer_lock,
// return ENOTRECOVERABLE without changing anything.
typedef struct cthr_rcu_map cthr_rcu_map_t;

// Releases an entry the map no longer references (after a grace period, on the call_rcu worker). After
// cthr_rcu_map_destroy, once every entry has been released, it is called one last time with entry == NULL so the
// context can be freed. For an inline entry it must only deinitialize the entry's contents: the map frees the memory.
typedef void (*_Nullable cthr_rcu_map_release_t)(void *_Nullable entry, void *_Nullable context);

// A position in the map (mirrors struct cds_lfht_iter); valid only inside the read section that produced it.
typedef struct cthr_rcu_map_iter {
    void *_Nullable node;
    void *_Nullable next;
} cthr_rcu_map_iter_t;

// Inline entries: an entry stored inside the table node (one allocation per entry instead of two). Allocate it,
// initialise its contents, then publish it with cthr_rcu_map_add_entry or cthr_rcu_map_replace_at_entry; the map
// then owns the memory and frees it after the release callback. Lookups return inline entries like any other.

// Allocates an unpublished inline entry of `size` bytes, 16-byte aligned. Returns NULL when out of memory.
void *_Nullable cthr_rcu_map_entry_alloc(size_t size);

// Allocates an unpublished inline entry of `size` bytes, 16-byte aligned, like cthr_rcu_map_entry_alloc, and copies
// the `key_count` bytes at `key` (the entry's key as bytes: equal bytes must mean equal keys) into the node, where
// cthr_rcu_map_find_bytes compares them. A key of 2^32 - 1 bytes or more is not copied (its lookups then report
// ambiguity). Returns NULL when out of memory, or for a NULL `key` with a nonzero `key_count`.
void *_Nullable cthr_rcu_map_entry_alloc_keyed(size_t size, const void *_Nullable key, size_t key_count);

// Frees an inline entry that was never published (or whose publication failed). NULL is ignored.
void cthr_rcu_map_entry_free(void *_Nullable entry);

// Creates a map with room for about `initial_capacity` entries before it resizes (0 means a small default).
// `release(entry, context)` frees removed entries. Returns 0, EINVAL (NULL release or out, or an initial capacity
// above 2^29, such as a negative count converted to size_t), or ENOMEM.
int cthr_rcu_map_create(size_t initial_capacity, cthr_rcu_map_release_t release, void *_Nullable context,
                        cthr_rcu_map_t *_Nullable *_Nullable out);

// Destroys the map: every remaining entry is released after a grace period, and the table itself is freed on the
// call_rcu worker, so it may be called anywhere, even inside a read section. No thread may use the map afterwards.
// Returns 0, or EINVAL for NULL.
int cthr_rcu_map_destroy(cthr_rcu_map_t *_Nullable map);

// The first entry whose hash is exactly `hash` (any key), or NULL; positions `iter` on it. Inside a read section.
// NULL (and `iter` untouched) for a NULL map or iter.
void *_Nullable cthr_rcu_map_find_hash(cthr_rcu_map_t *_Nullable map, uint64_t hash,
                                       cthr_rcu_map_iter_t *_Nullable iter);

// The first entry whose hash is exactly `hash` and whose key bytes (cthr_rcu_map_entry_alloc_keyed) are the `count`
// bytes at `bytes`, or NULL; positions `iter` on it. Inside a read section. Sets *ambiguous to 0 when the result is
// final: NULL then means no entry has this hash with any key. Sets it to 1 when nothing matched but some entry of
// this hash held other bytes or none: a key equal to the caller's with other bytes (a Swift String canonically
// equivalent to it) may be there, so the caller must walk the hash with cthr_rcu_map_find_hash and its own
// comparison. NULL and *ambiguous = 1 (when `ambiguous` is not NULL) for a NULL map, iter or ambiguous, or a NULL
// `bytes` with a nonzero count.
void *_Nullable cthr_rcu_map_find_bytes(cthr_rcu_map_t *_Nullable map, uint64_t hash, const void *_Nullable bytes,
                                        size_t count, cthr_rcu_map_iter_t *_Nullable iter, int *_Nullable ambiguous);

// The outcomes of cthr_rcu_map_find_ascii. The result is final: the entry, or NULL when no key equals the lookup's.
#define CTHR_RCU_MAP_DECIDED 0
// Some byte is not ASCII: nothing was looked up (hash the key another way, then cthr_rcu_map_find_bytes).
#define CTHR_RCU_MAP_NOT_ASCII 1
// Nothing matched but the hash held other keys' bytes: walk it as cthr_rcu_map_find_bytes's ambiguity says.
#define CTHR_RCU_MAP_AMBIGUOUS 2

// The read path of an ASCII byte-string key in one call: if the `count` bytes at `bytes` are all ASCII, hashes them
// as cthr_rcu_hash_ascii does with `seed` and returns cthr_rcu_map_find_bytes's result for that hash, its ambiguity
// in *outcome (CTHR_RCU_MAP_DECIDED or CTHR_RCU_MAP_AMBIGUOUS); else sets *outcome to CTHR_RCU_MAP_NOT_ASCII and
// returns NULL. Inside a read section. NULL for a NULL outcome; CTHR_RCU_MAP_AMBIGUOUS for a NULL map or iter.
void *_Nullable cthr_rcu_map_find_ascii(cthr_rcu_map_t *_Nullable map, const void *_Nullable bytes, size_t count,
                                        uint64_t seed, cthr_rcu_map_iter_t *_Nullable iter, int *_Nullable outcome);

// The next entry with the same hash as the one at `iter`, or NULL; advances `iter`. Inside a read section. NULL for
// a NULL map or iter.
void *_Nullable cthr_rcu_map_next_hash(cthr_rcu_map_t *_Nullable map, cthr_rcu_map_iter_t *_Nullable iter);

// The first entry in table order, or NULL when empty; positions `iter`. Inside a read section. NULL (and `iter`
// untouched) for a NULL map or iter.
void *_Nullable cthr_rcu_map_first(cthr_rcu_map_t *_Nullable map, cthr_rcu_map_iter_t *_Nullable iter);

// The entry after the one at `iter` in table order, or NULL at the end. Inside a read section. NULL for a NULL map
// or iter.
void *_Nullable cthr_rcu_map_next(cthr_rcu_map_t *_Nullable map, cthr_rcu_map_iter_t *_Nullable iter);

// Adds the inline entry `entry` (from cthr_rcu_map_entry_alloc) without looking for an existing key: the caller
// guarantees the key is absent (by holding the key's writer lock). Never allocates. Returns 0 or EINVAL.
int cthr_rcu_map_add_entry(cthr_rcu_map_t *_Nullable map, uint64_t hash, void *_Nullable entry);

// Replaces the entry at `iter` (from a find in the current read section) by the inline entry `entry`; the old one
// is released after a grace period. Never allocates. Returns 0, ENOENT if the entry at `iter` was
// removed meanwhile (the inline entry stays the caller's, to free), or EINVAL.
int cthr_rcu_map_replace_at_entry(cthr_rcu_map_t *_Nullable map, cthr_rcu_map_iter_t *_Nullable iter,
                                  void *_Nullable entry);

// Removes the entry at `iter` (from a find in the current read section); released after a grace period. Returns 0,
// ENOENT if it was removed meanwhile, or EINVAL.
int cthr_rcu_map_delete_at(cthr_rcu_map_t *_Nullable map, cthr_rcu_map_iter_t *_Nullable iter);

// In-place values. An entry's value of 1, 2, 4 or 8 bytes, naturally aligned and holding no references (a plain
// integer, say), may be rewritten in place by a writer that holds the key's writer lock instead of publishing a new
// entry: no allocation, no grace period. Every access to such a value, by readers and writers, goes through these
// two functions.

// Loads the `size`-byte value at `address` atomically with acquire order (it pairs with the release store below, so a
// reader that sees a new value also sees what the writer wrote before it) and returns it zero-extended to 64 bits.
// `size` must be 1, 2, 4 or 8 and `address` aligned to it; any other size returns 0 and reads nothing.
static inline uint64_t cthr_rcu_map_value_load(const void *_Nonnull address, size_t size) {
    switch (size) {
    case 1: return cthr_atomic_u8_load((const cthr_atomic_u8_t *)address, CTHR_ACQUIRE);
    case 2: return cthr_atomic_u16_load((const cthr_atomic_u16_t *)address, CTHR_ACQUIRE);
    case 4: return cthr_atomic_u32_load((const cthr_atomic_u32_t *)address, CTHR_ACQUIRE);
    case 8: return cthr_atomic_u64_load((const cthr_atomic_u64_t *)address, CTHR_ACQUIRE);
    default: return 0;
    }
}

// Stores the low `size` bytes of `bits` at `address` atomically with release order. Same `size` and alignment rules
// as cthr_rcu_map_value_load; returns 0, or EINVAL (nothing stored) for any other size.
static inline int cthr_rcu_map_value_store(void *_Nonnull address, uint64_t bits, size_t size) {
    switch (size) {
    case 1: cthr_atomic_u8_store((cthr_atomic_u8_t *)address, (uint8_t)bits, CTHR_RELEASE); return 0;
    case 2: cthr_atomic_u16_store((cthr_atomic_u16_t *)address, (uint16_t)bits, CTHR_RELEASE); return 0;
    case 4: cthr_atomic_u32_store((cthr_atomic_u32_t *)address, (uint32_t)bits, CTHR_RELEASE); return 0;
    case 8: cthr_atomic_u64_store((cthr_atomic_u64_t *)address, bits, CTHR_RELEASE); return 0;
    default: return EINVAL;
    }
}

// The number of entries (exact when no writer runs concurrently; otherwise a value some writer order produced).
long cthr_rcu_map_count(const cthr_rcu_map_t *_Nullable map);

// Takes the writer lock guarding every key whose hash is `hash` (64 striped futex locks, `cthr_lock_t`). Returns 0,
// or EDEADLK if this thread holds that stripe already (including through another key that shares it).
int cthr_rcu_map_writer_lock(cthr_rcu_map_t *_Nullable map, uint64_t hash);

// Releases the writer lock taken for `hash`. Returns 0, or EPERM if this thread does not hold it.
int cthr_rcu_map_writer_unlock(cthr_rcu_map_t *_Nullable map, uint64_t hash);

// MARK: - Key hashing (RCU hash map)

// The hashing of byte-string keys (RCUMap's String keys): wyhash, final version 4 (Wang Yi, public domain; the hash of
// Go's and Zig's maps), seeded per map. It reads the bytes eight at a time with unaligned loads (memcpy) and mixes them
// with 64x64->128-bit multiplies: a 40-byte key costs about a tenth of SipHash-1-3. With a random seed the hashes
// cannot be predicted, so keys cannot be chosen to fall into one bucket.

// One wyhash mixing step: the 128-bit product of `a` and `b`, its halves XORed.
static inline uint64_t cthr_rcu_hash_mix(uint64_t a, uint64_t b) {
    __uint128_t product = (__uint128_t)a * b;
    return (uint64_t)(product >> 64) ^ (uint64_t)product;
}

// The 8 bytes at `p` as a little-endian integer (unaligned load).
static inline uint64_t cthr_rcu_hash_read8(const uint8_t *_Nonnull p) {
    uint64_t value;
    __builtin_memcpy(&value, p, 8);
    return value;
}

// The 4 bytes at `p` as a little-endian integer (unaligned load).
static inline uint64_t cthr_rcu_hash_read4(const uint8_t *_Nonnull p) {
    uint32_t value;
    __builtin_memcpy(&value, p, 4);
    return value;
}

// The wyhash of the `count` bytes at `p` with `seed`, and in *high the OR of every 64-bit word it read (wyhash reads
// every byte at least once, so *high has a byte's top bit set exactly when some byte is not ASCII).
static inline uint64_t cthr_rcu_hash_scan(const uint8_t *_Nonnull p, size_t count, uint64_t seed,
                                          uint64_t *_Nonnull high) {
    static const uint64_t secret0 = 0x2d358dccaa6c78a5ull, secret1 = 0x8bb84b93962eacc9ull,
                          secret2 = 0x4b33a62ed433d4a3ull, secret3 = 0x4d5a2da51de1aa47ull;
    seed ^= cthr_rcu_hash_mix(seed ^ secret0, secret1);
    uint64_t a, b, seen;
    if (__builtin_expect(count <= 16, 1)) {
        if (count >= 4) {
            size_t step = (count >> 3) << 2;
            a = (cthr_rcu_hash_read4(p) << 32) | cthr_rcu_hash_read4(p + step);
            b = (cthr_rcu_hash_read4(p + count - 4) << 32) | cthr_rcu_hash_read4(p + count - 4 - step);
            seen = a | b;
        } else if (count > 0) {
            a = ((uint64_t)p[0] << 16) | ((uint64_t)p[count >> 1] << 8) | p[count - 1];
            b = 0;
            seen = (uint64_t)(p[0] | p[count >> 1] | p[count - 1]);
        } else {
            a = b = seen = 0;
        }
    } else {
        size_t left = count;
        seen = 0;
        if (__builtin_expect(left > 48, 0)) {
            uint64_t seed1 = seed, seed2 = seed;
            do {
                uint64_t w0 = cthr_rcu_hash_read8(p), w1 = cthr_rcu_hash_read8(p + 8);
                uint64_t w2 = cthr_rcu_hash_read8(p + 16), w3 = cthr_rcu_hash_read8(p + 24);
                uint64_t w4 = cthr_rcu_hash_read8(p + 32), w5 = cthr_rcu_hash_read8(p + 40);
                seen |= w0 | w1 | w2 | w3 | w4 | w5;
                seed = cthr_rcu_hash_mix(w0 ^ secret1, w1 ^ seed);
                seed1 = cthr_rcu_hash_mix(w2 ^ secret2, w3 ^ seed1);
                seed2 = cthr_rcu_hash_mix(w4 ^ secret3, w5 ^ seed2);
                p += 48;
                left -= 48;
            } while (__builtin_expect(left > 48, 1));
            seed ^= seed1 ^ seed2;
        }
        while (left > 16) {
            uint64_t w0 = cthr_rcu_hash_read8(p), w1 = cthr_rcu_hash_read8(p + 8);
            seen |= w0 | w1;
            seed = cthr_rcu_hash_mix(w0 ^ secret1, w1 ^ seed);
            left -= 16;
            p += 16;
        }
        a = cthr_rcu_hash_read8(p + left - 16);
        b = cthr_rcu_hash_read8(p + left - 8);
        seen |= a | b;
    }
    *high = seen;
    a ^= secret1;
    b ^= seed;
    __uint128_t product = (__uint128_t)a * b;
    a = (uint64_t)product;
    b = (uint64_t)(product >> 64);
    return cthr_rcu_hash_mix(a ^ secret0 ^ count, b ^ secret1);
}

// The 64-bit wyhash of the `count` bytes at `bytes` with `seed` (NULL hashes as no bytes).
static inline uint64_t cthr_rcu_hash_bytes(const void *_Nullable bytes, size_t count, uint64_t seed) {
    static const uint8_t none = 0;
    uint64_t high;
    return bytes == NULL ? cthr_rcu_hash_scan(&none, 0, seed, &high)
                         : cthr_rcu_hash_scan((const uint8_t *)bytes, count, seed, &high);
}

// If every one of the `count` bytes at `bytes` is ASCII (below 0x80), stores their cthr_rcu_hash_bytes hash with
// `seed` in *hash and returns 1; else returns 0 and leaves *hash alone (also for a NULL `hash`). One pass: the ASCII
// test looks at the words the hash reads.
static inline int cthr_rcu_hash_ascii(const void *_Nullable bytes, size_t count, uint64_t seed,
                                      uint64_t *_Nullable hash) {
    if (hash == NULL) return 0;
    static const uint8_t none = 0;
    uint64_t high;
    uint64_t value = cthr_rcu_hash_scan(bytes == NULL ? &none : (const uint8_t *)bytes, bytes == NULL ? 0 : count,
                                        seed, &high);
    if (high & 0x8080808080808080ull) return 0;
    *hash = value;
    return 1;
}

// 1 if the `count` bytes at `a` and at `b` are equal, else 0 (a NULL pointer is equal only when `count` is 0).
static inline int cthr_rcu_bytes_equal(const void *_Nullable a, const void *_Nullable b, size_t count) {
    if (count == 0) return 1;
    if (a == NULL || b == NULL) return 0;
    return __builtin_memcmp(a, b, count) == 0;
}

// MARK: - RCU flat map (64-bit keys to 64-bit values)

// An open-addressing hash table of 64-bit keys to 64-bit values (integer keys; plain values such as integers or
// doubles, as bits) for read-mostly data. A lookup hashes the key, then probes linearly: one control byte and, when
// its 7-bit tag matches, one 16-byte slot, in two flat arrays; no pointer chase, no lock, no atomic
// read-modify-write, so it is static inline below. A writer holds the writer lock of the key's stripe (64
// error-checking futex locks chosen by hash), so writes of one key are serialised and writes of keys on different
// stripes run in parallel. It rewrites a present key's value in place with one atomic release store; it adds a key
// by claiming an EMPTY slot with a compare-exchange, writing the slot, then its control byte with release order; a
// removed key's control byte becomes a tombstone. Slots are never reused within one array: when used slots (keys,
// tombstones, claims) would pass half of them, a writer rebuilds: it stops the other writers at the door (each
// raises a flag on its stripe while it changes the array), copies the live keys into a new array with at least four
// slots per key, publishes it, and frees the old one after a grace period, so a reader never sees a slot change keys
// under it. In a read-only forked child (see
// cthr_rcu_writers_available) cthr_rcu_flat_create and every write return ENOTRECOVERABLE without changing anything.
//
// The structs are public only so that the lookup can be inlined; only the functions below may touch them.

// Control byte of a slot never used in this array (probes stop here).
#define CTHR_RCU_FLAT_EMPTY 0u
// Control byte of a slot whose key was removed (probes go on past it, as past a slot being filled, 2).
#define CTHR_RCU_FLAT_DELETED 1u
// Control bytes of used slots: this bit plus the top 7 bits of the key's hash.
#define CTHR_RCU_FLAT_FULL 0x80u

// One slot: a key and its value, each read and written atomically.
typedef struct cthr_rcu_flat_slot {
    cthr_atomic_u64_t key;
    cthr_atomic_u64_t value;
} cthr_rcu_flat_slot_t;

// One generation of the table: `mask + 1` (a power of two) control bytes and slots. Immutable but for the bytes and
// values writers change as described above; freed after a grace period once a newer array is published.
typedef struct cthr_rcu_flat_array {
    uint64_t mask;
    cthr_atomic_u8_t *_Nonnull control;
    cthr_rcu_flat_slot_t *_Nonnull slots;
} cthr_rcu_flat_array_t;

// The read-side part of a map: the current array (RCU-protected) and the seeds of its key hash. The writers' state
// follows it in memory, private to rcu_flat.c.
typedef struct cthr_rcu_flat {
    cthr_atomic_ptr_t array;  // cthr_rcu_flat_array_t *, never NULL
    uint64_t seed;
    uint64_t multiplier;
} cthr_rcu_flat_t;

// Creates a map with room for `initial_capacity` keys before its first resize (0 means a small default), hashing
// keys with `seed` and `multiplier` (random per map, so nobody can steer keys into one probe run; the multiplier is
// made odd). Returns 0, EINVAL (NULL out, or an initial capacity above 2^29), ENOMEM, or ENOTRECOVERABLE.
int cthr_rcu_flat_create(size_t initial_capacity, uint64_t seed, uint64_t multiplier,
                         cthr_rcu_flat_t *_Nullable *_Nullable out);

// Destroys the map: its memory is freed after a grace period, on the call_rcu worker, so it may be called anywhere,
// even inside a read section. No thread may use the map afterwards. Returns 0, or EINVAL for NULL. In a read-only
// forked child the map is left allocated (no grace period can run there).
int cthr_rcu_flat_destroy(cthr_rcu_flat_t *_Nullable map);

// The 64-bit hash of `key` in `map` (wyhash's mixer: one 64x64->128-bit multiply of the seeded key, folded).
static inline uint64_t cthr_rcu_flat_hash(const cthr_rcu_flat_t *_Nonnull map, uint64_t key) {
    __uint128_t product = (__uint128_t)(key ^ map->seed) * map->multiplier;
    return (uint64_t)(product >> 64) ^ (uint64_t)product;
}

// Looks `key` up; on a hit stores its value in *value (atomic acquire load: it pairs with the writer's release
// store) and returns 1, else returns 0 (also for a NULL map or value). Call inside a read section.
static inline int cthr_rcu_flat_get(const cthr_rcu_flat_t *_Nullable map, uint64_t key,
                                    uint64_t *_Nullable value) {
    if (__builtin_expect((map == NULL) | (value == NULL), 0)) return 0;
    const cthr_rcu_flat_array_t *array =
        (const cthr_rcu_flat_array_t *)cthr_atomic_ptr_load(&map->array, CTHR_ACQUIRE);
    uint64_t hash = cthr_rcu_flat_hash(map, key);
    uint8_t tag = (uint8_t)(CTHR_RCU_FLAT_FULL | (hash >> 57));
    uint64_t mask = array->mask;
    // Terminates: writers keep at least a quarter of the slots EMPTY (half, unless memory ran out).
    for (uint64_t index = hash & mask;; index = (index + 1) & mask) {
        uint8_t control = cthr_atomic_u8_load(&array->control[index], CTHR_ACQUIRE);
        if (control == tag && cthr_atomic_u64_load(&array->slots[index].key, CTHR_RELAXED) == key) {
            *value = cthr_atomic_u64_load(&array->slots[index].value, CTHR_ACQUIRE);
            return 1;
        }
        if (control == CTHR_RCU_FLAT_EMPTY) return 0;
    }
}

// The current array, for iteration with cthr_rcu_flat_slot_at; NULL for a NULL map. Call inside a read section;
// valid until it ends.
static inline const cthr_rcu_flat_array_t *_Nullable cthr_rcu_flat_current(const cthr_rcu_flat_t *_Nullable map) {
    return map == NULL ? NULL : (const cthr_rcu_flat_array_t *)cthr_atomic_ptr_load(&map->array, CTHR_ACQUIRE);
}

// The number of slots of `array` (0 for NULL); valid indexes for cthr_rcu_flat_slot_at are below it.
static inline uint64_t cthr_rcu_flat_capacity(const cthr_rcu_flat_array_t *_Nullable array) {
    return array == NULL ? 0 : array->mask + 1;
}

// If slot `index` of `array` holds a key, stores the key and its value and returns 1; else returns 0 (also for an
// index out of range or a NULL argument). Call inside the read section that produced `array`.
static inline int cthr_rcu_flat_slot_at(const cthr_rcu_flat_array_t *_Nullable array, uint64_t index,
                                        uint64_t *_Nullable key, uint64_t *_Nullable value) {
    if (array == NULL || key == NULL || value == NULL || index > array->mask) return 0;
    if (!(cthr_atomic_u8_load(&array->control[index], CTHR_ACQUIRE) & CTHR_RCU_FLAT_FULL)) return 0;
    *key = cthr_atomic_u64_load(&array->slots[index].key, CTHR_RELAXED);
    *value = cthr_atomic_u64_load(&array->slots[index].value, CTHR_ACQUIRE);
    return 1;
}

// The number of keys (exact when no writer runs; otherwise a value some writer order produced). 0 for NULL.
long cthr_rcu_flat_count(const cthr_rcu_flat_t *_Nullable map);

// Takes the writer lock of `key`'s stripe (for a read-modify-write update of `key`). Returns 0, EDEADLK if this
// thread holds that stripe already (through this key or another one on it), EINVAL for NULL, or ENOTRECOVERABLE in a
// read-only forked child.
int cthr_rcu_flat_lock(cthr_rcu_flat_t *_Nullable map, uint64_t key);

// Releases the writer lock of `key`'s stripe. Returns 0, EPERM if this thread does not hold it, or EINVAL for NULL.
int cthr_rcu_flat_unlock(cthr_rcu_flat_t *_Nullable map, uint64_t key);

// Stores `value` for `key` (in place if present, else in a new slot, rebuilding first if needed), taking the key's
// stripe lock around it. Returns 0, EDEADLK if this thread holds that stripe already (nothing changes), EINVAL for
// NULL, ENOMEM (no new array could be made and the array is too full to take the key; nothing changes), or
// ENOTRECOVERABLE.
int cthr_rcu_flat_set(cthr_rcu_flat_t *_Nullable map, uint64_t key, uint64_t value);

// Removes `key`, taking its stripe lock around it; stores its last value in *old when `old` is not NULL. Returns 0,
// ENOENT (absent), EDEADLK (this thread holds that stripe already), EINVAL for NULL, or ENOTRECOVERABLE.
int cthr_rcu_flat_remove(cthr_rcu_flat_t *_Nullable map, uint64_t key, uint64_t *_Nullable old);

// cthr_rcu_flat_set for a caller that holds `key`'s stripe lock. Returns 0, EPERM if it does not hold it (nothing
// changes), EINVAL for NULL, or ENOMEM.
int cthr_rcu_flat_set_locked(cthr_rcu_flat_t *_Nullable map, uint64_t key, uint64_t value);

// cthr_rcu_flat_remove for a caller that holds `key`'s stripe lock. Returns 0, ENOENT, EPERM (it does not hold it),
// or EINVAL for NULL.
int cthr_rcu_flat_remove_locked(cthr_rcu_flat_t *_Nullable map, uint64_t key, uint64_t *_Nullable old);

#ifdef __cplusplus
}
#endif
#endif // CTHREADING_RCU_H
