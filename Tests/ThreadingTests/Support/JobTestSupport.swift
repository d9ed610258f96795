// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import CThreading
import Synchronization

@testable import Threading

/// A test error.
struct JobTestError: Error, Equatable {
    let tag: Int
}
