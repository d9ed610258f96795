// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

/// A growable FIFO ring buffer (amortised O(1) append and removal at the front), used for queue items and pool lanes.
///
/// A value type guarded by its owner's lock.
struct EngineRing<Element> {
    private var storage: [Element?] = []
    private var head = 0
    private(set) var count = 0

    var isEmpty: Bool { count == 0 }

    var first: Element? { count == 0 ? nil : storage[head] }

    /// The element `offset` places from the front.
    subscript(offset: Int) -> Element {
        storage[(head + offset) & (storage.count - 1)]!
    }

    mutating func append(_ element: Element) {
        if count == storage.count { grow() }
        storage[(head + count) & (storage.count - 1)] = element
        count += 1
    }

    mutating func popFirst() -> Element? {
        guard count > 0 else { return nil }
        let element = storage[head]
        storage[head] = nil
        head = (head + 1) & (storage.count - 1)
        count -= 1
        return element
    }

    /// Inserts `element` before the first element.
    mutating func pushFront(_ element: Element) {
        if count == storage.count { grow() }
        head = (head - 1) & (storage.count - 1)
        storage[head] = element
        count += 1
    }

    /// Moves every element of `other` in front of this ring's elements, in order (other ends empty).
    /// - Complexity: O(`other.count`).
    mutating func prepend(_ other: inout EngineRing<Element>) {
        var offset = other.count - 1
        while offset >= 0 {
            pushFront(other[offset])
            offset -= 1
        }
        while other.popFirst() != nil {}
    }

    mutating func removeAll() -> [Element] {
        var result: [Element] = []
        result.reserveCapacity(count)
        while let element = popFirst() { result.append(element) }
        return result
    }

    private mutating func grow() {
        let newCapacity = Swift.max(16, storage.count * 2)
        var newStorage = [Element?](repeating: nil, count: newCapacity)
        for index in 0..<count {
            newStorage[index] = storage[(head + index) & (storage.count - 1)]
        }
        storage = newStorage
        head = 0
    }
}
