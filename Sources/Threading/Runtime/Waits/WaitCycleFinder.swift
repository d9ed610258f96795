// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

/// One thread's wait as the cycle finder sees it: who waits, in what, for what, and which thread must act.
struct WaitEdge {
    let threadID: Int32
    let threadName: String
    let kind: WaitKind
    let target: String
    /// The thread that must act for the wait to end (0: none known, so the wait is in no cycle).
    let owner: Int32
    /// When the wait began (identifies this wait, for reporting a cycle once).
    let since: UInt64
}

/// Finds the cycles among threads' waits: each thread waits for at most one thread (the owner of what it waits
/// for), so the waits form a graph of out-degree at most one, and each of its cycles is found by one walk.
enum WaitCycleFinder {
    /// The cycles among `edges`, each once, each starting at its smallest thread id.
    ///
    /// - Complexity: O(n) in the number of edges.
    static func cycles(_ edges: [WaitEdge]) -> [WaitCycle] {
        var byThread: [Int32: WaitEdge] = [:]
        for edge in edges where edge.owner != 0 { byThread[edge.threadID] = edge }
        var names: [Int32: String] = [:]
        for edge in edges { names[edge.threadID] = edge.threadName }
        var finished: Set<Int32> = []
        var found: [WaitCycle] = []
        for start in byThread.keys.sorted() where !finished.contains(start) {
            var path: [Int32] = []
            var position: [Int32: Int] = [:]
            var current: Int32? = start
            while let thread = current, !finished.contains(thread), let edge = byThread[thread] {
                if let index = position[thread] {
                    found.append(cycle(Array(path[index...]), byThread, names))
                    break
                }
                position[thread] = path.count
                path.append(thread)
                current = edge.owner
            }
            finished.formUnion(path)
        }
        return found
    }

    /// The cycle through `threads` (each waits for the next), rotated to start at its smallest id.
    private static func cycle(_ threads: [Int32], _ byThread: [Int32: WaitEdge], _ names: [Int32: String]) -> WaitCycle
    {
        let first = threads.firstIndex(of: threads.min()!)!
        let ordered = Array(threads[first...] + threads[..<first])
        var lines: [String] = []
        var key: [String] = []
        for (index, thread) in ordered.enumerated() {
            let edge = byThread[thread]!
            let previous = byThread[ordered[(index + ordered.count - 1) % ordered.count]]!
            let holds = previous.kind.isLock ? "holds \(previous.target) and " : ""
            let owner = describeThread(edge.owner, names[edge.owner] ?? "")
            let tail: String
            switch edge.kind {
            case .lock, .readLock, .writeLock: tail = ", held by \(owner)"
            case .sync: tail = ", whose running work is on \(owner)"
            case .join: tail = ""
            default: tail = ", which waits on \(owner)"
            }
            lines.append(
                "\(describeThread(thread, edge.threadName)) \(holds)\(edge.kind.phrase) \(edge.target)\(tail)"
            )
            key.append("\(thread)@\(edge.since)")
        }
        return WaitCycle(threadIDs: ordered, lines: lines, key: key.joined(separator: ","))
    }

    /// A thread as the cycle lines name it: `thread "name" (tid 101)`.
    static func describeThread(_ threadID: Int32, _ name: String) -> String {
        name.isEmpty ? "thread \(threadID)" : "thread \"\(name)\" (tid \(threadID))"
    }
}
