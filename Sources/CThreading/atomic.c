// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

// The out-of-line half of cthr_atomic.h: build-time proof that the header's `__atomic_*` builtins on plain structs
// are the C11 <stdatomic.h> atomics (same orders, same size and alignment, always lock-free), and the queries that
// need <stdatomic.h>, which the header deliberately does not include (it must stay valid C++).

#define _GNU_SOURCE
#include <errno.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cthr_atomic.h"
#include "cthr_tsan.h"

// Every builtin order is the C11 order of the same name.
_Static_assert(__ATOMIC_RELAXED == memory_order_relaxed, "relaxed");
_Static_assert(__ATOMIC_ACQUIRE == memory_order_acquire, "acquire");
_Static_assert(__ATOMIC_RELEASE == memory_order_release, "release");
_Static_assert(__ATOMIC_ACQ_REL == memory_order_acq_rel, "acq_rel");
_Static_assert(__ATOMIC_SEQ_CST == memory_order_seq_cst, "seq_cst");

// Each plain struct has the size and alignment of the matching `_Atomic(T)`, so casting a `cthr_atomic_NAME_t *` to
// `_Atomic(T) *` (as C callers may) is sound, and every width is always lock-free (no hidden lock table).
#define CTHR__ASSERT_MIRROR(name, T)                                                                                  \
    _Static_assert(sizeof(cthr_atomic_##name##_t) == sizeof(_Atomic(T)), "size of cthr_atomic_" #name "_t");         \
    _Static_assert(_Alignof(cthr_atomic_##name##_t) == _Alignof(_Atomic(T)), "alignment of cthr_atomic_" #name "_t"); \
    _Static_assert(offsetof(cthr_atomic_##name##_t, value) == 0, "offset of cthr_atomic_" #name "_t.value");         \
    _Static_assert(__atomic_always_lock_free(sizeof(T), 0), "cthr_atomic_" #name "_t is lock-free");

CTHR__ASSERT_MIRROR(u8, uint8_t)
CTHR__ASSERT_MIRROR(u16, uint16_t)
CTHR__ASSERT_MIRROR(u32, uint32_t)
CTHR__ASSERT_MIRROR(u64, uint64_t)
CTHR__ASSERT_MIRROR(i8, int8_t)
CTHR__ASSERT_MIRROR(i16, int16_t)
CTHR__ASSERT_MIRROR(i32, int32_t)
CTHR__ASSERT_MIRROR(i64, int64_t)
CTHR__ASSERT_MIRROR(ptr, void *)

_Static_assert(ATOMIC_CHAR_LOCK_FREE == 2 && ATOMIC_SHORT_LOCK_FREE == 2 && ATOMIC_INT_LOCK_FREE == 2 &&
                   ATOMIC_LLONG_LOCK_FREE == 2 && ATOMIC_POINTER_LOCK_FREE == 2,
               "all widths are always lock-free");

// The padded slot is exactly one padded block and the counter sits at its start.
_Static_assert(sizeof(cthr_padded_u64_t) == CTHR_PADDED_SLOT_SIZE, "size of cthr_padded_u64_t");
_Static_assert(_Alignof(cthr_padded_u64_t) == _Alignof(uint64_t), "a padded slot is aligned by its allocation");
_Static_assert(offsetof(cthr_padded_u64_t, atomic) == 0, "offset of cthr_padded_u64_t.atomic");
_Static_assert(CTHR_PADDED_SLOT_SIZE % CTHR_CACHE_LINE == 0, "a padded slot is whole cache lines");

int cthr_atomic_c11_order(cthr_memory_order_t order) {
    return cthr__order_rmw(order);
}

bool cthr_atomic_is_lock_free(size_t size) {
    // One object of each width, asked of C11 (the answer does not depend on the object's value).
    static _Atomic(uint8_t) a8;
    static _Atomic(uint16_t) a16;
    static _Atomic(uint32_t) a32;
    static _Atomic(uint64_t) a64;
    switch (size) {
    case 1: return atomic_is_lock_free(&a8);
    case 2: return atomic_is_lock_free(&a16);
    case 4: return atomic_is_lock_free(&a32);
    case 8: return atomic_is_lock_free(&a64);
    default: return false;
    }
}

int cthr_padded_u64_alloc(size_t count, cthr_padded_u64_t **slots) {
    if (slots == NULL) {
        return EINVAL;
    }
    *slots = NULL;
    if (count == 0 || count > SIZE_MAX / sizeof(cthr_padded_u64_t)) {
        return EINVAL;
    }
    void *memory = NULL;
    int rc = posix_memalign(&memory, CTHR_PADDED_SLOT_SIZE, count * sizeof(cthr_padded_u64_t));
    if (rc != 0) {
        return rc == EINVAL ? EINVAL : ENOMEM;
    }
    memset(memory, 0, count * sizeof(cthr_padded_u64_t));
    *slots = memory;
    return 0;
}

void cthr_padded_u64_free(cthr_padded_u64_t *slots) {
    free(slots);
}

#ifdef CTHR_TSAN
const bool cthr_tsan_active = true;
#else
const bool cthr_tsan_active = false;
#endif

void cthr_tsan_acquire(const void *addr) {
    if (addr != NULL) CTHR_TSAN_ACQUIRE(addr);
}
