// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import CThreading
import Synchronization

/// A pending deadline: when it passes, the entry's firing is called on the timer thread (it must only enqueue work).
///
/// A one-shot entry (`interval` 0) leaves the heap when it fires. A repeating entry leaves it too, and is put back
/// by its owner with ``TimerThread/rearm(_:)`` once the work its firing queued has run: so an entry never has more
/// than one firing waiting, however short its interval or slow its queue (see ``QueueTimer``).
final class TimerEntry: @unchecked Sendable {
    /// Guarded by the timer lock.
    var deadline: UInt64
    /// Nanoseconds between firings for a repeating timer; 0 for a one-shot.
    let interval: UInt64
    private let firing: Firing
    let cancelled = Atomic<Bool>(false)
    /// ``ForkRegistry/epoch`` when the entry was made: in a forked child (a later epoch) it is the parent's timer,
    /// cancelled there even while its firing is queued or running (out of the heap, where the child handler does not
    /// reach it).
    let epoch = ForkRegistry.epoch.load(ordering: .relaxed)

    /// Whether the timer was cancelled, or belongs to the parent of this forked process.
    var isCancelled: Bool {
        cancelled.load(ordering: .acquiring) || epoch != ForkRegistry.epoch.load(ordering: .relaxed)
    }
    /// Guarded by the timer lock: whether the entry is in the heap.
    var scheduled = false

    /// What a firing calls: a closure, or one that is given the entry (to re-arm it).
    private enum Firing {
        case plain(() -> Void)
        case owned((TimerEntry) -> Void)
    }

    init(deadline: UInt64, interval: UInt64, fire: @escaping () -> Void) {
        self.deadline = deadline
        self.interval = interval
        self.firing = .plain(fire)
    }

    /// An entry whose firing is given the entry itself (a repeating timer re-arms it with it).
    init(deadline: UInt64, interval: UInt64, fireWithEntry: @escaping (TimerEntry) -> Void) {
        self.deadline = deadline
        self.interval = interval
        self.firing = .owned(fireWithEntry)
    }

    /// Calls the firing (on the timer thread, timer lock not held).
    func fire() {
        switch firing {
        case .plain(let body): body()
        case .owned(let body): body(self)
        }
    }

    /// The first deadline after `now` that is `deadline` plus a multiple of the interval (the firings missed
    /// meanwhile are coalesced into that one); saturates at "never" instead of overflowing.
    func nextDeadline(after now: UInt64) -> UInt64 {
        if deadline > now { return deadline }
        let missed = (now - deadline) / interval + 1
        let (step, overflow) = missed.multipliedReportingOverflow(by: interval)
        if overflow { return .max }
        let (next, overflow2) = deadline.addingReportingOverflow(step)
        return overflow2 ? .max : next
    }
}

/// The one timer thread of the pool: a binary min-heap of deadlines, slept on with a futex deadline.
///
/// `asyncAfter` and ``QueueTimer`` register entries; the thread enqueues each entry's work on its queue when the
/// deadline passes (it never runs user code itself), so a slow task cannot delay other timers. A repeating entry
/// is out of the heap from its firing until its owner re-arms it (``rearm(_:)``): the thread never wakes for a
/// timer whose last firing has not run yet, however short its interval.
final class TimerThread: @unchecked Sendable {
    static let shared = TimerThread()

    private let lock = RuntimeLock.make()
    private var heap: [TimerEntry] = []
    private var started = false
    private let word = FutexWord.allocate()

    func schedule(_ entry: TimerEntry) {
        lock.lock()
        insertLocked(entry)
    }

    /// Puts a repeating entry back into the heap after the work of its last firing ran, at the next multiple of its
    /// interval after now. Does nothing for a one-shot entry, and when the entry was cancelled meanwhile or is in
    /// the heap already.
    func rearm(_ entry: TimerEntry) {
        if entry.interval == 0 { return }
        lock.lock()
        if entry.scheduled || entry.cancelled.load(ordering: .acquiring) {
            lock.unlock()
            return
        }
        entry.deadline = entry.nextDeadline(after: cthr_clock_now_ns())
        insertLocked(entry)
    }

