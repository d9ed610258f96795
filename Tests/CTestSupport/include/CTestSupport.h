// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

// What the tests need from the C library that Swift's Glibc module does not expose (malloc.h).
#ifndef CTHREADING_TEST_SUPPORT_H
#define CTHREADING_TEST_SUPPORT_H

#include <stddef.h>

// Bytes malloc has handed out and not had back, over every arena plus mmapped blocks (mallinfo2: uordblks + hblkhd).
size_t cthr_test_heap_in_use(void);

// Gives the allocator's free pages back to the system (malloc_trim(0)). Returns 1 if memory was released, else 0.
int cthr_test_heap_trim(void);

#endif // CTHREADING_TEST_SUPPORT_H
