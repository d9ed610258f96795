// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

// Private to the .c files: ThreadSanitizer annotations for orderings that TSan cannot see because they go through
// calls it does not intercept (liburcu's uninstrumented fast paths, sem_clockwait). Outside TSan builds they
// compile to nothing.
#ifndef CTHREADING_TSAN_H
#define CTHREADING_TSAN_H

#if defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define CTHR_TSAN 1
#endif
#endif
#if defined(__SANITIZE_THREAD__)
#define CTHR_TSAN 1
#endif

#ifdef CTHR_TSAN
void __tsan_acquire(void *addr);
void __tsan_release(void *addr);
// Everything the calling thread did before is ordered before what a later CTHR_TSAN_ACQUIRE(addr) does after.
#define CTHR_TSAN_RELEASE(addr) __tsan_release((void *)(addr))
// Orders what the calling thread does next after everything before every earlier CTHR_TSAN_RELEASE(addr).
#define CTHR_TSAN_ACQUIRE(addr) __tsan_acquire((void *)(addr))
#else
#define CTHR_TSAN_RELEASE(addr) ((void)0)
#define CTHR_TSAN_ACQUIRE(addr) ((void)0)
#endif

#endif  // CTHREADING_TSAN_H
