// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

extension CacheContention {
    /// Our strategies, each built on the public Threading API only.
    static let oursEntries: [Entry] = [
        Entry(MutexLockCache<IntCacheShape>.self, MutexLockCache<StringCacheShape>.self),
        Entry(membarrierModeOf: MutexLockCache<IntCacheShape>.self, MutexLockCache<StringCacheShape>.self),
        Entry(RecursiveLockCache<IntCacheShape>.self, RecursiveLockCache<StringCacheShape>.self),
        Entry(SpinLockCache<IntCacheShape>.self, SpinLockCache<StringCacheShape>.self),
        Entry(ReadWriteLockCache<IntCacheShape>.self, ReadWriteLockCache<StringCacheShape>.self),
        Entry(SemaphoreCache<IntCacheShape>.self, SemaphoreCache<StringCacheShape>.self),
        Entry(MonitorCache<IntCacheShape>.self, MonitorCache<StringCacheShape>.self),
        Entry(LockedValueCache<IntCacheShape>.self, LockedValueCache<StringCacheShape>.self),
        Entry(SerialQueueSyncCache<IntCacheShape>.self, SerialQueueSyncCache<StringCacheShape>.self),
        Entry(SerialQueueAsyncWriteCache<IntCacheShape>.self, SerialQueueAsyncWriteCache<StringCacheShape>.self),
        Entry(ConcurrentQueueBarrierCache<IntCacheShape>.self, ConcurrentQueueBarrierCache<StringCacheShape>.self),
        Entry(RCUValueCache<IntCacheShape>.self, RCUValueCache<StringCacheShape>.self),
        Entry(RCUMapCache<IntCacheShape>.self, RCUMapCache<StringCacheShape>.self),
    ]
}
