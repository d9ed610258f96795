// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

/// The key and value types of the cache study, as the command line names them.
public enum CacheShapeID: String, Codable, Sendable, CaseIterable {
    /// `Int` keys and `Int` values (``IntCacheShape``).
    case int
    /// `String` keys (URL paths of 20 to 60 bytes) and class values (``StringCacheShape``): a page cache.
    case string

    /// How tables and titles name the shape.
    public var title: String {
        switch self {
        case .int: "Int keys, Int values"
        case .string: "String keys (URL paths, 20-60 bytes), class values"
        }
    }
}

/// The key and value types of a cache, with what the workload needs to make and check them.
///
/// Every value the workload writes for the key of index k carries a token `k + keyCount * r` (r random), so a read
/// can be validated by its token alone. Strategies read the token inside their critical section (or read section),
/// so a reference value is used there and never escapes it.
public protocol CacheShape: Sendable {
    /// The key type.
    associatedtype Key: Hashable & Sendable
    /// The value type.
    associatedtype Value: Sendable
    /// Which shape this is.
    static var id: CacheShapeID { get }

    /// Fresh keys for the indices `0..<keyCount` (new storage on every call, so each thread can own its copies).
    static func makeKeys(_ keyCount: Int) -> [Key]

    /// The key of index `index`, from `keys` (a table made by ``makeKeys(_:)``).
    static func key(_ index: Int, in keys: UnsafePointer<Key>) -> Key

    /// A new value carrying `token`.
    static func makeValue(_ token: Int) -> Value

    /// The token `value` carries.
    static func token(_ value: Value) -> Int
}

extension CacheShape {
    /// The dictionary every dictionary-backed strategy starts from: the key of index k holds a value with token k.
    @inline(never)
    public static func prefilled(keyCount: Int) -> [Key: Value] {
        var storage = [Key: Value](minimumCapacity: keyCount)
        for (index, key) in makeKeys(keyCount).enumerated() {
            storage[key] = makeValue(index)
        }
        return storage
    }
}

/// `Int` keys and values: the value is its own token and the key of index k is k.
public enum IntCacheShape: CacheShape {
    public static var id: CacheShapeID { .int }

    public static func makeKeys(_ keyCount: Int) -> [Int] { Array(0..<keyCount) }

    @inline(__always)
    public static func key(_ index: Int, in keys: UnsafePointer<Int>) -> Int { index }

    @inline(__always)
    public static func makeValue(_ token: Int) -> Int { token }

    @inline(__always)
    public static func token(_ value: Int) -> Int { value }
}

/// A cached page: what a server keeps per URL path (immutable once made, shared by every reader).
public final class CachedPage: Sendable {
    /// The workload's check token.
    public let token: Int
    /// The page's size in bytes (a stand-in for its payload).
    public let length: Int

    /// Creates a page.
    public init(token: Int, length: Int) {
        self.token = token
        self.length = length
    }
}

/// `String` keys, URL paths of 20 to 60 bytes (never small enough for Swift's inline small-string form, so each is a
/// heap object like a path parsed from a request), and ``CachedPage`` values (a reference: a write allocates one).
public enum StringCacheShape: CacheShape {
    public static var id: CacheShapeID { .string }

    /// The path of index `index`: a prefix, the index, and filler to a length between 20 and 60 bytes, ASCII.
    static func path(_ index: Int) -> [UInt8] {
        let prefixes = ["/static/css/", "/api/v2/users/", "/images/thumbs/", "/docs/guide/", "/shop/item/"]
        var bytes = Array(prefixes[index % prefixes.count].utf8) + Array(String(index).utf8) + Array("/".utf8)
        let target = 20 + (index &* 37) % 41
        let filler = Array("page-section-content-view-index.html".utf8)
        var next = 0
        while bytes.count < target {
            bytes.append(filler[next % filler.count])
            next += 1
        }
        return bytes
    }

    public static func makeKeys(_ keyCount: Int) -> [String] {
        (0..<keyCount).map { String(decoding: path($0), as: UTF8.self) }
    }

    @inline(__always)
    public static func key(_ index: Int, in keys: UnsafePointer<String>) -> String { keys[index] }

    @inline(__always)
    public static func makeValue(_ token: Int) -> CachedPage { CachedPage(token: token, length: 4096) }

    @inline(__always)
    public static func token(_ value: CachedPage) -> Int { value.token }
}

extension CacheShapeID: LosslessStringConvertible {
    /// Parses `int` or `string`.
    public init?(_ description: String) { self.init(rawValue: description) }

    /// The command-line name.
    public var description: String { rawValue }
}
