// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

/// Queue-specific values (``WorkQueue/setSpecific(_:_:)``, ``QueueKey``) and whether the calling thread runs a queue.
extension QueueCore {
    /// Sets (or, with nil, removes) the value under `key`; the old value is released outside the lock.
    func setSpecific(_ key: ObjectIdentifier, _ value: AnyObject?) {
        lock.lock()
        let old = value == nil ? specifics.removeValue(forKey: key) : specifics.updateValue(value!, forKey: key)
        lock.unlock()
        _ = old  // released here, outside the lock
    }

    /// The value under `key` on this queue itself, or nil.
    func getSpecific(_ key: ObjectIdentifier) -> AnyObject? {
        lock.withLock { specifics[key] }
    }

    /// Looks `key` up on this queue, then through its target chain.
    func lookupSpecific(_ key: ObjectIdentifier) -> AnyObject? {
        var level: QueueCore? = self
        while let current = level {
            if let value = current.getSpecific(key) { return value }
            level = current.target
        }
        return nil
    }

    /// Whether the calling thread's current queue is this queue or has it in its target chain.
    var isCurrent: Bool {
        var level = SchedulerThread.current.currentQueue
        while let current = level {
            if current === self { return true }
            level = current.target
        }
        return false
    }
}
