// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import CThreading
import Glibc

/// The heap object an ``RCUValue`` publishes: one immutable value.
///
/// Readers reach it through an unretained pointer inside a read section, so its reference count is touched only by
/// writers (one retain when published, one release after the grace period that follows its replacement).
@usableFromInline
final class RCUBox<Value> {
    @usableFromInline
    let value: Value

    @usableFromInline
    init(_ value: Value) {
        self.value = value
    }
}

/// Releases one retain of the Swift object `context` points to; the call_rcu callback of every RCU type.
@usableFromInline
let rcuReleaseObject: @convention(c) (UnsafeMutableRawPointer?) -> Void = { context in
    guard let context else { return }
    Unmanaged<AnyObject>.fromOpaque(context).release()
}

/// A callback queued by ``RCU/callAfterGracePeriod(_:)``, retained once for liburcu's queue.
final class RCUCallbackBox {
    let callback: @Sendable () -> Void

    init(_ callback: @escaping @Sendable () -> Void) {
        self.callback = callback
    }
}

/// Runs (on the call_rcu thread) and releases the ``RCUCallbackBox`` that `context` points to.
let rcuRunCallback: @convention(c) (UnsafeMutableRawPointer?) -> Void = { context in
    guard let context else { return }
    Unmanaged<RCUCallbackBox>.fromOpaque(context).takeRetainedValue().callback()
}

/// Schedules the release of one retained object after a grace period.
///
/// Traps if liburcu cannot queue the callback (out of memory); releasing early would hand readers freed memory.
@usableFromInline
func rcuRetire(_ object: UnsafeMutableRawPointer) {
    let code = cthr_rcu_call(rcuReleaseObject, object)
    rcuRefuseInReadOnlyChild(code, "an RCU write")
    require(code == 0, "cthr_rcu_call failed: \(ThreadingError(code: code, operation: "cthr_rcu_call"))")
}

/// Traps with the forked-child explanation when a C writer entry point refused with `ENOTRECOVERABLE` (see
/// ``RCU/writersAvailable``).
@usableFromInline
func rcuRefuseInReadOnlyChild(_ code: CInt, _ operation: @autoclosure () -> String) {
    if _slowPath(code == ENOTRECOVERABLE) {
        threadingFatal(
            "\(operation()): RCU writes are unavailable in this forked child: other threads of the parent used RCU, "
                + "and liburcu keeps their registrations, so no grace period can run here. Reads still work; "
                + "exec, or fork before other threads use RCU (see RCU.writersAvailable)"
        )
    }
}
