// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

// The example Hummingbird server: `hummingbird-server [--port 0] [--offload threading-blocking] [--threads 64]
// [--blocking-us 2000] [--cpu-rounds 200000] [--host 127.0.0.1]`. Its first line on stdout is the bound port; it
// serves `/health`, `/blocking` and `/cpu` until SIGTERM or SIGINT. `bench http` (in `benchmarks/`) loads it.

import HummingbirdExample

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

let arguments = Array(CommandLine.arguments.dropFirst())
if arguments.contains("--help") || arguments.contains("-h") {
    let modes = OffloadMode.allCases.map(\.rawValue).joined(separator: "|")
    print(
        "usage: hummingbird-server [--host 127.0.0.1] [--port 0] [--offload \(modes)] [--threads 64] "
            + "[--blocking-us 2000] [--cpu-rounds 200000]"
    )
    exit(0)
}
/// Writes `text` to a file descriptor at once (the port line must not wait in a buffer when stdout is a pipe).
func writeLine(_ text: String, to fd: Int32) {
    let bytes = Array((text + "\n").utf8)
    _ = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
}

switch ServerOptions.parse(arguments) {
case .failure(let error):
    writeLine("hummingbird-server: \(error)", to: 2)
    exit(2)
case .success(let options):
    try installGlobalExecutor(for: options.offload)
    try await runServer(options: options) { port in writeLine(String(port), to: 1) }
}
