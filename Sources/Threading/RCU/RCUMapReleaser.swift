// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import Synchronization

/// Deinitializes retired ``RCUMapSlot``s of one map; the context of its C table.
///
/// The C release callback is `@convention(c)` and cannot be generic, so it calls this non-generic class, whose
/// generic subclass knows the slot type. The table holds one retain, released by the final callback that follows the
/// table's destruction (after every slot has been released).
class RCUMapReleaser {
    /// Deinitializes the slot at `entry` (the memory itself is freed by the C layer).
    func deinitialize(_ entry: UnsafeMutableRawPointer) {}
}

/// The ``RCUMapReleaser`` of an `RCUMap<Key, Value>`.
final class RCUMapTypedReleaser<Key, Value>: RCUMapReleaser {
    /// Whether the pair holds no references (nothing to deinitialize), decided once instead of per release.
    private let isTrivial = _isPOD(RCUMapSlot<Key, Value>.self)

    override func deinitialize(_ entry: UnsafeMutableRawPointer) {
        if isTrivial { return }
        entry.assumingMemoryBound(to: RCUMapSlot<Key, Value>.self).deinitialize(count: 1)
    }
}

/// The release callback of every `RCUMap` table: deinitializes a retired slot, or (entry == nil, after destroy)
/// drops the table's retain of its releaser.
let rcuMapRelease: @convention(c) (UnsafeMutableRawPointer?, UnsafeMutableRawPointer?) -> Void = { entry, context in
    guard let context else { return }
    let releaser = Unmanaged<RCUMapReleaser>.fromOpaque(context)
    if let entry {
        releaser._withUnsafeGuaranteedRef { $0.deinitialize(entry) }
    } else {
        releaser.release()
    }
}

/// Counts maps created, so that each draws its own hash seed from the per-process random `Hasher`.
let rcuMapSeedCounter = Atomic<UInt64>(0)
