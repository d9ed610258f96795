// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

/// Tasks suspended in an async wait on one object (a ``Semaphore`` unit, a ``WorkGroup``'s zero, a ``WorkItem``'s or
/// a ``Job``'s end), in FIFO order: an intrusive doubly linked list of their ``AsyncResumeOnce`` nodes, guarded by
/// the owner's lock. Linking, unlinking (a cancelled wait removes itself) and taking the first are O(1) and allocate
/// nothing; the node is allocated once per wait by ``AsyncResumeOnce/wait(guardedBy:register:unregister:)``.
///
/// A value stored in its owner (mark the property `@exclusivity(unchecked)`: the owner's lock is what makes its
/// accesses exclusive). Every method is called with the owner's lock held.
struct AsyncWaitList {
    typealias Node = AsyncResumeOnce<Void>

    /// Unretained (see ``AsyncResumeOnce/previous``).
    private var head: Unmanaged<Node>?
    private var tail: Unmanaged<Node>?
    /// The number of linked nodes.
    private(set) var count = 0

    init() {}

    /// Whether no task waits.
    var isEmpty: Bool { head == nil }

    /// Links `node` at the end.
    mutating func append(_ node: Node) {
        let unmanaged = Unmanaged.passUnretained(node)
        node.isLinked = true
        node.previous = tail
        node.next = nil
        if let tail { tail._withUnsafeGuaranteedRef { $0.next = unmanaged } } else { head = unmanaged }
        tail = unmanaged
        count += 1
    }

    /// Unlinks `node` (linked in this list).
    mutating func remove(_ node: Node) {
        node.isLinked = false
        if let previous = node.previous {
            previous._withUnsafeGuaranteedRef { $0.next = node.next }
        } else {
            head = node.next
        }
        if let next = node.next {
            next._withUnsafeGuaranteedRef { $0.previous = node.previous }
        } else {
            tail = node.previous
        }
        node.previous = nil
        node.next = nil
        count -= 1
    }

    /// Unlinks the longest-waiting task's node and claims it (``AsyncResumeOnce/claimUnlinkedLocked()``): resume it
    /// with ``AsyncResumeOnce/deliver(returning:)`` once the owner's lock is released.
    mutating func takeFirst() -> Node? {
        guard let first = head?.takeUnretainedValue() else { return nil }
        remove(first)
        first.claimUnlinkedLocked()
        return first
    }

    /// Unlinks every node and claims each: resume them with ``Taken/resumeAll()`` once the owner's lock is released.
    mutating func takeAll() -> Taken {
        let taken = Taken(first: head)
        var cursor = head
        while let node = cursor?._withUnsafeGuaranteedRef({ $0 }) {
            cursor = node.next
            node.isLinked = false
            node.claimUnlinkedLocked()
        }
        head = nil
        tail = nil
        count = 0
        return taken
    }

    /// The nodes ``takeAll()`` unlinked, still chained through their ``AsyncResumeOnce/next`` links (which nobody
    /// else touches once they are claimed).
    struct Taken {
        fileprivate let first: Unmanaged<Node>?

        /// Whether no task was taken.
        var isEmpty: Bool { first == nil }

        /// Resumes every task, oldest first (outside the owner's lock).
        func resumeAll() {
            var cursor = first
            while let node = cursor?._withUnsafeGuaranteedRef({ $0 }) {
                cursor = node.next  // read before the resume: the task may free its node at once
                node.next = nil
                node.previous = nil
                node.deliver(returning: ())
            }
        }
    }
}
