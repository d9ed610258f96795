// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

/// One key-value pair of an ``RCUMap``, stored inline in its hash-table node and immutable once published, except
/// for a value the map rewrites in place (``RCUMap/valuesInPlace``), which is then only read and written atomically.
///
/// The node and the pair are one allocation (`cthr_rcu_map_entry_alloc`); readers reach the pair through a raw pointer
/// inside a read section, so no reference count is touched on the read path. A replaced or removed pair is
/// deinitialized by the map's ``RCUMapReleaser`` after a grace period, then the C layer frees the node.
@usableFromInline
struct RCUMapSlot<Key, Value> {
    @usableFromInline
    let key: Key

    @usableFromInline
    let value: Value

    @usableFromInline
    init(key: Key, value: Value) {
        self.key = key
        self.value = value
    }
}
