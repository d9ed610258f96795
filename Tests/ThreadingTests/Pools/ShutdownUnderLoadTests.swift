// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import CThreading
import Synchronization
import Testing

@testable import Threading

/// A server's shape, shut down while it serves: client threads (event loops) and client tasks send requests whose
/// handlers submit work to a pool through every recoverable route (`tryAsync` on a serial and a concurrent queue, a
/// barrier, `tryAddJob`, `tryAsyncAfter`, `pool.run`), and some of that work submits follow-up work from the pool's
/// own threads; meanwhile the pool is shut down. Each request gets an id and one answer (accepted or refused), and a
/// ledger counts how often each id's work ran. Gracefully, every accepted request runs exactly once and no refused
/// one runs; with a timeout that expires, every accepted request runs at most once and those that never ran are
/// exactly the shutdown's `tasksNotRun`. Either way nothing crashes or hangs and every thread is joined.
///
/// Repeated (`repetitions` per variant, 50 with `-DTHREADING_LONG_TESTS`) because the race it looks for is the one
/// moment a submission and the shutdown meet; `scripts/test-under-load.sh` runs it with every core busy.
@Suite(.serialized) struct ShutdownUnderLoadTests {
    @Test(arguments: 0..<shutdownUnderLoadRepetitions) func gracefulShutdownAnswersEveryRequestOnce(round: Int) throws {
        let figures = try ServerUnderShutdown(label: "sul.g\(round)").serve { pool in
            #expect(poolTestShutDown(pool))
            return nil
        }
        #expect(figures.acceptedNotRun == 0, "\(figures)")
        // Delayed work stops at the shutdown: a firing not yet queued is counted, never run.
        #expect(figures.cancelledFirings == figures.delayedNotRun, "\(figures)")
        #expect(figures.threadsLeft == 0, "\(figures)")
    }

    @Test(arguments: 0..<shutdownUnderLoadRepetitions) func expiredShutdownCountsWhatItLeft(round: Int) throws {
        let figures = try ServerUnderShutdown(label: "sul.t\(round)", slowWork: true).serve { pool in
            pool.shutdown(timeout: .milliseconds(2))
        }
        // A delayed firing queued before the pool stopped is one of its tasks; one due later is a cancelled firing.
        #expect(
            figures.acceptedNotRun + figures.delayedNotRun == figures.tasksNotRun + figures.cancelledFirings,
            "\(figures)"
        )
        #expect(figures.threadsLeft == 0, "\(figures)")
    }
}

#if THREADING_LONG_TESTS
let shutdownUnderLoadRepetitions = 50
#else
let shutdownUnderLoadRepetitions = 12
#endif

/// The server of ``ShutdownUnderLoadTests``: see there.
/// `@unchecked Sendable`: the ledgers are atomics in memory the instance owns for its whole life; the rest is
/// `let` and `Sendable`.
final class ServerUnderShutdown: @unchecked Sendable {
    /// The most request ids one run hands out (clients stop sending when they are used up).
    static let capacity = 60_000
    static let clientThreads = 6
    static let clientTasks = 4

    /// What a run saw.
    struct Figures: CustomStringConvertible {
        var accepted = 0
        var refused = 0
        var inFlightAtShutdown = 0
        var acceptedNotRun = 0
        var delayedNotRun = 0
        var tasksNotRun = 0
        var cancelledFirings = 0
        var threadsLeft = 0
        var description: String {
            "accepted \(accepted), refused \(refused), in flight at the shutdown \(inFlightAtShutdown), accepted "
                + "but not run \(acceptedNotRun) (+ \(delayedNotRun) delayed), tasksNotRun \(tasksNotRun), cancelled "
                + "firings \(cancelledFirings), threads left \(threadsLeft)"
        }
    }

    let label: String
    let slowWork: Bool
    let pool: WorkerPool
    let serial: SerialQueue
    let concurrent: ConcurrentQueue
    let followUp: SerialQueue
    let jobs: JobQueue
    /// Per id: 1 accepted, 2 refused (the client's answer; 3 would be both, which the checks refuse).
    private let answers: UnsafeMutablePointer<Atomic<UInt8>>
    /// Per id: how often its work ran.
    private let runs: UnsafeMutablePointer<Atomic<UInt8>>
    private let nextID = Atomic<Int>(0)
    private let started = Atomic<Int>(0)
    private let finished = Atomic<Int>(0)
    private let acceptedCount = Atomic<Int>(0)
    /// Per id: whether it went through `tryAsyncAfter` (a firing due after the shutdown is counted in
    /// `cancelledFirings`, not in `tasksNotRun`).
    private let delayed: UnsafeMutablePointer<Atomic<Bool>>
    private let stopSending = Atomic<Bool>(false)
    private let tasksRunning = Atomic<Int>(ServerUnderShutdown.clientTasks)

