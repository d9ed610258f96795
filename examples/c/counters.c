// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors
//
// The C layer used from a C (or C++) server, built against the installed library through pkg-config:
//
//     scripts/c-package.sh install /usr/local
//     cc counters.c $(pkg-config --cflags --libs --static cthreading)
//
// Four named worker threads count requests per key: a futex lock (cthr_lock_t) guards a plain total, the RCU flat
// map holds the per-key counts (lock-free reads, striped writer locks), and the configuration is an RCU cell that a
// reader sees whole, old or new, never torn. Exits 0 when every count adds up.
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "CThreading.h"

enum { WORKERS = 4, REQUESTS = 20000, KEYS = 16 };

typedef struct config {
    uint64_t generation;
    uint64_t weight;  // always generation * 10: a reader that saw a torn config would see otherwise
} config_t;

typedef struct shared {
    cthr_lock_t total_lock;
    uint64_t total;
    cthr_rcu_flat_t *counts;
    cthr_rcu_cell_t *config;
    uint64_t torn;  // guarded by total_lock
} shared_t;

static void take(cthr_lock_t *lock) {
    if (!cthr_lock_fast_lock(lock)) (void)cthr_lock_lock_slow(lock, UINT64_MAX);
}

static void release(cthr_lock_t *lock) {
    if (!cthr_lock_fast_unlock(lock)) (void)cthr_lock_unlock_slow(lock);
}

static void *worker(void *context) {
    shared_t *shared = context;
    uint64_t torn = 0;
    for (uint64_t request = 0; request < REQUESTS; request++) {
        uint64_t key = request % KEYS;
        // Read side: no lock, no atomic read-modify-write.
        cthr_rcu_read_lock();
        const config_t *config = cthr_rcu_cell_get(shared->config);
        if (config->weight != config->generation * 10) torn++;
        cthr_rcu_read_unlock();
        // Per-key count: read-modify-write under the key's stripe lock.
        if (cthr_rcu_flat_lock(shared->counts, key) != 0) abort();
        uint64_t count = 0;
        cthr_rcu_read_lock();
        (void)cthr_rcu_flat_get(shared->counts, key, &count);
        cthr_rcu_read_unlock();
        if (cthr_rcu_flat_set_locked(shared->counts, key, count + 1) != 0) abort();
        if (cthr_rcu_flat_unlock(shared->counts, key) != 0) abort();
        take(&shared->total_lock);
        shared->total++;
        release(&shared->total_lock);
    }
    take(&shared->total_lock);
    shared->torn += torn;
    release(&shared->total_lock);
    return NULL;
}

static void free_config(void *old) { free(old); }

int main(void) {
    shared_t shared = {0};
    if (cthr_lock_init(&shared.total_lock) != 0) return 1;
    if (cthr_rcu_flat_create(KEYS, 0x9e3779b97f4a7c15u, 0xbf58476d1ce4e5b9u, &shared.counts) != 0) return 1;
    config_t *first = malloc(sizeof *first);
    if (first == NULL) return 1;
    *first = (config_t){.generation = 1, .weight = 10};
    if (cthr_rcu_cell_create(first, &shared.config) != 0) return 1;

    pthread_t threads[WORKERS];
    for (int index = 0; index < WORKERS; index++) {
        char name[CTHR_THREAD_NAME_MAX + 1];
        snprintf(name, sizeof name, "counter-%d", index);
        cthr_thread_attr_t attr = {.stack_size = 256 * 1024, .name = name};
        if (cthr_thread_create(&threads[index], &attr, worker, &shared) != 0) return 1;
    }
    // A writer replaces the configuration while the workers read it; old versions are freed after a grace period.
    for (uint64_t generation = 2; generation <= 50; generation++) {
        config_t *next = malloc(sizeof *next);
        if (next == NULL) return 1;
        *next = (config_t){.generation = generation, .weight = generation * 10};
        if (cthr_rcu_cell_lock(shared.config) != 0) return 1;
        void *old = cthr_rcu_cell_exchange(shared.config, next);
        (void)cthr_rcu_cell_unlock(shared.config);
        if (cthr_rcu_call(free_config, old) != 0) return 1;
    }
    for (int index = 0; index < WORKERS; index++) {
        if (cthr_thread_join(threads[index], NULL) != 0) return 1;
    }

    uint64_t sum = 0;
    cthr_rcu_read_lock();
    for (uint64_t key = 0; key < KEYS; key++) {
        uint64_t count = 0;
        (void)cthr_rcu_flat_get(shared.counts, key, &count);
        sum += count;
    }
    cthr_rcu_read_unlock();
    int ok = shared.total == WORKERS * REQUESTS && sum == shared.total && shared.torn == 0;
    printf("counters: %d threads x %d requests: total %llu, per-key sum %llu, torn configs %llu: %s\n", WORKERS,
           REQUESTS, (unsigned long long)shared.total, (unsigned long long)sum, (unsigned long long)shared.torn,
           ok ? "ok" : "WRONG");

    free(cthr_rcu_cell_destroy(shared.config));
    (void)cthr_rcu_flat_destroy(shared.counts);
    (void)cthr_rcu_barrier();
    return ok ? 0 : 1;
}
