// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

// A stand-in for the wait registry (threads, held locks, wait cycles) that is built in `Observability/Waits/`, with
// the interface agreed with it, so that the snapshot builds before it lands. This file is deleted when it does.

/// One thread the library made or runs work on.
public struct ThreadSnapshot: Sendable {
    /// The kernel thread id.
    public let threadID: Int32
    /// The thread's name.
    public let name: String
    /// The wait the thread is blocked in, or nil when it is not blocked in a wait the library sees.
    public let waitingFor: WaitSnapshot?
    /// Descriptions of the named locks it holds.
    public let heldLocks: [String]
}

/// A wait a thread is blocked in.
public struct WaitSnapshot: Sendable {
    /// The kind of wait (`lock`, `sync`, `join`, ...).
    public let kind: String
    /// What it waits for.
    public let target: String
    /// The thread that holds what it waits for, when known.
    public let ownerThreadID: Int32?
    /// How long it has waited.
    public let waitedNanoseconds: UInt64
}

/// A named lock that is held.
public struct HeldLockSnapshot: Sendable {
    /// The lock's description.
    public let name: String
    /// The kernel thread id of its holder.
    public let holderThreadID: Int32
    /// How long it has been held, when known.
    public let heldNanoseconds: UInt64?
    /// Threads waiting for it.
    public let waiters: Int
}

/// Threads waiting for each other in a cycle.
public struct WaitCycle: Sendable, CustomStringConvertible {
    /// The threads of the cycle.
    public let threadIDs: [Int32]
    /// The cycle, multi-line, printable as-is.
    public var description: String { "" }
}

enum WaitRegistry {
    static func capture() -> (threads: [ThreadSnapshot], heldLocks: [HeldLockSnapshot], cycles: [WaitCycle]) {
        ([], [], [])
    }
}
