// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "cthr_clock.h"
#include "cthr_lock.h"
#include "cthr_thread.h"

// What the new thread needs before it runs `body`: allocated by the creator, freed by whichever side ends up
// owning it (the new thread once it has started, the creator when pthread_create fails).
typedef struct cthr_thread_start {
    cthr_thread_body_t body;
    void *context;
    int has_name;
    char name[CTHR_THREAD_NAME_MAX + 1];
} cthr_thread_start_t;

// Copies at most CTHR_THREAD_NAME_MAX bytes of `name` into `out` (NUL-terminated), never splitting a UTF-8
// sequence: a truncated name stays valid UTF-8.
static void cthr_copy_name(char *out, const char *name) {
    size_t length = strnlen(name, CTHR_THREAD_NAME_MAX + 1);
    if (length > CTHR_THREAD_NAME_MAX) {
        length = CTHR_THREAD_NAME_MAX;
        // Back up over continuation bytes (10xxxxxx) so the cut falls on a character boundary.
        while (length > 0 && ((unsigned char)name[length] & 0xC0) == 0x80) {
            length--;
        }
    }
    memcpy(out, name, length);
    out[length] = '\0';
}

static void *cthr_thread_trampoline(void *argument) {
    cthr_thread_start_t *start = argument;
    cthr_thread_body_t body = start->body;
    void *context = start->context;
    if (start->has_name) {
        // The name is set by the thread itself, before the body runs, so the body always sees it. A failure
        // here cannot be reported to anyone (the creator has returned); the name is simply absent.
        (void)pthread_setname_np(pthread_self(), start->name);
    }
    free(start);
    return body(context);
}

int cthr_thread_create(pthread_t *out, const cthr_thread_attr_t *attr, cthr_thread_body_t body, void *context) {
    if (out == NULL || body == NULL) {
        return EINVAL;
    }
    cthr_thread_start_t *start = malloc(sizeof *start);
    if (start == NULL) {
        return ENOMEM;
    }
    start->body = body;
    start->context = context;
    start->has_name = 0;
    start->name[0] = '\0';

    pthread_attr_t pattr;
    int error = pthread_attr_init(&pattr);
    if (error != 0) {
        free(start);
        return error;
    }
    if (attr != NULL) {
        if (attr->name != NULL) {
            cthr_copy_name(start->name, attr->name);
            start->has_name = 1;
        }
        size_t stack_size = cthr_thread_stack_size_for(attr->stack_size);
        if (stack_size != 0) {
            error = pthread_attr_setstacksize(&pattr, stack_size);
        }
        if (error == 0 && attr->detached) {
            error = pthread_attr_setdetachstate(&pattr, PTHREAD_CREATE_DETACHED);
        }
    }
    if (error == 0) {
        error = pthread_create(out, &pattr, cthr_thread_trampoline, start);
    }
    (void)pthread_attr_destroy(&pattr);
    if (error != 0) {
        free(start);
    }
    return error;
}

int cthr_thread_join(pthread_t thread, void **result) {
    void *value = NULL;
    int error = pthread_join(thread, &value);
    if (error == 0 && result != NULL) {
        *result = value;
    }
    return error;
}

// pthread_timedjoin_np measures its deadline on CLOCK_REALTIME, which can be stepped. The wait is cut into slices of
// at most this long, each re-checked against the monotonic deadline, so a step of the wall clock moves the end of
// the wait by one slice at most. (pthread_clockjoin_np takes CLOCK_MONOTONIC, but ThreadSanitizer does not intercept
// it and would then miss the join.)
#define CTHR_JOIN_SLICE_NS 100000000ull

int cthr_thread_join_until(pthread_t thread, void **result, uint64_t deadline_ns) {
    if (deadline_ns == UINT64_MAX) {
        return cthr_thread_join(thread, result);
    }
    for (;;) {
        uint64_t now = cthr_clock_now_ns();
        uint64_t slice = now >= deadline_ns ? 0 : deadline_ns - now;
        if (slice > CTHR_JOIN_SLICE_NS) {
            slice = CTHR_JOIN_SLICE_NS;
        }
        struct timespec until;
        (void)clock_gettime(CLOCK_REALTIME, &until);
        uint64_t nanoseconds = (uint64_t)until.tv_nsec + slice;
        until.tv_sec += (time_t)(nanoseconds / 1000000000ull);
        until.tv_nsec = (long)(nanoseconds % 1000000000ull);
        void *value = NULL;
        int error = pthread_timedjoin_np(thread, &value, &until);
        if (error == 0) {
            if (result != NULL) {
                *result = value;
            }
            return 0;
        }
        if (error != ETIMEDOUT) {
            return error;
        }
        if (cthr_clock_now_ns() >= deadline_ns) {
            return ETIMEDOUT;
        }
    }
}

