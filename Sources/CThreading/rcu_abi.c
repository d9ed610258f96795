// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

// The start-up check that the liburcu loaded at run time matches the headers CThreading was compiled with.
//
// CThreading compiles liburcu's read-side fast paths inline (_LGPL_SOURCE): they read and write liburcu's per-thread
// reader state (`urcu_memb_reader`) and its grace-period state (`urcu_memb_gp`) at the offsets of the headers. The
// dynamic loader checks only the soname (liburcu-memb.so.8), and liburcu has kept that soname across releases whose
// inlined code does not work with each other's libraries (its README: applications built with _LGPL_SOURCE against
// 0.10 hang with 0.11 and 0.12). So the probe below asks the loaded library, through its out-of-line functions, whether
// it sees what the inlined code does, and the other way round, on a thread of its own.
#define _GNU_SOURCE
#include "rcu_internal.h"

#include <dlfcn.h>
#include <errno.h>
#include <elf.h>
#include <link.h>
#include <pthread.h>
#include <string.h>

#include "cthr_rcu.h"

// The library's own, out-of-line entry points (the _LGPL_SOURCE header maps these names to the inlined versions).
#undef urcu_memb_read_lock
#undef urcu_memb_read_unlock
#undef urcu_memb_read_ongoing
extern void urcu_memb_read_lock(void);
extern void urcu_memb_read_unlock(void);
extern int urcu_memb_read_ongoing(void);

// The size of `urcu_memb_gp` in the symbol table of the library that defines it, or 0 when the loader cannot say.
static size_t loaded_gp_size(void) {
    Dl_info info;
    const ElfW(Sym) *symbol = NULL;
    if (dladdr1((void *)&urcu_memb_gp, &info, (void **)&symbol, RTLD_DL_SYMENT) == 0 || symbol == NULL) return 0;
    return (size_t)symbol->st_size;
}

static void *probe_thread(void *argument) {
    cthr_rcu_abi_observation_t *out = argument;
    urcu_memb_register_thread();
    out->registered_seen = URCU_TLS(urcu_memb_reader).registered ? 1 : 0;
    out->tid_seen = pthread_equal(URCU_TLS(urcu_memb_reader).tid, pthread_self()) ? 1 : 0;
    _urcu_memb_read_lock();
    out->inline_lock_seen = urcu_memb_read_ongoing() ? 1 : 0;
    _urcu_memb_read_unlock();
    out->inline_unlock_seen = urcu_memb_read_ongoing() ? 0 : 1;
    urcu_memb_read_lock();
    out->library_lock_seen = _urcu_memb_read_ongoing() ? 1 : 0;
    urcu_memb_read_unlock();
    urcu_memb_unregister_thread();
    return NULL;
}

int cthr_rcu_abi_probe(cthr_rcu_abi_observation_t *out) {
    memset(out, 0, sizeof(*out));
    // A read-only forked child must not register new threads (see cthr_rcu_register_slow); its parent's check holds.
    if (cthr_rcu_read_only_child) return ECANCELED;
    out->gp_size_compiled = sizeof(urcu_memb_gp);
    out->gp_size_loaded = loaded_gp_size();
    pthread_t thread;
    int code = pthread_create(&thread, NULL, probe_thread, out);
    if (code != 0) return code;
    return pthread_join(thread, NULL);
}

int cthr_rcu_abi_verdict(const cthr_rcu_abi_observation_t *observation) {
    int mismatches = 0;
    if (observation->gp_size_loaded != 0 && observation->gp_size_loaded != observation->gp_size_compiled) {
        mismatches |= CTHR_RCU_ABI_GP_SIZE;
    }
    if (!observation->registered_seen || !observation->tid_seen) mismatches |= CTHR_RCU_ABI_REGISTRATION;
    if (!observation->inline_lock_seen || !observation->inline_unlock_seen || !observation->library_lock_seen) {
        mismatches |= CTHR_RCU_ABI_READ_SECTION;
    }
    return mismatches;
}

const char *cthr_rcu_abi_library_path(void) {
    Dl_info info;
    if (dladdr((void *)&urcu_memb_gp, &info) == 0) return NULL;
    return info.dli_fname;
}
