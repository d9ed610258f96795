// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

// Priority inversion: a low-QoS thread holds a lock; a high-QoS thread waits for it; medium-priority
// threads keep the CPUs busy, so the holder barely runs and the high-QoS waiter waits far longer than the holder's
// work takes. Then the same with a priority-inheriting mutex (PTHREAD_PRIO_INHERIT).
//
// What Linux does with it: the example gives each QoS a nice value of its own (`exampleNice`; the queue engine
// never renices its workers) under SCHED_OTHER. The kernel's priority inheritance boosts
// real-time priorities (SCHED_FIFO/SCHED_RR); it does not lend a nice value, so under SCHED_OTHER both runs
// show the inversion. The example measures instead of claiming: it prints both waits. The usual advice —
// give everything that shares a lock the same QoS — is the third run.

import CThreading
import Synchronization
import Threading

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The nice value this example runs a QoS's thread at (the engine itself never changes nice values).
private func exampleNice(_ qos: QoS) -> Int32 {
    switch qos {
    case .userInteractive: -4
    case .userInitiated: -2
    case .default: 0
    case .utility: 5
    case .background: 10
    }
}

/// The calling thread's CPU time in nanoseconds.
private func threadCPUTime() -> Int {
    var now = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now)
    return now.tv_sec * 1_000_000_000 + now.tv_nsec
}

/// Burns `milliseconds` of this thread's CPU time (not a sleep: the holder needs the CPU to finish its work).
private func burnCPU(milliseconds: Int) {
    let end = threadCPUTime() + milliseconds * 1_000_000
    while threadCPUTime() < end {}
}

/// Runs holder (at `holderQoS`), hogs and waiter; returns how long the waiter waited for the lock.
private func measure(lock: MutexLock, holderQoS: QoS) -> Duration {
    let holding = Semaphore()
    let stop = Atomic<Bool>(false)
    let done = Semaphore()

    let holder = try! PosixThread(name: "low-holder") {
        _ = cthr_thread_set_nice(exampleNice(holderQoS))
        lock.lock()
        holding.signal()
        burnCPU(milliseconds: 10)
        lock.unlock()
    }
    holding.wait()
    // Medium-priority CPU hogs, one per core.
    let cores = Int(cthr_cpu_count())
    for index in 0..<cores {
        let hog = try! PosixThread(name: "medium-\(index)") {
            _ = cthr_thread_set_nice(exampleNice(.default))
            while !stop.load(ordering: .relaxed) { burnCPU(milliseconds: 1) }
            done.signal()
        }
        hog.detach()
    }
    let waiter = try! PosixThread<Duration>(name: "high-waiter") {
        _ = cthr_thread_set_nice(exampleNice(.userInteractive))
        let start = ContinuousClock.now
        lock.lock()
        let waited = ContinuousClock.now - start
        lock.unlock()
        return waited
    }
    let waited = waiter.join()
    stop.store(true, ordering: .relaxed)
    for _ in 0..<cores { done.wait() }
    holder.join()
    return waited
}

let priorityInversionExample = Example(
    name: "priority-inversion",
    summary: "a low-QoS holder blocks a high-QoS waiter; then a priority-inheriting mutex"
) {
    // The holder's work alone, for scale.
    let start = ContinuousClock.now
    burnCPU(milliseconds: 10)
    print(
        "holder's work alone:                        10 ms of CPU, \(milliseconds(ContinuousClock.now - start)) ms wall"
    )

    let plain = measure(lock: MutexLock(name: "plain"), holderQoS: .background)
    print("background holder, normal mutex:            high-QoS waiter waited \(milliseconds(plain)) ms")

    if let inheriting = try? MutexLock(kind: .priorityInheriting, name: "inheriting") {
        let boosted = measure(lock: inheriting, holderQoS: .background)
        print("background holder, priority-inheriting:     high-QoS waiter waited \(milliseconds(boosted)) ms")
    } else {
        print("background holder, priority-inheriting:     not supported on this system")
    }

    let same = measure(lock: MutexLock(name: "same-qos"), holderQoS: .userInteractive)
    print("holder at the waiter's QoS (the usual advice): high-QoS waiter waited \(milliseconds(same)) ms")
    print("(PI boosts real-time priorities only; nice-based QoS is not inherited on Linux)")
}
