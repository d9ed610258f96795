// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

/// Traps with `message` unless `condition` holds.
///
/// Unlike `precondition`, whose message is dropped in optimized builds, the message is printed in every build, so a
/// misuse of RCU in a release server still says what went wrong.
@usableFromInline
@inline(__always)
func rcuRequire(
    _ condition: Bool,
    _ message: @autoclosure () -> String,
    file: StaticString = #fileID,
    line: UInt = #line
) {
    if _slowPath(!condition) {
        fatalError(message(), file: file, line: line)
    }
}
