// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

#define _GNU_SOURCE
#include <sched.h>
// Not _LGPL_SOURCE: synchronize_rcu is out of line either way. liburcu-memb is linked by CThreading, which every
// user of this target (BenchKit) links too.
#include <urcu/urcu-memb.h>

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

void cthr_bench_urcu_synchronize(void) {
    urcu_memb_synchronize_rcu();
}
