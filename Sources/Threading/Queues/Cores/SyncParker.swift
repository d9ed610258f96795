// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import CThreading

// The `sync` parker and its offer-help protocol: how a thread waits in a queue's `sync` until the queue grants it,
// and how a concurrent queue offers the waiter an item queued ahead of it. The parker is in the thread's state
// (``ThreadState/parker``); the queue cores grant and offer.

extension UnsafeMutablePointer where Pointee == ThreadState {
    /// Waits until another thread called `grantWaiter` for this thread.
    ///
    /// Parker protocol (``Parker/State``): the waiter spins briefly (yielding the CPU, so the thread it waits
    /// for can run even on few cores), then announces it sleeps (`waiting` → `sleeping`) and sleeps; the granter
    /// exchanges in `granted` and only makes the wake system call when it saw `sleeping`. A concurrent queue may
    /// offer a waiting thread an item queued *ahead of* it (`helpOffered`, see `ConcurrentCore.offerHelp`): the
    /// waiter would wait for that item anyway, so running it itself saves a pool hop; it then keeps waiting.
    ///
    /// `queue` is the queue a `sync` waits on: once the spin is over, the wait is recorded on the
    /// thread's wait record for snapshots (``WaitRecording``), so a wait that ends while spinning records nothing.
    func waitGranted(on queue: QueueCore) {
        for round in 0..<poolSpinRounds {
            switch pointee.parker.load() {
            case .granted: return
            case .grantedWithHelp:
                helpGranted()
                return
            case .helpOffered:
                help()
                continue
            case .waiting, .sleeping: break
            }
            if round >= 4 { _ = cthr_thread_yield() }
        }
        BlockingHook.willBlock()
        let record = WaitRecording.begin(.sync, on: queue, context: pointee.record)
        defer { WaitRecording.end(pointee.record, restoring: record) }
        while true {
            let state = pointee.parker.load()
            if state == .granted { break }
            if state == .grantedWithHelp {
                helpGranted()
                break
            }
            if state == .helpOffered {
                help()
                continue
            }
            if state == .waiting && !pointee.parker.compareExchange(.waiting, .sleeping) { continue }
            pointee.parker.wait(whileIn: .sleeping)
        }
        BlockingHook.didUnblock()
    }

    /// Runs the offered item (`helpOffered`). The slot is read and cleared before leaving that state: offers write it
    /// only in `waiting` and `sleeping`, so once the state is `waiting` again a new offer may fill it. If the grant
    /// arrived meanwhile (`grantedWithHelp`), the item is still ours to run, and the wait ends after it.
    private func help() {
        let offered = pointee.helpItem!
        pointee.helpItem = nil
        _ = pointee.parker.compareExchange(.helpOffered, .waiting)
        if let item = offered.claim.claim() { offered.core.runStarted(item, barrier: offered.barrier, self) }
    }

    /// Granted while an offered item was pending (`grantedWithHelp`): runs it unless `help()` already took it.
    private func helpGranted() {
        if let offered = pointee.helpItem {
            pointee.helpItem = nil
            if let item = offered.claim.claim() { offered.core.runStarted(item, barrier: offered.barrier, self) }
        }
    }

    /// Prepares ``waitGranted()``: must be called before the grant can be issued.
    @inline(__always)
    func prepareWait() {
        pointee.parker.prepare()
    }
}

/// Wakes a thread blocked in `waitGranted()` (a system call only when it is asleep).
@inline(__always)
func grantWaiter(_ waiter: ThreadContext) {
    while true {
        let state = waiter.pointee.parker.load()
        if state == .helpOffered {
            // An offered item is pending: overwriting the offer with `granted` would make the waiter return without
            // running it (a lost task). `grantedWithHelp` tells it to run the item, then return granted.
            if waiter.pointee.parker.compareExchange(.helpOffered, .grantedWithHelp) { return }
            continue  // the waiter took the item meanwhile (helpOffered -> waiting)
        }
        if waiter.pointee.parker.compareExchange(state, .granted) {
            if state == .sleeping { waiter.pointee.parker.wake() }
            return
        }
    }
}

/// Offers `waiter` (waiting in a queue behind `item`) to run `item`; false if it is not waiting now.
/// Called under the queue's lock, which also guards the waiter's presence in the queue.
func offerHelpToWaiter(
    _ waiter: ThreadContext,
    _ offer: (core: ConcurrentCore, claim: ItemClaim, barrier: Bool)
) -> Bool {
    while true {
        let state = waiter.pointee.parker.load()
        // Only while waiting (awake or asleep) is the slot free: with an offer pending the waiter may be reading it
        // (outside the queue lock); granted, it no longer waits.
        if state != .waiting && state != .sleeping { return false }
        waiter.pointee.helpItem = offer
        if waiter.pointee.parker.compareExchange(state, .helpOffered) {
            if state == .sleeping { waiter.pointee.parker.wake() }
            return true
        }
        waiter.pointee.helpItem = nil  // it went to sleep (waiting -> sleeping) meanwhile: try again
    }
}

/// A thread's parker for `sync` waits: a futex word whose values are the cases of ``State``, so the protocol's
/// states have names instead of numbers. It owns its word (``FutexWord``, fixed heap storage that never moves), so it
/// is `~Copyable`; the thread's state owns it and frees it at thread exit.
struct Parker: ~Copyable, @unchecked Sendable {
    /// The parker's states.
    enum State: UInt32 {
        /// Waiting, awake (spinning or about to sleep).
        case waiting = 0
        /// Granted: the wait is over.
        case granted = 1
        /// Waiting, asleep on the futex: a granter must wake it.
        case sleeping = 2
        /// An item queued ahead of the waiter is offered to it (in its `helpItem`): it runs it, then waits on.
        case helpOffered = 3
        /// Granted while an offered item was still pending: the waiter runs it, then returns.
        case grantedWithHelp = 4
    }

    let word: FutexWord

    static func allocate() -> Parker { Parker(word: .allocate(State.waiting.rawValue)) }

    /// The current state (acquire).
    @inline(__always)
    func load() -> State {
        State(rawValue: word.load())!
    }

    /// `from` → `to` if the state is `from` (acquire-release); whether it was.
    @inline(__always)
    func compareExchange(_ from: State, _ to: State) -> Bool {
        word.compareExchange(from.rawValue, to.rawValue).exchanged
    }

    /// Resets to `waiting` before a new wait (by the waiter, before anyone can grant it).
    @inline(__always)
    func prepare() { word.storeRelaxed(State.waiting.rawValue) }

    /// Sleeps while the state is `state`.
    @inline(__always)
    func wait(whileIn state: State) { word.wait(expected: state.rawValue) }

    /// Wakes the waiter sleeping on the parker.
    @inline(__always)
    func wake() { word.wake() }
}

/// Spin rounds (the later ones yielding the CPU) before a waiting thread sleeps on its futex.
let poolSpinRounds = 24
