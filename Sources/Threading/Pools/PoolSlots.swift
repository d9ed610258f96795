// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

/// A fixed table of a pool's run queues, read without reference counting: the local run queues of its worker slots,
/// or its shared shards.
///
/// Slots: `capacity` entries, each slot's run queue made when a thread first takes the slot (under the pool lock)
/// and published by the pool's `slotBound`, which readers load (acquiring) before they touch a slot below it.
/// Shards: every entry made at once (``init(filledWith:observation:)``). Made queues live as long as the table.
///
/// **Why borrowed reads.** Idle workers scan every shard and every slot's hints in a loop (``PoolCore/hasWork()``,
/// `findWork`, `steal`). Read through a strong reference, each look is a `swift_retain` and a `swift_release` on the
/// run queue: atomic writes to the one cache line that the queue's owner and its producers write too, which on many
/// cores dominates a concurrent queue's `bench pool-async` profile. ``borrow(_:_:)`` hands the queue to
/// its body at +0 (the table holds the reference), so a scan touches only the hints it reads.
///
/// `@unchecked Sendable`: an entry is written once, before its publication, and only read afterwards.
final class PoolSlots: @unchecked Sendable {
    /// Retained references (released in `deinit`); nil for a slot not made yet.
    private let table: UnsafeMutablePointer<Unmanaged<PoolRunQueue>?>
    /// How many entries the table has (made or not).
    let capacity: Int

    /// A table of `capacity` slots, none made yet (see ``make(_:observation:)``).
    init(capacity: Int) {
        self.capacity = capacity
        table = .allocate(capacity: capacity)
        table.initialize(repeating: nil, count: capacity)
    }

    /// A table of `count` shared shards, all made now (unbounded run queues).
    init(filledWith count: Int, observation: PoolObservation) {
        capacity = count
        table = .allocate(capacity: count)
        for index in 0..<count {
            let queue = PoolRunQueue(capacity: .max, observation: observation)
            (table + index).initialize(to: Unmanaged.passRetained(queue))
        }
    }

    deinit {
        for index in 0..<capacity { table[index]?.release() }
        table.deinitialize(count: capacity)
        table.deallocate()
    }

    /// Makes slot `index`'s run queue (pool lock held; `index` is the next slot never made).
    func make(_ index: Int, observation: PoolObservation) -> PoolRunQueue {
        let queue = PoolRunQueue(capacity: PoolCore.localCapacity, observation: observation)
        table[index] = Unmanaged.passRetained(queue)
        return queue
    }

    /// Entry `index`'s run queue, as a strong reference (for paths that run rarely); only for a made entry.
    @inline(__always)
    subscript(_ index: Int) -> PoolRunQueue {
        table[index].unsafelyUnwrapped.takeUnretainedValue()
    }

    /// Calls `body` with entry `index`'s run queue borrowed from the table (no retain, no release); only for a
    /// made entry. `body` must not keep the reference.
    @inline(__always)
    func borrow<Result>(_ index: Int, _ body: (PoolRunQueue) throws -> Result) rethrows -> Result {
        try table[index].unsafelyUnwrapped._withUnsafeGuaranteedRef(body)
    }
}
