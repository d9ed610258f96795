// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

/// Runs `body` in a synchronous context and returns its result.
///
/// Exit-test bodies (`#expect(processExitsWith:)`) are async closures, while the blocking calls many of them exercise
/// (`join()`, `wait(timeout:)`, `sync`) are `noasync`: that attribute applies to async contexts only, so a test that
/// means to block the thread says so with this wrapper.
@discardableResult
func blockingCall<Result>(_ body: () throws -> Result) rethrows -> Result {
    try body()
}
