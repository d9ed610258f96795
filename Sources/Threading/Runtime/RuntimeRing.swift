// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

/// A growable FIFO ring buffer (amortised O(1) append and removal at both ends) in manually managed memory, used
/// for queue items, pool run queues and job queues.
///
/// Manual memory instead of an `Array` keeps the per-item cost of the runtime's hottest loop (enqueue, drain)
/// free of uniqueness and bounds checks. The ring owns its buffer, so it is `~Copyable`: it can be moved or swapped,
/// never copied, and its `deinit` destroys the remaining elements and frees the buffer. Guarded by its owner's lock.
struct RuntimeRing<Element>: ~Copyable {
    private var buffer: UnsafeMutablePointer<Element>?
    private var capacity = 0
    private var head = 0
    private(set) var count = 0

    init() {}

    deinit {
        guard let buffer else { return }
        var index = 0
        while index < count {
            (buffer + ((head &+ index) & (capacity &- 1))).deinitialize(count: 1)
            index &+= 1
        }
        buffer.deallocate()
    }

    var isEmpty: Bool { count == 0 }

    var first: Element? { count == 0 ? nil : buffer![head] }

    /// The element `offset` places from the front (`offset < count`).
    subscript(offset: Int) -> Element {
        buffer![(head &+ offset) & (capacity &- 1)]
    }

    @inline(__always)
    mutating func append(_ element: Element) {
        if count == capacity { grow() }
        (buffer! + ((head &+ count) & (capacity &- 1))).initialize(to: element)
        count &+= 1
    }

    @inline(__always)
    mutating func popFirst() -> Element? {
        guard count > 0 else { return nil }
        let element = (buffer! + head).move()
        head = (head &+ 1) & (capacity &- 1)
        count &-= 1
        return element
    }

    /// Inserts `element` before the first element.
    mutating func pushFront(_ element: Element) {
        if count == capacity { grow() }
        head = (head &- 1) & (capacity &- 1)
        (buffer! + head).initialize(to: element)
        count &+= 1
    }

    /// Moves every element of `other` in front of this ring's elements, in order (other ends empty).
    /// - Complexity: O(`other.count`).
    mutating func prepend(_ other: inout RuntimeRing<Element>) {
        while other.count > 0 {
            let last = (other.head &+ other.count &- 1) & (other.capacity &- 1)
            pushFront((other.buffer! + last).move())
            other.count &-= 1
        }
        other.head = 0
    }

    /// Removes and returns every element, in order.
    mutating func removeAll() -> [Element] {
        var result: [Element] = []
        result.reserveCapacity(count)
        while let element = popFirst() { result.append(element) }
        return result
    }

    /// Destroys the remaining elements and frees the buffer (the ring is empty and reusable afterwards).
    mutating func release() {
        while popFirst() != nil {}
        buffer?.deallocate()
        buffer = nil
        capacity = 0
        head = 0
    }

    /// Forgets the elements and the buffer without destroying or freeing them: a forked child's copy of work its
    /// parent accepted, which must not run there, not even as deinitializers (see `ForkRegistry`). Empty afterwards.
    mutating func abandon() {
        buffer = nil
        capacity = 0
        head = 0
        count = 0
    }

    private mutating func grow() {
        let newCapacity = Swift.max(16, capacity * 2)
        let newBuffer = UnsafeMutablePointer<Element>.allocate(capacity: newCapacity)
        var index = 0
        while index < count {
            (newBuffer + index).moveInitialize(from: buffer! + ((head &+ index) & (capacity &- 1)), count: 1)
            index &+= 1
        }
        buffer?.deallocate()
        buffer = newBuffer
        capacity = newCapacity
        head = 0
    }
}

/// A fixed number of ``RuntimeRing``s at a fixed heap address (one per lane or priority): the owner of their storage,
/// so `~Copyable`; its `deinit` releases every ring. Guarded by its owner's lock.
struct RuntimeRings<Element>: ~Copyable {
    private let rings: UnsafeMutablePointer<RuntimeRing<Element>>
    /// The number of rings.
    let count: Int

    init(count: Int) {
        self.count = count
        rings = .allocate(capacity: count)
        for index in 0..<count { (rings + index).initialize(to: RuntimeRing()) }
    }

    deinit {
        rings.deinitialize(count: count)
        rings.deallocate()
    }

    var indices: Range<Int> { 0..<count }

    /// The ring at `index` (`0 <= index < count`), in place.
    subscript(index: Int) -> RuntimeRing<Element> {
        unsafeAddress { UnsafePointer(rings + index) }
        nonmutating unsafeMutableAddress { rings + index }
    }
}
