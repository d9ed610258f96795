// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

#define _GNU_SOURCE
#include <errno.h>
#include <linux/membarrier.h>
#include <malloc.h>
#include <pthread.h>
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "CTestSupport.h"

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