int cthr_thread_detach(pthread_t thread) {
    return pthread_detach(thread);
}

pthread_t cthr_thread_self(void) {
    return pthread_self();
}

bool cthr_thread_equal(pthread_t a, pthread_t b) {
    return pthread_equal(a, b) != 0;
}

// One thread-id cache for the whole C layer: the lock's (`cthr_lock_self`, reset in a forked child by lock.c).
pid_t cthr_thread_id(void) { return (pid_t)cthr_lock_self(); }

bool cthr_thread_is_main(void) {
    return cthr_thread_id() == getpid();
}

int cthr_thread_yield(void) {
    (void)sched_yield();
    return 0;
}

size_t cthr_thread_stack_min(void) {
    return (size_t)PTHREAD_STACK_MIN;
}

size_t cthr_thread_stack_size_for(size_t requested) {
    if (requested == 0) {
        return 0;
    }
    size_t minimum = cthr_thread_stack_min();
    size_t size = requested < minimum ? minimum : requested;
    long page_size_value = sysconf(_SC_PAGESIZE);
    size_t page = page_size_value > 0 ? (size_t)page_size_value : 4096u;
    size_t remainder = size % page;
    if (remainder != 0) {
        size_t round_up = page - remainder;
        // Saturate at the largest page multiple instead of wrapping to a tiny size.
        size = (SIZE_MAX - size < round_up) ? (SIZE_MAX / page) * page : size + round_up;
    }
    return size;
}

int cthr_thread_current_stack_size(size_t *out) {
    if (out == NULL) {
        return EINVAL;
    }
    pthread_attr_t attr;
    int error = pthread_getattr_np(pthread_self(), &attr);
    if (error != 0) {
        return error;
    }
    size_t size = 0;
    error = pthread_attr_getstacksize(&attr, &size);
    (void)pthread_attr_destroy(&attr);
    if (error == 0) {
        *out = size;
    }
    return error;
}

int cthr_thread_set_name(const char *name) {
    if (name == NULL) {
        return EINVAL;
    }
    char truncated[CTHR_THREAD_NAME_MAX + 1];
    cthr_copy_name(truncated, name);
    return pthread_setname_np(pthread_self(), truncated);
}

int cthr_thread_get_name(char *buffer, size_t capacity) {
    if (buffer == NULL) {
        return EINVAL;
    }
    char name[CTHR_THREAD_NAME_MAX + 1];
    int error = pthread_getname_np(pthread_self(), name, sizeof name);
    if (error != 0) {
        return error;
    }
    size_t length = strnlen(name, sizeof name - 1);
    if (capacity <= length) {
        return ERANGE;
    }
    memcpy(buffer, name, length);
    buffer[length] = '\0';
    return 0;
}

int cthr_cpu_count(void) {
    cpu_set_t set;
    CPU_ZERO(&set);
    // pid 0 is the calling thread: its mask, which the threads it creates inherit (getpid() would be the main
    // thread's mask, which may differ and which the kernel no longer reports once the main thread has exited).
    if (sched_getaffinity(0, sizeof set, &set) == 0) {
        int count = CPU_COUNT(&set);
        if (count > 0) {
            return count;
        }
    }
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    return online > 0 ? (int)(online > INT_MAX ? INT_MAX : online) : 1;
}

// Reads the whole (small) file at `path` into `buffer` (NUL-terminated). Returns 0 or the error of open/read;
// ERANGE when it does not fit.
static int cthr_read_small_file(const char *path, char *buffer, size_t capacity) {
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        return errno;
    }
    size_t used = 0;
    while (used + 1 < capacity) {
        ssize_t got = read(fd, buffer + used, capacity - 1 - used);
        if (got < 0) {
            if (errno == EINTR) {
                continue;
            }
            int code = errno;
            close(fd);
            return code;
        }
        if (got == 0) {
            break;
        }
        used += (size_t)got;
    }
    int full = used + 1 >= capacity;
    close(fd);
    buffer[used] = '\0';
    return full ? ERANGE : 0;
}

// Parses a non-negative decimal integer at *cursor (leading spaces skipped), advancing it. Returns 0 or EINVAL.
static int cthr_parse_u64(const char **cursor, uint64_t *out) {
    const char *p = *cursor;
    while (*p == ' ' || *p == '\t') {
        p++;
    }
    if (*p < '0' || *p > '9') {
        return EINVAL;
    }
    uint64_t value = 0;
    while (*p >= '0' && *p <= '9') {
        uint64_t digit = (uint64_t)(*p - '0');
        if (value > (UINT64_MAX - digit) / 10) {
            return EINVAL;
        }
        value = value * 10 + digit;
        p++;
    }
    *cursor = p;
    *out = value;
    return 0;
}

