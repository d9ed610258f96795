// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import Glibc
import Testing

@testable import Threading

@Suite struct ThreadingErrorTests {
    @Test func comparesByCodeOnly() {
        let error = ThreadingError(code: EAGAIN, operation: "pthread_create", detail: "worker")
        #expect(error == .tryAgain)
        #expect(error != .invalidArgument)
        #expect(Set([error, .tryAgain]).count == 1)
    }

    @Test func describesOperationCodeAndDetail() {
        let error = ThreadingError(code: EINVAL, operation: "pthread_create", detail: "stack size 1 TiB")
        #expect(error.description.hasPrefix("pthread_create: "))
        #expect(error.description.contains("(EINVAL)"))
        #expect(error.description.hasSuffix(": stack size 1 TiB"))
    }

    @Test func matchesInCatch() {
        do {
            try ThreadingError.check(EAGAIN, "pthread_create")
            Issue.record("check(EAGAIN) did not throw")
        } catch ThreadingError.tryAgain {
            // expected
        } catch {
            Issue.record("unexpected \(error)")
        }
        #expect(throws: Never.self) { try ThreadingError.check(0, "noop") }
    }
}
