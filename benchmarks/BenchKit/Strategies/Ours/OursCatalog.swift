// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

extension CacheContention {
    /// Our strategies, each built on the public Threading API (filled in as the primitives land).
    static let oursEntries: [Entry] = []
}