    init(label: String, slowWork: Bool = false) {
        self.label = label
        self.slowWork = slowWork
        pool = WorkerPool(label: label, threads: 2)
        serial = SerialQueue(label: "\(label).serial", pool: pool)
        concurrent = ConcurrentQueue(label: "\(label).concurrent", pool: pool)
        followUp = SerialQueue(label: "\(label).follow", pool: pool)
        jobs = JobQueue(name: "\(label).jobs", maxConcurrentJobs: 2, pool: pool)
        answers = .allocate(capacity: Self.capacity)
        runs = .allocate(capacity: Self.capacity)
        delayed = .allocate(capacity: Self.capacity)
        for index in 0..<Self.capacity {
            (delayed + index).initialize(to: Atomic(false))
            (answers + index).initialize(to: Atomic(0))
            (runs + index).initialize(to: Atomic(0))
        }
    }

    deinit {
        answers.deinitialize(count: Self.capacity)
        answers.deallocate()
        runs.deinitialize(count: Self.capacity)
        runs.deallocate()
        delayed.deinitialize(count: Self.capacity)
        delayed.deallocate()
    }

    /// Serves until `shutDown` (called once requests flow) returned, then checks the ledger.
    func serve(_ shutDown: @escaping @Sendable (WorkerPool) -> WorkerPool.ShutdownResult?) throws -> Figures {
        let go = QueueGate()
        var threads: [PosixThread<Void>] = []
        for client in 0..<Self.clientThreads {
            threads.append(
                try PosixThread {
                    _ = go.wait()
                    var turn = client
                    while !self.stopSending.load(ordering: .relaxed), let id = self.newID() {
                        self.handle(id, route: turn % 6)
                        turn &+= 1
                        self.applyBackpressure()
                    }
                }
            )
        }
        let tasksDone = QueueGate()
        for _ in 0..<Self.clientTasks {
            // On the shared pool: sync tests running beside this one may hold every cooperative thread.
            Task.detached(executorPreference: WorkerPool.shared) {
                while !self.stopSending.load(ordering: .relaxed), let id = self.newID() {
                    await self.handleAsync(id)
                }
                if self.tasksRunning.subtract(1, ordering: .relaxed).newValue == 0 { tasksDone.open() }
            }
        }
        go.open()
        // Let requests flow, then shut down in the middle of them.
        #expect(waitUntil { self.acceptedCount.load(ordering: .relaxed) >= 200 })
        var figures = Figures()
        // Accepted and not finished, as near the shutdown as two loads get (finished first: a task may finish before
        // its client counts the acceptance, so the difference is a lower bound, clamped at zero).
        let finishedBefore = finished.load(ordering: .relaxed)
        figures.inFlightAtShutdown = Swift.max(0, acceptedCount.load(ordering: .relaxed) - finishedBefore)
        let result = shutDown(pool)
        // Keep sending for a moment after the shutdown returned: every such request must be refused.
        _ = cthr_sleep_ns(2_000_000)
        stopSending.store(true, ordering: .relaxed)
        for thread in threads { thread.join() }
        #expect(tasksDone.wait(seconds: 30), "the client tasks did not end")
        // Tasks a timed shutdown left running exit when they return.
        #expect(
            waitUntil(seconds: 30) {
                self.finished.load(ordering: .relaxed) == self.started.load(ordering: .relaxed)
            }
        )
        #expect(waitUntil(seconds: 30) { self.pool.statistics.threads == 0 })
        let used = Swift.min(nextID.load(ordering: .relaxed), Self.capacity)
        for id in 0..<used {
            let answer = answers[id].load(ordering: .relaxed)
            let ran = Int(runs[id].load(ordering: .relaxed))
            #expect(answer == 1 || answer == 2, "request \(id) got answer \(answer)")
            #expect(ran <= 1, "request \(id) ran \(ran) times")
            if answer == 2 { #expect(ran == 0, "refused request \(id) ran") }
            if answer == 1 {
                figures.accepted += 1
                if ran == 0 {
                    if delayed[id].load(ordering: .relaxed) {
                        figures.delayedNotRun += 1
                    } else {
                        figures.acceptedNotRun += 1
                    }
                }
            } else {
                figures.refused += 1
            }
        }
        figures.tasksNotRun = result?.tasksNotRun ?? 0
        // A delayed firing that came due after the shutdown began is dropped and counted by the timer thread, which
        // may not have fired it yet: wait for the count (the firings' deadlines have passed).
        let expected = figures.acceptedNotRun + figures.delayedNotRun - figures.tasksNotRun
        _ = waitUntil { self.pool.statistics.cancelledFirings >= expected }
        figures.cancelledFirings = pool.statistics.cancelledFirings
        figures.threadsLeft = poolTestThreadCount(named: label)
        #expect(figures.refused > 0, "no request met the shutdown: \(figures)")
        print("shutdown under load (\(label)): \(figures)")
        return figures
    }

