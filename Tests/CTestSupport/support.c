// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/membarrier.h>
#include <malloc.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "CTestSupport.h"

#include <stdatomic.h>

#if defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define CTHR_TEST_SANITIZED 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define CTHR_TEST_SANITIZED 1
#endif

#ifndef CTHR_TEST_SANITIZED
// Allocation counting: the test executable's definitions take precedence over libc's for the whole process, and
// forward to glibc's own entry points (so memory from either side is freed by the one free()). Relaxed: only the
// total matters, read after the counted work joined.
static atomic_ulong allocations;
// The same, made by the threads that called cthr_test_count_this_thread() (a static TLS slot of the executable: no
// allocation to reach it).
static atomic_ulong marked_allocations;
static _Thread_local int thread_is_marked;

extern void *__libc_malloc(size_t size);
extern void *__libc_calloc(size_t count, size_t size);
extern void *__libc_realloc(void *pointer, size_t size);
extern void *__libc_memalign(size_t alignment, size_t size);
extern void *__libc_valloc(size_t size);

static inline void count_allocation(void) {
    atomic_fetch_add_explicit(&allocations, 1, memory_order_relaxed);
    if (thread_is_marked) atomic_fetch_add_explicit(&marked_allocations, 1, memory_order_relaxed);
}

void *malloc(size_t size) {
    count_allocation();
    return __libc_malloc(size);
}

void *calloc(size_t count, size_t size) {
    count_allocation();
    return __libc_calloc(count, size);
}

void *realloc(void *pointer, size_t size) {
    count_allocation();
    return __libc_realloc(pointer, size);
}

void *memalign(size_t alignment, size_t size) {
    count_allocation();
    return __libc_memalign(alignment, size);
}

void *aligned_alloc(size_t alignment, size_t size) {
    count_allocation();
    return __libc_memalign(alignment, size);
}

void *valloc(size_t size) {
    count_allocation();
    return __libc_valloc(size);
}

int posix_memalign(void **result, size_t alignment, size_t size) {
    if (alignment % sizeof(void *) != 0 || (alignment & (alignment - 1)) != 0) return EINVAL;
    count_allocation();
    void *pointer = __libc_memalign(alignment, size);
    if (pointer == NULL) return ENOMEM;
    *result = pointer;
    return 0;
}

unsigned long cthr_test_allocations(void) { return atomic_load_explicit(&allocations, memory_order_relaxed); }

void cthr_test_count_this_thread(void) { thread_is_marked = 1; }

unsigned long cthr_test_marked_thread_allocations(void) {
    return atomic_load_explicit(&marked_allocations, memory_order_relaxed);
}

int cthr_test_allocations_counted(void) { return 1; }
#else
unsigned long cthr_test_allocations(void) { return 0; }

void cthr_test_count_this_thread(void) {}

unsigned long cthr_test_marked_thread_allocations(void) { return 0; }

int cthr_test_allocations_counted(void) { return 0; }
#endif

size_t cthr_test_heap_in_use(void) {
    struct mallinfo2 info = mallinfo2();
    return info.uordblks + info.hblkhd;
}

int cthr_test_heap_trim(void) { return malloc_trim(0); }

_Static_assert(CTHR_TEST_MEMBARRIER_CMD_SHARED == MEMBARRIER_CMD_SHARED, "MEMBARRIER_CMD_SHARED");
_Static_assert(CTHR_TEST_MEMBARRIER_CMD_PRIVATE_EXPEDITED == MEMBARRIER_CMD_PRIVATE_EXPEDITED,
               "MEMBARRIER_CMD_PRIVATE_EXPEDITED");

int cthr_test_membarrier_query(void) {
#ifdef SYS_membarrier
    long mask = syscall(SYS_membarrier, MEMBARRIER_CMD_QUERY, 0);
    return mask < 0 ? -errno : (int)mask;
#else
    return -ENOSYS;
#endif
}

