// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

#define _GNU_SOURCE
#include <sched.h>

#include "CBenchSupport.h"

int cthr_bench_available_cpus(void) {
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof(set), &set) != 0) {
        return 1;
    }
    int count = CPU_COUNT(&set);
    return count > 0 ? count : 1;
}
