// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

/// The local run queues of a pool's worker slots: a fixed table of `capacity` pointers, each slot's run queue made
/// when a thread first takes the slot (under the pool lock) and published by the pool's `slotBound`, which
/// readers load (acquiring) before they touch a slot below it. Made slots live as long as the pool.
/// `@unchecked Sendable`: a slot is written once, before its publication, and only read afterwards.
final class PoolSlots: @unchecked Sendable {
    private let table: UnsafeMutablePointer<PoolRunQueue?>
    private let capacity: Int

    init(capacity: Int) {
        self.capacity = capacity
        table = .allocate(capacity: capacity)
        table.initialize(repeating: nil, count: capacity)
    }

    deinit {
        table.deinitialize(count: capacity)
        table.deallocate()
    }

    /// Makes slot `index`'s run queue (pool lock held; `index` is the next slot never made).
    func make(_ index: Int, observation: PoolObservation) -> PoolRunQueue {
        let queue = PoolRunQueue(capacity: PoolCore.localCapacity, observation: observation)
        table[index] = queue
        return queue
    }

    /// Slot `index`'s run queue; only for a slot below the published bound.
    @inline(__always)
    subscript(_ index: Int) -> PoolRunQueue {
        table[index].unsafelyUnwrapped
    }
}
