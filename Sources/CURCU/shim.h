// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

// liburcu as a system library: the module map links the memb flavour, the lock-free hash table and their common
// part. This header only checks that liburcu's headers are installed; CThreading's .c files include the liburcu
// headers they use themselves (with _LGPL_SOURCE), so liburcu's name maps never reach Swift.
#ifndef CURCU_SHIM_H
#define CURCU_SHIM_H

#if !__has_include(<urcu/urcu-memb.h>) || !__has_include(<urcu/rculfhash.h>)
#error "liburcu >= 0.13 is required: install liburcu-dev (Debian/Ubuntu) or userspace-rcu-devel (Fedora/RHEL)"
#endif

#endif
