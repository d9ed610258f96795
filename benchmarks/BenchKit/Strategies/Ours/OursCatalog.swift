// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

extension CacheContention {
    /// Our strategies, each built on the public Threading API only.
    static let oursEntries: [Entry] = [
        Entry(MutexLockCache.self),
        Entry(membarrierModeOf: MutexLockCache.self),
        Entry(RecursiveLockCache.self),
        Entry(SpinLockCache.self),
        Entry(ReadWriteLockCache.self),
        Entry(SemaphoreCache.self),
        Entry(MonitorCache.self),
        Entry(LockedValueCache.self),
        Entry(SerialQueueSyncCache.self),
        Entry(SerialQueueAsyncWriteCache.self),
        Entry(ConcurrentQueueBarrierCache.self),
        Entry(RCUValueCache.self),
        Entry(RCUMapCache.self),
    ]
}