    /// Pushes `entry`, then unlocks the timer lock (held on entry) and starts or wakes the timer thread as needed.
    private func insertLocked(_ entry: TimerEntry) {
        entry.scheduled = true
        push(entry)
        let isFirst = heap[0] === entry
        let start = !started
        started = true
        if isFirst { word.add(1) }
        lock.unlock()
        if start { startThread() }
        if isFirst { word.wake() }
    }

    /// `fork()` prepare handler: holds the timer lock across the fork so the child's copy is consistent.
    func forkPrepare() { lock.lock() }

    /// `fork()` handler in the parent.
    func forkParent() { lock.unlock() }

    /// `fork()` handler in the child: the timer thread does not exist there; the next `schedule` starts one. The
    /// parent's timers never fire here: each is cancelled (``QueueTimer/isCancelled`` says so in the child) and
    /// abandoned, never released (see ``ForkRegistry``).
    func forkChild() {
        var index = 0
        while index < heap.count {
            let entry = heap[index]
            entry.cancelled.store(true, ordering: .relaxed)
            entry.scheduled = false
            _ = Unmanaged.passRetained(entry)  // abandoned: the entry and its closure are never released here
            index += 1
        }
        heap = []
        started = false
        lock.unlock()
    }

    private func startThread() {
        let code = spawnDetachedRuntimeThread(named: "threading.timer") { _ in
            TimerThread.shared.main()
            return nil
        }
        if code != 0 {
            // Refused (RLIMIT_NPROC, memory): the entries stay scheduled and the next `schedule` tries again.
            lock.withLock { started = false }
            reportThreadRefusal(of: "timer", code: code, threads: nil)
        }
    }

    private func main() {
        while true {
            lock.lock()
            let observed = word.load()
            var due: [TimerEntry] = []
            let now = cthr_clock_now_ns()
            while let first = heap.first, first.deadline <= now {
                let entry = popFirst()
                if entry.cancelled.load(ordering: .acquiring) {
                    entry.scheduled = false
                    continue
                }
                // A repeating entry comes back through `rearm` once its firing's work ran, not now: a firing that
                // waits in a busy queue is never joined by a second one.
                entry.scheduled = false
                due.append(entry)
            }
            let next = heap.first?.deadline ?? .max
            lock.unlock()
            for entry in due where !entry.cancelled.load(ordering: .acquiring) {
                entry.fire()
            }
            if due.isEmpty {
                word.wait(expected: observed, deadline: next)
            }
        }
    }

    // MARK: Heap (timer lock held)

    private func push(_ entry: TimerEntry) {
        heap.append(entry)
        var child = heap.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            if heap[parent].deadline <= heap[child].deadline { break }
            heap.swapAt(parent, child)
            child = parent
        }
    }

    private func popFirst() -> TimerEntry {
        let first = heap[0]
        let last = heap.removeLast()
        if !heap.isEmpty {
            heap[0] = last
            var parent = 0
            while true {
                let left = 2 * parent + 1
                let right = left + 1
                var smallest = parent
                if left < heap.count && heap[left].deadline < heap[smallest].deadline { smallest = left }
                if right < heap.count && heap[right].deadline < heap[smallest].deadline { smallest = right }
                if smallest == parent { break }
                heap.swapAt(parent, smallest)
                parent = smallest
            }
        }
        return first
    }
}

/// Converts a `ContinuousClock` instant to a CLOCK_MONOTONIC deadline in nanoseconds (saturating).
func monotonicDeadline(_ instant: ContinuousClock.Instant) -> UInt64 {
    monotonicDeadline(after: ContinuousClock.now.duration(to: instant))
}

/// Whole nanoseconds of a non-negative duration (negative → 0, saturating).
func monotonicNanoseconds(_ duration: Duration) -> UInt64 {
    let (seconds, attoseconds) = duration.components
    if seconds < 0 || (seconds == 0 && attoseconds < 0) { return 0 }
    let (product, overflow) = UInt64(seconds).multipliedReportingOverflow(by: 1_000_000_000)
    if overflow { return .max }
    let (sum, overflow2) = product.addingReportingOverflow(UInt64(attoseconds / 1_000_000_000))
    return overflow2 ? .max : sum
}