// Whether only white space follows.
static int cthr_rest_is_blank(const char *p) {
    while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r') {
        p++;
    }
    return *p == '\0';
}

// CPUs of a quota (rounded up, at least 1, saturating at INT_MAX). `period` must be positive.
static int cthr_quota_cpus(uint64_t quota, uint64_t period) {
    uint64_t cpus = quota / period + (quota % period != 0);
    if (cpus == 0) {
        cpus = 1;
    }
    return cpus > INT_MAX ? INT_MAX : (int)cpus;
}

// Reads the file `name` of the cgroup directory `dir` into `text`. Returns 0, or nonzero when it is absent or
// unreadable (a path too long counts as absent).
static int cthr_cgroup_read(const char *dir, const char *name, char *text, size_t capacity) {
    char path[PATH_MAX];
    if (snprintf(path, sizeof path, "%s/%s", dir, name) >= (int)sizeof path) {
        return ENAMETOOLONG;
    }
    return cthr_read_small_file(path, text, capacity);
}

// Parses "<number><blank>" at `cursor` into *out. Returns 0 or EINVAL.
static int cthr_parse_last_u64(const char *cursor, uint64_t *out) {
    return cthr_parse_u64(&cursor, out) == 0 && cthr_rest_is_blank(cursor) ? 0 : EINVAL;
}

// Reads one cgroup directory's quota: *cpus = CPUs (0 = no quota, or no file here). Returns 0 or EINVAL.
static int cthr_cgroup_level_limit(const char *dir, int v1, int *cpus) {
    char text[128];
    *cpus = 0;
    uint64_t quota = 0;
    uint64_t period = 0;
    if (v1) {
        if (cthr_cgroup_read(dir, "cpu.cfs_quota_us", text, sizeof text) != 0) {
            return 0;
        }
        const char *cursor = text;
        while (*cursor == ' ') {
            cursor++;
        }
        if (*cursor == '-') {
            // -1: no quota at this level.
            return cursor[1] == '1' && cthr_rest_is_blank(cursor + 2) ? 0 : EINVAL;
        }
        if (cthr_parse_last_u64(cursor, &quota) != 0) {
            return EINVAL;
        }
        // A quota without a readable period cannot be read.
        if (cthr_cgroup_read(dir, "cpu.cfs_period_us", text, sizeof text) != 0
            || cthr_parse_last_u64(text, &period) != 0 || period == 0) {
            return EINVAL;
        }
        *cpus = cthr_quota_cpus(quota, period);
        return 0;
    }
    if (cthr_cgroup_read(dir, "cpu.max", text, sizeof text) != 0) {
        return 0;
    }
    const char *cursor = text;
    while (*cursor == ' ') {
        cursor++;
    }
    int unlimited = strncmp(cursor, "max", 3) == 0;
    if (unlimited) {
        cursor += 3;
    } else if (cthr_parse_u64(&cursor, &quota) != 0) {
        return EINVAL;
    }
    if (cthr_parse_last_u64(cursor, &period) != 0 || period == 0) {
        return EINVAL;
    }
    *cpus = unlimited ? 0 : cthr_quota_cpus(quota, period);
    return 0;
}

// Walks from `dir` (= root + relative path) up to `root`, keeping the smallest quota. Returns 0 or EINVAL.
static int cthr_cgroup_walk(const char *root, const char *relative, int v1, int *out) {
    char dir[PATH_MAX];
    size_t root_length = strlen(root);
    while (root_length > 1 && root[root_length - 1] == '/') {
        root_length--;
    }
    if (snprintf(dir, sizeof dir, "%.*s%s%s", (int)root_length, root, relative[0] == '/' ? "" : "/", relative)
        >= (int)sizeof dir) {
        return EINVAL;
    }
    size_t length = strlen(dir);
    while (length > root_length && dir[length - 1] == '/') {
        dir[--length] = '\0';
    }
    int best = 0;
    while (1) {
        int cpus = 0;
        int code = cthr_cgroup_level_limit(dir, v1, &cpus);
        if (code != 0) {
            return code;
        }
        if (cpus > 0 && (best == 0 || cpus < best)) {
            best = cpus;
        }
        if (length <= root_length) {
            break;
        }
        while (length > root_length && dir[length - 1] != '/') {
            length--;
        }
        while (length > root_length && dir[length - 1] == '/') {
            length--;
        }
        dir[length] = '\0';
    }
    *out = best;
    return 0;
}