int cthr_test_pin_to_one_cpu(void) {
    cpu_set_t set;
    CPU_ZERO(&set);
    int error = pthread_getaffinity_np(pthread_self(), sizeof set, &set);
    if (error != 0) return error;
    int last = -1;
    for (int cpu = 0; cpu < CPU_SETSIZE; cpu++) {
        if (CPU_ISSET((size_t)cpu, &set)) last = cpu;
    }
    if (last < 0) return EINVAL;
    CPU_ZERO(&set);
    CPU_SET((size_t)last, &set);
    return pthread_setaffinity_np(pthread_self(), sizeof set, &set);
}

struct cthr_test_lock_waiter {
    pthread_t thread;
    cthr_lock_t *lock;
    uint64_t deadline_ns;
    atomic_int state;
    atomic_int tid;
};

static void *cthr_test_lock_waiter_body(void *argument) {
    cthr_test_lock_waiter_t *waiter = argument;
    atomic_store_explicit(&waiter->tid, (int)syscall(SYS_gettid), memory_order_relaxed);
    atomic_store_explicit(&waiter->state, CTHR_TEST_WAITER_WAITING, memory_order_release);
    int code = cthr_lock_lock_slow(waiter->lock, waiter->deadline_ns);
    if (code == 0 && !cthr_lock_fast_unlock(waiter->lock)) (void)cthr_lock_unlock_slow(waiter->lock);
    atomic_store_explicit(&waiter->state, code == 0 ? CTHR_TEST_WAITER_TOOK : CTHR_TEST_WAITER_FAILED,
                          memory_order_release);
    return NULL;
}

cthr_test_lock_waiter_t *cthr_test_lock_waiter_start(cthr_lock_t *lock, uint64_t deadline_ns) {
    cthr_test_lock_waiter_t *waiter = calloc(1, sizeof *waiter);
    if (waiter == NULL) return NULL;
    waiter->lock = lock;
    waiter->deadline_ns = deadline_ns;
    int code = pthread_create(&waiter->thread, NULL, cthr_test_lock_waiter_body, waiter);
    if (code != 0) {
        free(waiter);
        errno = code;
        return NULL;
    }
    return waiter;
}

cthr_test_lock_waiter_state_t cthr_test_lock_waiter_state(const cthr_test_lock_waiter_t *waiter) {
    return (cthr_test_lock_waiter_state_t)atomic_load_explicit(&waiter->state, memory_order_acquire);
}

int32_t cthr_test_lock_waiter_tid(const cthr_test_lock_waiter_t *waiter) {
    return atomic_load_explicit(&waiter->tid, memory_order_relaxed);
}

cthr_test_lock_waiter_state_t cthr_test_lock_waiter_join(cthr_test_lock_waiter_t *waiter) {
    (void)pthread_join(waiter->thread, NULL);
    cthr_test_lock_waiter_state_t state = cthr_test_lock_waiter_state(waiter);
    free(waiter);
    return state;
}

char cthr_test_thread_state(int32_t tid) {
    char path[64];
    (void)snprintf(path, sizeof path, "/proc/self/task/%d/stat", (int)tid);
    int descriptor = open(path, O_RDONLY | O_CLOEXEC);
    if (descriptor < 0) return '?';
    char line[512];
    ssize_t length = read(descriptor, line, sizeof line - 1);
    close(descriptor);
    if (length <= 0) return '?';
    line[length] = '\0';
    // The state follows the name, which is in parentheses and may hold any character.
    const char *name_end = strrchr(line, ')');
    if (name_end == NULL || name_end[1] == '\0' || name_end[2] == '\0') return '?';
    return name_end[2];
}

int cthr_test_busy_threads(void) {
    long self = (long)syscall(SYS_gettid);
    DIR *tasks = opendir("/proc/self/task");
    if (tasks == NULL) return -1;
    int busy = 0;
    struct dirent *entry;
    while ((entry = readdir(tasks)) != NULL) {
        if (entry->d_name[0] < '0' || entry->d_name[0] > '9') continue;
        long tid = strtol(entry->d_name, NULL, 10);
        if (tid == self) continue;
        char state = cthr_test_thread_state((int32_t)tid);  // '?': the thread exited meanwhile
        if (state == 'R' || state == 'D') busy++;
    }
    closedir(tasks);
    return busy;
}
