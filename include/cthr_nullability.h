// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

// Nullability annotations (_Nullable, _Nonnull) are a Clang extension that Swift reads to import pointers as
// optionals or not; other compilers (GCC building a C or C++ server against these headers) get empty definitions.
#ifndef CTHREADING_NULLABILITY_H
#define CTHREADING_NULLABILITY_H

#if !defined(__clang__)
#ifndef _Nullable
#define _Nullable
#endif
#ifndef _Nonnull
#define _Nonnull
#endif
#endif

#endif // CTHREADING_NULLABILITY_H
