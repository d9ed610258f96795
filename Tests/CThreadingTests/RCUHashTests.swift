// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import CThreading
import Testing

/// The byte hash of the RCU map's `String` keys (`cthr_rcu_hash_bytes`, `cthr_rcu_hash_ascii`).
@Suite struct RCUHashCTests {
    private func hash(_ bytes: [UInt8], seed: UInt64 = 1) -> UInt64 {
        bytes.withUnsafeBufferPointer { cthr_rcu_hash_bytes($0.baseAddress, $0.count, seed) }
    }

    private func asciiHash(_ bytes: [UInt8], seed: UInt64 = 1) -> UInt64? {
        var result: UInt64 = 0
        let ascii = bytes.withUnsafeBufferPointer { cthr_rcu_hash_ascii($0.baseAddress, $0.count, seed, &result) }
        return ascii != 0 ? result : nil
    }

    /// Every length from 0 to 130 bytes (each of wyhash's paths: 0, 1-3, 4-16, 17-48, the 48-byte loop) hashes
    /// deterministically, depends on the seed, on the length and on every byte.
    @Test func dependsOnEveryByteTheLengthAndTheSeed() {
        var seen = Set<UInt64>()
        for length in 0...130 {
            let bytes = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ 33) & 0x7F }
            let base = hash(bytes)
            #expect(hash(bytes) == base)
            #expect(hash(bytes, seed: 2) != base, "seed, \(length) bytes")
            #expect(seen.insert(base).inserted, "length \(length)")
            for position in 0..<length {
                var changed = bytes
                changed[position] ^= 1
                #expect(hash(changed) != base, "byte \(position) of \(length)")
            }
        }
        #expect(hash([0]) != hash([0, 0]))
    }

    /// The ASCII form returns the same hash for ASCII input and refuses input with a byte of 0x80 or more anywhere.
    @Test func asciiFormTestsEveryByte() {
        for length in 0...130 {
            let bytes = [UInt8](repeating: UInt8(ascii: "x"), count: length)
            #expect(asciiHash(bytes) == hash(bytes), "\(length) bytes")
            for position in 0..<length {
                var high = bytes
                high[position] = 0x80
                #expect(asciiHash(high) == nil, "byte \(position) of \(length)")
                high[position] = 0xFF
                #expect(asciiHash(high) == nil, "byte \(position) of \(length)")
            }
        }
    }

    /// A NULL buffer hashes as empty, and a NULL result pointer is refused.
    @Test func nullArguments() {
        #expect(cthr_rcu_hash_bytes(nil, 10, 1) == hash([]))
        var result: UInt64 = 0
        #expect(cthr_rcu_hash_ascii(nil, 10, 1, &result) == 1)
        #expect(result == hash([]))
        let bytes: [UInt8] = [65]
        #expect(bytes.withUnsafeBufferPointer { cthr_rcu_hash_ascii($0.baseAddress, 1, 1, nil) } == 0)
    }
}
