// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

/// One key-value pair of an ``RCUMap``, immutable once published.
///
/// The table node holds one retain; readers use it unretained inside a read section. Replacing a key publishes a new
/// entry; the old one is released after a grace period.
@usableFromInline
final class RCUMapEntry<Key, Value> {
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
