// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

#include <malloc.h>

#include "CTestSupport.h"

size_t cthr_test_heap_in_use(void) {
    struct mallinfo2 info = mallinfo2();
    return info.uordblks + info.hblkhd;
}

int cthr_test_heap_trim(void) { return malloc_trim(0); }