// Whether the comma-separated controller list [list, end) names `cpu`.
static int cthr_lists_cpu(const char *list, const char *end) {
    const char *p = list;
    while (p < end) {
        const char *comma = memchr(p, ',', (size_t)(end - p));
        const char *stop = comma ? comma : end;
        if (stop - p == 3 && strncmp(p, "cpu", 3) == 0) {
            return 1;
        }
        p = stop + 1;
    }
    return 0;
}

int cthr_cgroup_cpu_limit(const char *proc_cgroup, const char *fs_root, int *out) {
    if (proc_cgroup == NULL || fs_root == NULL || out == NULL) {
        return EINVAL;
    }
    char text[4096];
    int code = cthr_read_small_file(proc_cgroup, text, sizeof text);
    if (code != 0 && code != ERANGE) {
        return code;
    }
    // Lines are "id:controllers:path"; v2 is "0::path". A v1 `cpu` controller wins (hybrid hierarchies put the cpu
    // controller there).
    char v1_dir[PATH_MAX] = {0};
    char v1_alt[PATH_MAX] = {0};
    char v1_path[PATH_MAX] = {0};
    char v2_path[PATH_MAX] = {0};
    int have_v1 = 0;
    int have_v2 = 0;
    char *line = text;
    while (*line != '\0') {
        char *newline = strchr(line, '\n');
        if (newline != NULL) {
            *newline = '\0';
        }
        char *first = strchr(line, ':');
        char *second = first ? strchr(first + 1, ':') : NULL;
        if (second != NULL) {
            const char *path = second + 1;
            if (first + 1 == second && !have_v2) {
                have_v2 = snprintf(v2_path, sizeof v2_path, "%s", path) < (int)sizeof v2_path;
            } else if (!have_v1 && cthr_lists_cpu(first + 1, second)) {
                int list_length = (int)(second - first - 1);
                have_v1 = snprintf(v1_dir, sizeof v1_dir, "%s/%.*s", fs_root, list_length, first + 1)
                          < (int)sizeof v1_dir;
                have_v1 = have_v1 && snprintf(v1_alt, sizeof v1_alt, "%s/cpu", fs_root) < (int)sizeof v1_alt;
                have_v1 = have_v1 && snprintf(v1_path, sizeof v1_path, "%s", path) < (int)sizeof v1_path;
            }
        }
        if (newline == NULL) {
            break;
        }
        line = newline + 1;
    }
    if (have_v1) {
        // The controllers' own mount, or the conventional `cpu` link to it.
        if (access(v1_dir, F_OK) != 0) {
            return cthr_cgroup_walk(v1_alt, v1_path, 1, out);
        }
        return cthr_cgroup_walk(v1_dir, v1_path, 1, out);
    }
    if (have_v2) {
        return cthr_cgroup_walk(fs_root, v2_path, 0, out);
    }
    *out = 0;
    return 0;
}

int cthr_cpu_effective_count(void) {
    int count = cthr_cpu_count();
    int limit = 0;
    if (cthr_cgroup_cpu_limit("/proc/self/cgroup", "/sys/fs/cgroup", &limit) == 0 && limit > 0 && limit < count) {
        count = limit;
    }
    return count < 1 ? 1 : count;
}

int cthr_thread_set_nice(int nice_value) {
    if (nice_value < -20 || nice_value > 19) {
        return EINVAL;
    }
    // On Linux, PRIO_PROCESS with a thread id changes only that thread (a documented deviation from POSIX).
    if (setpriority(PRIO_PROCESS, (id_t)cthr_thread_id(), nice_value) != 0) {
        return errno;
    }
    return 0;
}

int cthr_thread_get_nice(int *out) {
    if (out == NULL) {
        return EINVAL;
    }
    // getpriority legitimately returns -1, so errno is the only failure signal.
    errno = 0;
    int value = getpriority(PRIO_PROCESS, (id_t)cthr_thread_id());
    if (value == -1 && errno != 0) {
        return errno;
    }
    *out = value;
    return 0;
}

int cthr_thread_is_sleeping(pid_t tid, bool *sleeping) {
    if (sleeping == NULL) {
        return EINVAL;
    }
    char path[64];
    (void)snprintf(path, sizeof path, "/proc/self/task/%d/stat", (int)tid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        return errno;
    }
    char buffer[512];
    ssize_t length;
    do {
        length = read(fd, buffer, sizeof buffer - 1);
    } while (length < 0 && errno == EINTR);
    int saved = errno;
    (void)close(fd);
    if (length <= 0) {
        return length < 0 ? saved : EIO;
    }
    buffer[length] = '\0';
    // "tid (comm) S ...": the name may hold spaces and parentheses, so the state follows the last ')'.
    char *end = strrchr(buffer, ')');
    if (end == NULL || end[1] != ' ' || end[2] == '\0') {
        return EIO;
    }
    *sleeping = end[2] == 'S' || end[2] == 'D';
    return 0;
}
