// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

// (Filled in by the owner of this concept.)
#ifndef CTHREADING_RCU_H
#define CTHREADING_RCU_H

#endif // CTHREADING_RCU_H
