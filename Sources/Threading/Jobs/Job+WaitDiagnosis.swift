// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import CThreading

/// How long an untimed job wait blocks before it looks for work that was never scheduled (``JobWait``).
let jobStallGraceNanoseconds: UInt64 = 1_000_000_000

/// The diagnosis of job waits that could never end, done only on the slow path of an untimed wait (the job or queue
/// has not ended, so the thread would block).
///
/// Two kinds, after what can be proven:
///
/// - **Deadlocks** stop the program before it blocks. The calling thread records the synchronous jobs whose bodies it
///   runs (``RunningEntry``); a job it waits for, or one of that job's unended dependencies (transitively), cannot
///   end while this thread waits if it *is* one of those jobs (a job waiting for itself, or for a job that depends on
///   it), or if it has not started and belongs to a queue all of whose `maxConcurrentJobs` slots are held by those
///   jobs (the `OperationQueue` deadlock: a job of a serial queue adds a job to the same queue and waits for it).
///   Only another thread's action could end such a wait (cancelling the waited job, raising `maxConcurrentJobs`), so
///   a program that counts on that must wait with a timeout.
/// - **Stalls** are reported, not stopped: a job the wait needs that belongs to no queue and has not started (a
///   dependency that was never added) runs only if some thread adds it to a queue, starts or cancels it later, and
///   one waiting on a suspended queue only once a thread resumes that queue, which the library cannot rule out.
///   After ``jobStallGraceNanoseconds`` the waiting thread prints one line on stderr naming the wait, the job, the
///   queue and the thread, then goes on waiting.
enum JobWait {
    /// Waits on `word` (a job's `done`, a queue's `idle`) until its flag is set or `timeout` passed. An untimed wait
    /// that would block is checked first: `targets` (taken only then) are the jobs whose end it waits for (the
    /// members of `queue` when it waits for a queue to empty), `wait` names the call for the messages.
    static func wait(
        _ word: borrowing FutexWord,
        timeout: Duration?,
        wait: @autoclosure () -> String,
        on target: some WaitTarget,
        queue: JobQueueCore? = nil,
        targets: () -> [Job]
    ) -> Bool {
        if word.isFlagSet { return true }
        return WaitRecording.recording(.job, on: target, deadline: timeout == nil ? .max : 0) {
            waitRecorded(word, timeout: timeout, wait: wait(), queue: queue, targets: targets)
        }
    }

    /// ``wait(_:timeout:wait:on:queue:targets:)`` once the wait is recorded.
    private static func waitRecorded(
        _ word: borrowing FutexWord,
        timeout: Duration?,
        wait: @autoclosure () -> String,
        queue: JobQueueCore?,
        targets: () -> [Job]
    ) -> Bool {
        guard timeout == nil else {
            return word.blockingWaitUntilFlagSet(deadline: monotonicDeadline(after: timeout!))
        }
        let context = SchedulerThread.current
        let running = context.runningJobs
        if !running.isEmpty, let reason = deadlock(targets(), of: queue, running: running) {
            diagnoseWaitDeadlock(wait(), reason: reason, context)
        }
        if word.blockingWaitUntilFlagSet(deadline: cthr_clock_deadline_after(jobStallGraceNanoseconds)) { return true }
        if let reason = stall(targets()) {
            RuntimeObservation.report(
                .waitStalled,
                .warning,
                "Threading: stalled wait: \(wait()) on thread \(RuntimeThread.describeCurrent()) is waiting for "
                    + "\(reason), so this wait cannot end before then"
            )
        }
        return word.blockingWaitUntilFlagSet(deadline: .max)
    }

    /// Why the end of `targets` (the members of `waited`, for a queue wait) can never come while this thread waits
    /// inside `running` (its synchronous jobs, innermost first), or nil.
    static func deadlock(_ targets: [Job], of waited: JobQueueCore?, running: [Job]) -> String? {
        // Each queue of a running job, under its lock (queue lock before the graph lock), so its slots and its jobs'
        // states are read together: a job that has not started cannot start while every slot is held by this thread.
        var queues: [JobQueueCore] = []
        for job in running {
            if let owner = JobGraph.lock.withLock({ job.owner }), !queues.contains(where: { $0 === owner }) {
                queues.append(owner)
            }
        }
        for queue in queues {
            if let reason = queue.withSlots({ used, width in
                JobGraph.lock.withLock { deadlockLocked(targets, waited, running: running, full: (queue, used, width)) }
            }) {
                return reason
            }
        }
        if !queues.isEmpty { return nil }  // the walks above made every check
        return JobGraph.lock.withLock { deadlockLocked(targets, waited, running: running, full: nil) }
    }

