// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

// What the tests need from the C library that Swift's Glibc module does not expose (malloc.h).
#ifndef CTHREADING_TEST_SUPPORT_H
#define CTHREADING_TEST_SUPPORT_H

#include <stddef.h>
#include <stdint.h>

#include "cthr_lock.h"

// Bytes malloc has handed out and not had back, over every arena plus mmapped blocks (mallinfo2: uordblks + hblkhd).
size_t cthr_test_heap_in_use(void);

// Gives the allocator's free pages back to the system (malloc_trim(0)). Returns 1 if memory was released, else 0.
int cthr_test_heap_trim(void);

// membarrier(2) command bits, as in <linux/membarrier.h> (Swift cannot import that enum's values by these names).
#define CTHR_TEST_MEMBARRIER_CMD_SHARED 1
#define CTHR_TEST_MEMBARRIER_CMD_PRIVATE_EXPEDITED 8

// What the kernel answers to membarrier(MEMBARRIER_CMD_QUERY, 0): the mask of supported commands, or -errno when
// the call fails (no membarrier, or a seccomp filter refusing it). Swift cannot call the variadic syscall(2).
int cthr_test_membarrier_query(void);

// Pins the calling thread to the highest-numbered CPU of its affinity mask (Swift cannot use the CPU_SET macros).
// Returns 0 or the pthread_getaffinity_np / pthread_setaffinity_np error.
int cthr_test_pin_to_one_cpu(void);

// Heap allocations (malloc, calloc, realloc, memalign, posix_memalign, aligned_alloc, valloc) made by every thread of
// the process since it started. The test binary counts them by defining those functions over glibc's __libc_*
// entry points; under AddressSanitizer or ThreadSanitizer, whose runtimes own malloc, nothing is counted and
// cthr_test_allocations_counted() returns 0.
unsigned long cthr_test_allocations(void);

// Marks the calling thread: from now on its allocations also count in cthr_test_marked_thread_allocations(), so a
// test can count the threads whose path it measures and leave out the process's other threads (timers, monitors).
void cthr_test_count_this_thread(void);

// Heap allocations made by marked threads since they were marked (0 under a sanitizer).
unsigned long cthr_test_marked_thread_allocations(void);

// 1 when cthr_test_allocations() counts (a plain glibc build), 0 under a sanitizer.
int cthr_test_allocations_counted(void);

// The kernel's state letter for the thread `tid` of this process (`R` running or runnable, `S` asleep, `D` in an
// uninterruptible wait, ...), by `/proc/self/task/<tid>/stat`; '?' when it cannot be read (the thread exited).
char cthr_test_thread_state(int32_t tid);

// How many threads of this process other than the caller are running or runnable (`R`) or in an uninterruptible
// wait (`D`), by `/proc/self/task/*/stat`; -1 when it cannot be read.
int cthr_test_busy_threads(void);

// A thread made of C alone that takes `lock` with `cthr_lock_lock_slow` (until `deadline_ns`) and releases it: a
// waiter for a forked child of a multi-threaded process, where a new thread that runs Swift may need a lock of the
// Swift runtime (a metadata cache's, a once) that a thread of the parent held at the fork, and wait for ever.
typedef struct cthr_test_lock_waiter cthr_test_lock_waiter_t;

// What the waiter has done so far.
typedef enum cthr_test_lock_waiter_state {
    CTHR_TEST_WAITER_NOT_STARTED = 0,  // its body has not begun
    CTHR_TEST_WAITER_WAITING = 1,      // inside `cthr_lock_lock_slow`
    CTHR_TEST_WAITER_TOOK = 2,         // took the lock and released it
    CTHR_TEST_WAITER_FAILED = 3,       // `cthr_lock_lock_slow` returned an error (the deadline passed)
} cthr_test_lock_waiter_state_t;

// Starts the waiter; NULL (errno set) when the thread or its memory cannot be had.
cthr_test_lock_waiter_t *_Nullable cthr_test_lock_waiter_start(cthr_lock_t *_Nonnull lock, uint64_t deadline_ns);

// The waiter's state now (acquire).
cthr_test_lock_waiter_state_t cthr_test_lock_waiter_state(const cthr_test_lock_waiter_t *_Nonnull waiter);

// The waiter's kernel thread id, 0 until its body began.
int32_t cthr_test_lock_waiter_tid(const cthr_test_lock_waiter_t *_Nonnull waiter);

// Joins the waiter's thread and frees it; returns its last state.
cthr_test_lock_waiter_state_t cthr_test_lock_waiter_join(cthr_test_lock_waiter_t *_Nonnull waiter);

#endif // CTHREADING_TEST_SUPPORT_H
