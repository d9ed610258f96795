// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import CThreading
import Synchronization

/// What one pool worker runs now, published for the stall watchdog and the runtime snapshot (Go's sysmon shape).
///
/// The worker's cost per unit and per queue item is a few relaxed stores on words only it writes (no clock read,
/// no read-modify-write, no lock): ``subject`` names the queue core whose work it runs (0: a plain job), ``progress``
/// counts the units and items it started, ``isRunning`` says whether it runs one now. The watchdog samples them every
/// tick: a worker that runs and whose progress did not change since the sample before has run the same unit or item
/// at least since then. Durations are therefore "at least", to one watchdog tick.
///
/// The sampler's own fields (`sampled*`, `since`, `reported`) are touched only by whoever holds the pool's
/// ``PoolObservation`` lock.
///
/// `@unchecked Sendable`: the published words are atomics; the sampler's fields are guarded by the observation lock.
final class WorkerActivity: @unchecked Sendable {
    /// The queue core whose item or drain the worker runs (its address; 0: a plain job or nothing).
    let subject = Atomic<UInt>(0)
    /// Units and items started by the worker (written by the worker only).
    let progress = Atomic<UInt64>(0)
    /// Whether the worker runs a unit now.
    let isRunning = Atomic<Bool>(false)
    /// The worker's kernel thread id (set once, by the worker, before it is attached).
    let threadID = Atomic<Int32>(0)
    /// `ForkRegistry.epoch` when it was attached: a forked child skips its parent's workers.
    let epoch: UInt32
    /// Where the unit or work item it runs came from (``UnitOrigin/bits``; 0: not known).
    let originBits = Atomic<UInt64>(0)

    // Sampler state, guarded by the observation lock.
    var sampledProgress: UInt64 = .max
    /// When the current unit was first seen running (0: not running at the last sample).
    var since: UInt64 = 0
    /// The stall threshold the current unit's stall report used, or 0 when it was not reported.
    var reportedThreshold: UInt64 = 0
    /// ``subject`` when the stall was reported (the end names the same work).
    var reportedSubject: UInt = 0
    /// ``origin`` when the stall was reported.
    var reportedOrigin = UnitOrigin.none
    /// ``progress`` at the pool monitor's last look (see ``PoolObservation/localQueuesOfStuckWorkers()``).
    var monitorProgress: UInt64 = .max

    init() { epoch = ForkRegistry.epoch.load(ordering: .relaxed) }

    /// The worker starts a unit (worker thread only).
    @inline(__always)
    func begin(_ unit: PoolUnit) {
        let address: UInt
        var origin = UnitOrigin.none
        switch unit {
        case .drain(let core): address = objectAddress(core)
        case .concurrent(let core, _, _): address = objectAddress(core)
        case .claimedBarrier(let core, _): address = objectAddress(core)
        case .job(_, let unitOrigin):
            address = 0
            origin = unitOrigin
        case .queuedJob:
            address = 0
        case .globalTask(_, let unitOrigin):
            address = 0
            origin = unitOrigin
        }
        subject.store(address, ordering: .relaxed)
        publish(origin)
        progress.store(progress.load(ordering: .relaxed) &+ 1, ordering: .relaxed)
        isRunning.store(true, ordering: .releasing)
    }

    /// The worker starts an item of `queue` inside its unit (worker thread only).
    @inline(__always)
    func beginItem(of queue: AnyObject) {
        subject.store(objectAddress(queue), ordering: .relaxed)
        progress.store(progress.load(ordering: .relaxed) &+ 1, ordering: .relaxed)
    }

    /// Publishes where the work the worker runs now came from (worker thread only): one relaxed store.
    @inline(__always)
    func publish(_ origin: UnitOrigin) {
        originBits.store(origin.bits, ordering: .relaxed)
    }

    /// Where the work the worker runs came from, as published (a racy but safe view, as ``subject`` is).
    var origin: UnitOrigin { UnitOrigin(bits: originBits.load(ordering: .relaxed)) }

    /// The worker's unit returned (worker thread only).
    @inline(__always)
    func end() {
        isRunning.store(false, ordering: .releasing)
    }
}