    /// ``deadlock(_:of:running:)`` with `JobGraph.lock` held (and `full`'s queue lock, when given).
    private static func deadlockLocked(
        _ targets: [Job],
        _ waited: JobQueueCore?,
        running: [Job],
        full: (queue: JobQueueCore, used: Int, width: Int)?
    ) -> String? {
        // The slots of `full` are all held by this thread's jobs when they hold at least as many as run there.
        var allSlotsHeld = false
        if let full, full.used >= full.width {
            let held = running.count { $0.owner === full.queue && $0.stateValue == .executing }
            allSlotsHeld = held >= full.used
        }
        let found = unended(targets)
        for (index, (job, _)) in found.enumerated() {
            if job.stateValue == .executing && running.contains(where: { $0 === job }) {
                let path = path(to: index, in: found)
                let whose = "whose body this thread is running"
                if path.count == 1 {
                    guard let waited else { return "\(job) ends only when its body returns" }
                    return "\(waited) holds \(job), \(whose), until it ends"
                }
                return "\(chain(path)): \(job), \(whose), must end first"
            }
            if let full, allSlotsHeld, job.owner === full.queue, job.stateValue == .waiting || job.stateValue == .ready
            {
                let path = path(to: index, in: found)
                let needs = path.count == 1 ? "" : "\(chain(path)): "
                return "\(needs)\(job) has not started and belongs to \(full.queue), whose maxConcurrentJobs slot(s) "
                    + "(\(full.width)) are all held by the job(s) this thread is running, so it cannot start before "
                    + "they end"
            }
        }
        return nil
    }

    /// Why the end of `targets` waits for another thread's action, as the rest of a `stalled wait` line, or nil: a
    /// job it needs that belongs to no queue and has not started (never added) or, failing that, one that has not
    /// started on a suspended queue. Each is named with the dependency path to it.
    static func stall(_ targets: [Job]) -> String? {
        // Candidates are read under the graph lock, the suspension afterwards (queue locks come before the graph's).
        let (unscheduled, queued) = JobGraph.lock.withLock { () -> (String?, [(JobQueueCore, String)]) in
            var queued: [(JobQueueCore, String)] = []
            let found = unended(targets)
            for (index, (job, _)) in found.enumerated() where job.stateValue == .waiting || job.stateValue == .ready {
                let path = path(to: index, in: found)
                let needs = path.count == 1 ? "" : " (\(chain(path)))"
                guard let owner = job.owner else {
                    return (
                        "\(job), which belongs to no queue and has not started\(needs); it runs only once a thread adds "
                            + "it to a JobQueue, starts or cancels it",
                        []
                    )
                }
                queued.append((owner, "\(job), which has not started and belongs to \(owner)\(needs)"))
            }
            return (nil, queued)
        }
        if let unscheduled { return unscheduled }
        for (queue, job) in queued where queue.isSuspended {
            return "\(job), which is suspended; it starts only once a thread resumes that queue (or releases its "
                + "last handle) or cancels it"
        }
        return nil
    }

    /// Every unended job among `targets` and their dependencies (transitively), depth first, each with the index of
    /// the found job it was reached from (-1 for a target): ``path(to:in:)`` makes its dependency path, only for the
    /// job a diagnosis names, since this runs under `JobGraph.lock`.
    private static func unended(_ targets: [Job]) -> [(job: Job, parent: Int)] {
        var visited = Set<ObjectIdentifier>()
        var found: [(job: Job, parent: Int)] = []
        var stack: [(Job, Int)] = targets.reversed().map { ($0, -1) }
        while let (job, parent) = stack.popLast() {
            guard !job.stateValue.isEnded, visited.insert(ObjectIdentifier(job)).inserted else { continue }
            found.append((job, parent))
            for dependency in job.dependencyList.reversed() { stack.append((dependency, found.count - 1)) }
        }
        return found
    }

    /// The dependency path from a target to `found[index]` (the target first).
    private static func path(to index: Int, in found: [(job: Job, parent: Int)]) -> [Job] {
        var path: [Job] = []
        var next = index
        while next >= 0 {
            path.append(found[next].job)
            next = found[next].parent
        }
        return path.reversed()
    }

    /// `Job "b" depends on Job "a"` for a path `[b, a]` (longer paths go on: `, which depends on …`).
    private static func chain(_ path: [Job]) -> String {
        var text = "\(path[0])"
        for (index, job) in path.dropFirst().enumerated() {
            text += index == 0 ? " depends on \(job)" : ", which depends on \(job)"
        }
        return text
    }
}