    /// Requests accepted and not finished that make a client wait before it sends more (a server's limit on work in
    /// flight): enough that thousands are pending at the shutdown, few enough that a round stays short under a
    /// sanitizer.
    static let inFlightLimit = 3_000

    /// Waits (briefly, a bounded number of times) while too much accepted work is unfinished.
    private func applyBackpressure() {
        var rounds = 0
        while acceptedCount.load(ordering: .relaxed) - finished.load(ordering: .relaxed) > Self.inFlightLimit
            && !stopSending.load(ordering: .relaxed) && rounds < 1_000
        {
            _ = cthr_sleep_ns(100_000)
            rounds += 1
        }
    }

    private func newID() -> Int? {
        let id = nextID.add(1, ordering: .relaxed).oldValue
        return id < Self.capacity ? id : nil
    }

    private func answer(_ id: Int, accepted: Bool) {
        answers[id].add(accepted ? 1 : 2, ordering: .relaxed)
        if accepted { acceptedCount.add(1, ordering: .relaxed) }
    }

    /// The work of request `id`: counts the run; every third one submits follow-up work from the pool's thread.
    private func work(_ id: Int) {
        started.add(1, ordering: .relaxed)
        runs[id].add(1, ordering: .relaxed)
        if slowWork { _ = cthr_sleep_ns(50_000) }
        if id % 3 == 0, let next = newID() {
            answer(next, accepted: followUp.tryAsync { self.work(next) })
        }
        finished.add(1, ordering: .relaxed)
    }

    /// A request on a client thread: its handler submits the work through one of the recoverable routes.
    private func handle(_ id: Int, route: Int) {
        let accepted: Bool
        switch route {
        case 0: accepted = serial.tryAsync { self.work(id) }
        case 1: accepted = concurrent.tryAsync { self.work(id) }
        case 2: accepted = concurrent.tryAsync(flags: .barrier) { self.work(id) }
        case 3: accepted = jobs.tryAddJob(Job { _ in self.work(id) })
        case 4:
            delayed[id].store(true, ordering: .relaxed)
            accepted = serial.tryAsyncAfter(delay: .zero) { self.work(id) }
        default: accepted = followUp.tryAsync { self.work(id) }
        }
        answer(id, accepted: accepted)
    }

    /// A request of a client task: `pool.run` answers with the value, or throws `shutDown` when it did not run.
    /// (With `slowWork`, the variant whose shutdown expires, a `run` that the stop drops after taking it answers
    /// `shutDown` like a refused one, so the ledger could not tell it from a refusal: those clients submit with
    /// `tryAsync` from the task instead; `WorkerPoolRunTests` covers `run` under an expiring shutdown.)
    private func handleAsync(_ id: Int) async {
        if slowWork {
            answer(id, accepted: concurrent.tryAsync { self.work(id) })
            await Task.yield()
            return
        }
        do {
            let ran: Int = try await pool.run {
                self.work(id)
                return id
            }
            #expect(ran == id)
            answer(id, accepted: true)
        } catch ThreadingError.shutDown {
            answer(id, accepted: false)
        } catch {
            Issue.record("pool.run threw \(error)")
        }
    }
}