/// Where a unit of work came from: the `#fileID` and `#line` of the call that made it (a ``WorkerPool/run(fileID:line:_:)``,
/// a ``WorkItem``), or only what it is (a task that prefers the pool as its executor: Swift tasks carry no creation
/// site). Made at the call from literals; the stall report, the runtime snapshot and the dump name it instead of
/// `a job (no queue)`.
///
/// One word, so that a ``PoolUnit`` carrying it is no larger than its largest case was (its stride stays 32 bytes):
/// the address of the `#fileID` literal in the low 48 bits (user-space addresses of Linux's 64-bit targets fit in 47
/// or 48; a literal above them is not recorded), the line in the next 14 (a line past 16,383 is left out), the kind
/// in the top 2.
struct UnitOrigin: Equatable, Sendable {
    /// What made the unit.
    enum Kind: UInt64 {
        case none
        case run
        case workItem
        case task
    }

    let bits: UInt64

    private static let addressBits: UInt64 = 48
    private static let lineBits: UInt64 = 14

    static let none = UnitOrigin(bits: 0)
    /// A job of a task that prefers the pool as its executor.
    static let task = UnitOrigin(bits: Kind.task.rawValue << 62)

    /// A job of a task of `priority` (its raw value) on the global concurrent executor
    /// (``WorkerPool/installAsGlobalConcurrentExecutor()``): the kind ``Kind/task`` with the priority in the low
    /// byte and ``globalTaskBit`` set (a task has no creation site, so the address bits are free).
    @inline(__always)
    static func globalTask(priority: UInt8) -> UnitOrigin {
        UnitOrigin(bits: Kind.task.rawValue << 62 | globalTaskBit | UInt64(priority))
    }

    /// Set in the origin of a job of the global concurrent executor (see ``globalTask(priority:)``).
    private static let globalTaskBit: UInt64 = 1 << 8

    init(bits: UInt64) { self.bits = bits }

    /// A unit made by `kind` at `fileID`:`line` (the caller's `#fileID` and `#line`).
    @inline(__always)
    init(_ kind: Kind, fileID: StaticString, line: UInt) {
        let address = fileID.hasPointerRepresentation ? UInt64(UInt(bitPattern: fileID.utf8Start)) : 0
        let file = address >> Self.addressBits == 0 ? address : 0
        let line = line < 1 << Self.lineBits ? UInt64(line) : 0
        bits = kind.rawValue << 62 | line << Self.addressBits | file
    }

    var kind: Kind { Kind(rawValue: bits >> 62) ?? .none }
    /// The line, 0 when not known.
    var line: UInt64 { (bits >> Self.addressBits) & (1 << Self.lineBits - 1) }
    /// The start of the `#fileID` literal (static, NUL-terminated, never freed), or nil.
    var file: UnsafePointer<UInt8>? { UnsafePointer(bitPattern: UInt(bits & (1 << Self.addressBits - 1))) }

    /// A task priority as reports name it: `high`, `medium`, `low`, `background`, `userInteractive`, or its raw
    /// value (`unspecified` for 0).
    static func priorityName(_ raw: UInt8) -> String {
        switch raw {
        case 0: "unspecified"
        case TaskPriority.high.rawValue: "high"
        case TaskPriority.medium.rawValue: "medium"
        case TaskPriority.low.rawValue: "low"
        case TaskPriority.background.rawValue: "background"
        case 0x21: "userInteractive"
        default: "\(raw)"
        }
    }

    /// `Handlers/Search.swift:42`, or nil when the origin has no file.
    var location: String? {
        guard let file else { return nil }
        // A `#fileID` literal is NUL-terminated; bounded all the same.
        var count = 0
        while count < 1024 && file[count] != 0 { count += 1 }
        let name = String(decoding: UnsafeBufferPointer(start: file, count: count), as: UTF8.self)
        return line == 0 ? name : name + ":\(line)"
    }

    /// The work as reports name it: `WorkerPool.run from Handlers/Search.swift:42`, `a task preferring this pool`;
    /// nil when nothing is known.
    var description: String? {
        switch kind {
        case .none: return nil
        case .task:
            if bits & Self.globalTaskBit != 0 {
                return "a Swift task of priority \(Self.priorityName(UInt8(truncatingIfNeeded: bits)))"
                    + " on the global concurrent executor (Swift tasks carry no creation site)"
            }
            return "a task preferring this pool as its executor (Swift tasks carry no creation site)"
        case .run: return location.map { "WorkerPool.run from \($0)" }
        case .workItem: return location.map { "WorkItem created at \($0)" }
        }
    }
}

extension ThreadContext {
    /// Records, on the calling thread's worker if it is one, that it starts an item of `queue` (a queue core's
    /// `execute`): the watchdog then measures the item, not the whole drain.
    @inline(__always)
    func recordItemStart(of queue: AnyObject) {
        guard let worker = pointee.worker else { return }
        worker._withUnsafeGuaranteedRef { $0.activity.beginItem(of: queue) }
    }
}
