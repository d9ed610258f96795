// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

// (Filled in by the owner of this concept.)
#ifndef CTHREADING_ATOMIC_H
#define CTHREADING_ATOMIC_H

#endif // CTHREADING_ATOMIC_H
