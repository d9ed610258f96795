// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

/// Tasks suspended in an async wait on one object (a ``Semaphore`` unit, a ``WorkGroup``'s zero, a ``WorkItem``'s or
/// a ``Job``'s end), in FIFO order, guarded by the owner's lock.
///
/// A task that starts waiting while no other task waits is kept in the list itself, with no node: only its
/// continuation. The usual wait, one task for one object, allocates nothing. Tasks that come while others wait get a
/// node each, allocated by ``append(_:)``: an intrusive doubly linked list of ``AsyncResumeOnce`` nodes behind the
/// first. Taking the first waiter, linking, and unlinking a cancelled one (found through its ``Entry``) are O(1).
///
/// A value stored in its owner (mark the property `@exclusivity(unchecked)`: the owner's lock is what makes its
/// accesses exclusive). Every method is called with the owner's lock held. See
/// ``AsyncResumeOnce/wait(on:guardedBy:mustWait:left:)`` for the protocol that adds and removes waiters.
struct AsyncWaitList {
    typealias Node = AsyncResumeOnce<Void>
    typealias Continuation = UnsafeContinuation<Void, any Error>

    /// Where ``append(_:)`` put a task: what its cancellation finds it by.
    enum Entry {
        /// First, with no node: its continuation's address (the task's; a task is in one wait at a time).
        case first(UnsafeRawPointer)
        /// In a node.
        case node(Node)
    }

    /// The longest-waiting task's continuation when it waits with no node (it came while the list was empty, so it
    /// comes before every node); nil when the first waiter, if any, is the head node.
    private var first: Continuation?
    /// The nodes, oldest first. Unretained (see ``AsyncResumeOnce/previous``).
    private var head: Unmanaged<Node>?
    private var tail: Unmanaged<Node>?
    /// The number of waiting tasks.
    private(set) var count = 0

    init() {}

    /// Whether no task waits.
    var isEmpty: Bool { count == 0 }

    /// Adds a waiting task at the end: with no node when no task waits, else in a node. Keep what it returns for
    /// ``remove(_:)``.
    mutating func append(_ continuation: Continuation) -> Entry {
        count += 1
        if count == 1 {
            first = continuation
            return .first(AsyncWaitList.address(of: continuation))
        }
        let node = Node(listing: continuation)
        let unmanaged = Unmanaged.passUnretained(node)
        node.isLinked = true
        node.previous = tail
        if let tail { tail._withUnsafeGuaranteedRef { $0.next = unmanaged } } else { head = unmanaged }
        tail = unmanaged
        return .node(node)
    }

    /// Removes the task that `entry` names (its cancellation found it) and returns its continuation, for the caller to
    /// resume with `CancellationError` once the owner's lock is released; nil when the task is no longer in the list
    /// (whoever ends its wait took it).
    mutating func remove(_ entry: Entry) -> Continuation? {
        switch entry {
        case .node(let node):
            guard node.isLinked else { return nil }
            unlink(node)
            return node.takeContinuation()
        case .first(let address):
            guard let first, AsyncWaitList.address(of: first) == address else { return nil }
            takeFirstWithoutNode()
            return first
        }
    }

    /// Takes the longest-waiting task out of the list and returns its continuation: resume it once the owner's lock
    /// is released.
    mutating func takeFirst() -> Continuation? {
        if let first {
            takeFirstWithoutNode()
            return first
        }
        guard let node = head?.takeUnretainedValue() else { return nil }
        unlink(node)
        return node.takeContinuation()
    }

    /// Takes every task out of the list: resume them with ``Taken/resumeAll()`` once the owner's lock is released.
    mutating func takeAll() -> Taken {
        let taken = Taken(first: first, nodes: head)
        var cursor = head
        while let node = cursor?._withUnsafeGuaranteedRef({ $0 }) {
            cursor = node.next
            node.isLinked = false
        }
        first = nil
        head = nil
        tail = nil
        count = 0
        return taken
    }

    private mutating func takeFirstWithoutNode() {
        first = nil
        count -= 1
    }

    /// A continuation's address: the task it resumes (an `UnsafeContinuation` is that one pointer).
    private static func address(of continuation: Continuation) -> UnsafeRawPointer {
        unsafeBitCast(continuation, to: UnsafeRawPointer.self)
    }

    /// Takes `node` (linked) out of the list.
    private mutating func unlink(_ node: Node) {
        count -= 1
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
    }

    /// The tasks ``takeAll()`` took out: the first one's continuation when it had no node, then the nodes, still
    /// chained through their ``AsyncResumeOnce/next`` links (which nobody else touches once they are unlinked).
    struct Taken {
        fileprivate let first: Continuation?
        fileprivate let nodes: Unmanaged<Node>?

        /// Resumes every task, oldest first (outside the owner's lock).
        func resumeAll() {
            first?.resume()
            var cursor = nodes
            while let node = cursor?._withUnsafeGuaranteedRef({ $0 }) {
                cursor = node.next  // read before the resume: the task may free its node at once
                node.next = nil
                node.previous = nil
                node.takeContinuation()?.resume()
            }
        }
    }
}

/// An object whose tasks wait in an ``AsyncWaitList`` (``AsyncResumeOnce/wait(on:guardedBy:mustWait:left:)``).
protocol AsyncWaitOwner: AnyObject, Sendable {
    /// The tasks waiting on the object; read and changed only under the lock the waits name.
    var asyncWaiters: AsyncWaitList { get set }
}
