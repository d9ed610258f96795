// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

extension RCUMap: Sequence {
    /// Iterates over a ``snapshot()`` taken when the iteration starts (see its guarantees).
    ///
    /// - Returns: An iterator over the snapshot's key-value pairs, in no particular order.
    public func makeIterator() -> Dictionary<Key, Value>.Iterator {
        snapshot().makeIterator()
    }

    /// The number of entries, for `Array(map)` and similar.
    public var underestimatedCount: Int { count }
}
