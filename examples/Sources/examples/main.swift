// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

// `swift run examples <name>` (in examples/; `--package-path examples` from the root) runs one lesson about
// threads, queues or jobs; `swift run examples --list` lists them, `swift run examples all` runs every one. `--child <case>` is how an example re-runs this binary for a case
// that is meant to crash (the parent reports what happened and carries on).

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

let examples: [Example] = [
    mainQueueExample, trampolineExample, syncAsyncExample, ticketsExample, cacheCrashExample, pipelineExample,
    priorityInversionExample, queuePoolExample, threadsExample, tsdExample, asyncServerExample,
    sharedQueueActorsExample,
    stallExample,
]

let arguments = Array(CommandLine.arguments.dropFirst())
switch arguments.first {
case "--list":
    for example in examples { print("\(example.name.padding(19))\(example.summary)") }
case "--child" where arguments.count == 2:
    guard let child = childCases[arguments[1]] else {
        print("unknown child case '\(arguments[1])'")
        exit(2)
    }
    child()
case "all":
    for example in examples {
        print("=== \(example.name): \(example.summary)")
        example.run()
    }
case let name? where examples.contains { $0.name == name }:
    examples.first { $0.name == name }!.run()
default:
    print("usage: examples <name> | all | --list")
    for example in examples { print("  \(example.name)") }
    exit(arguments.isEmpty ? 0 : 2)
}
