// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

// POSIX threads: create with attributes, join, detach, identity, names, stack sizes, CPU counts, nice values.
#ifndef CTHREADING_THREAD_H
#define CTHREADING_THREAD_H

#include "cthr_nullability.h"
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

// Entry point of a thread: receives the context given to `cthr_thread_create`; its return value is the exit value
// that `cthr_thread_join` hands back.
typedef void *_Nullable (*cthr_thread_body_t)(void *_Nullable context);

// Longest thread name Linux keeps, without the terminating NUL (longer names are truncated, not rejected).
#define CTHR_THREAD_NAME_MAX 15

// Attributes of a new thread. A zeroed struct means: default stack, joinable, no name.
typedef struct cthr_thread_attr {
    // Requested stack size in bytes. 0 = the system default. A size below `cthr_thread_stack_min()` or not a
    // multiple of the page size is rounded up (libuv's behaviour); a size the system cannot map returns its error.
    size_t stack_size;
    // Nonzero: the thread starts detached (it cannot be joined; its resources are freed when it exits).
    int detached;
    // NUL-terminated name applied to the new thread before `body` runs (truncated to CTHR_THREAD_NAME_MAX bytes);
    // NULL for none. Copied during the call.
    const char *_Nullable name;
} cthr_thread_attr_t;

// Starts `body(context)` on a new thread. `attr` may be NULL (defaults). On success stores the handle in *out
// (always, even for a detached thread: it may only be compared, not joined) and returns 0; otherwise returns
// EAGAIN (no resources / RLIMIT_NPROC), EINVAL (NULL out or body, or a stack size the system rejects), ENOMEM or
// EPERM, and `body` never runs.
int cthr_thread_create(pthread_t *_Nullable out, const cthr_thread_attr_t *_Nullable attr,
                       cthr_thread_body_t _Nullable body, void *_Nullable context);

// Waits for a joinable `thread` to exit and stores its exit value in *result (result may be NULL).
// Returns 0, EDEADLK (joining yourself), EINVAL (not joinable) or ESRCH. Joining twice is undefined in POSIX:
// the Swift layer makes it impossible.
int cthr_thread_join(pthread_t thread, void *_Nullable *_Nullable result);

// Like cthr_thread_join, but waits at most until `deadline_ns` on CLOCK_MONOTONIC (UINT64_MAX: forever; a deadline
// already passed: one check). Returns 0, ETIMEDOUT (the thread is still running and stays joinable), EDEADLK,
// EINVAL or ESRCH.
int cthr_thread_join_until(pthread_t thread, void *_Nullable *_Nullable result, uint64_t deadline_ns);

// Marks a joinable `thread` detached. Returns 0, EINVAL (already detached) or ESRCH.
int cthr_thread_detach(pthread_t thread);

// The calling thread's handle.
pthread_t cthr_thread_self(void);

// Whether two handles name the same thread.
bool cthr_thread_equal(pthread_t a, pthread_t b);

// Whether the calling thread is the process's main thread (on Linux: its thread id equals the process id).
bool cthr_thread_is_main(void);

// The calling thread's kernel thread id (gettid), cached per thread.
pid_t cthr_thread_id(void);

// In a fork()ed child: how many of the Swift runtime's per-thread caches of the thread id (the ones its once-lock,
// behind every global initializer, locks with) the fork reset for the forking thread; 0 in a process that was not
// forked, or where none was found (a runtime without a symbol table). Without the reset, the child's first thread
// keeps its parent's id and a child whose first two threads both initialise a global can hang for ever.
size_t cthr_fork_reset_thread_id_caches(void);

// Whether thread `tid` of this process sleeps in the kernel now: sets *sleeping to whether /proc/self/task/<tid>/stat
// says S (interruptible sleep) or D (uninterruptible, disk); false for any other state (running, runnable). Returns 0,
// or an errno value (ENOENT: no such thread; EIO: an unreadable line). One open, read and close.
int cthr_thread_is_sleeping(pid_t tid, bool *_Nullable sleeping);

// Gives up the processor (sched_yield). Returns 0.
int cthr_thread_yield(void);

// The smallest stack size the system accepts (PTHREAD_STACK_MIN, a function call under _GNU_SOURCE).
size_t cthr_thread_stack_min(void);

// The size `cthr_thread_create` will request for `requested` bytes: 0 stays 0 (default); anything else is raised
// to at least `cthr_thread_stack_min()` and rounded up to the page size. Saturates instead of overflowing.
size_t cthr_thread_stack_size_for(size_t requested);

// Stores the calling thread's actual stack size (pthread_getattr_np) in *out. Returns 0, EINVAL (NULL) or the
// system's error.
int cthr_thread_current_stack_size(size_t *_Nullable out);

// Names the calling thread (truncated to CTHR_THREAD_NAME_MAX bytes). Returns 0, EINVAL (NULL) or the error.
int cthr_thread_set_name(const char *_Nullable name);

// Copies the calling thread's name into buffer (capacity bytes, at least CTHR_THREAD_NAME_MAX + 1 for the whole
// name). Returns 0, EINVAL (NULL buffer) or ERANGE (buffer too small, capacity 0 included: the size exception of
// the conventions in CThreading.h).
int cthr_thread_get_name(char *_Nullable buffer, size_t capacity);

// Number of CPUs the calling thread may run on (its affinity mask, which threads it creates inherit; the process's
// mask unless someone pinned this thread), at least 1. Falls back to the online CPU count if the mask is unreadable.
int cthr_cpu_count(void);

// Reads the CPU quota of the cgroup the process runs in. `proc_cgroup` is the file that names the process's cgroups
// (normally "/proc/self/cgroup"), `fs_root` the cgroup file system's mount point (normally "/sys/fs/cgroup"); tests
// point both at fixtures. With a cgroup v1 line for the `cpu` controller it reads `cpu.cfs_quota_us` and
// `cpu.cfs_period_us` under `fs_root/<controllers>/<path>` (or `fs_root/cpu/<path>`), otherwise the v2 line's
// `fs_root/<path>/cpu.max` ("max 100000", "150000 100000"), at the process's cgroup and every ancestor up to the
// root; missing files are skipped. Stores in *out the smallest quota found, in CPUs rounded up (at least 1), or 0
// when no level sets one. Returns 0, EINVAL (NULL argument, or a quota file that does not parse) or the error of
// opening `proc_cgroup` (ENOENT when there is none).
int cthr_cgroup_cpu_limit(const char *_Nullable proc_cgroup, const char *_Nullable fs_root, int *_Nullable out);

// Number of CPUs the process can use: `cthr_cpu_count()` (the affinity mask) lowered to the cgroup CPU quota of
// "/proc/self/cgroup" under "/sys/fs/cgroup" when there is one (`cthr_cgroup_cpu_limit`), at least 1. Where the
// cgroup files are missing or unreadable, the affinity count alone.
int cthr_cpu_effective_count(void);

// Sets the calling thread's nice value (-20...19; Linux applies it per thread). Returns 0, EINVAL (out of range),
// or EACCES/EPERM when raising priority is not allowed.
int cthr_thread_set_nice(int nice_value);

// Stores the calling thread's nice value in *out. Returns 0 or EINVAL (NULL).
int cthr_thread_get_nice(int *_Nullable out);

#ifdef __cplusplus
}
#endif
#endif // CTHREADING_THREAD_H
