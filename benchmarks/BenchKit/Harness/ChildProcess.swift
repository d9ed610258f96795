// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import Foundation
import Glibc
import Histogram
import Threading

/// What a child run prints on its standard output: one JSON line.
public struct ChildRunReport: Codable, Sendable, Equatable {
    /// Operations per second.
    public var opsPerSecond: Double
    /// CPU nanoseconds per operation.
    public var cpuNsPerOp: Double
    /// Slowest thread over mean.
    public var fairness: Double
    /// Bad reads.
    public var badOperations: Int
    /// Total operations.
    public var operations: Int
    /// Median sampled latency.
    public var p50Ns: UInt64
    /// 99th percentile sampled latency.
    public var p99Ns: UInt64
    /// `membarrier` calls per second made by the child's locks (nil from a child that did not report it).
    public var membarrierCallsPerSecond: Double?
    /// Whether the child's locks ran in `MutexLock`'s membarrier mode (nil from a child that did not report it).
    public var locksUseMembarrier: Bool?

    /// Creates a report from a sample taken in this process.
    public init(_ sample: RunSample) {
        opsPerSecond = sample.operationsPerSecond
        cpuNsPerOp = sample.cpuNanosecondsPerOperation
        fairness = sample.fairness
        badOperations = sample.badOperations
        operations = sample.operations
        p50Ns = sample.latency.totalCount > 0 ? sample.latency.valueAtPercentile(50) : 0
        p99Ns = sample.latency.totalCount > 0 ? sample.latency.valueAtPercentile(99) : 0
        membarrierCallsPerSecond = sample.membarrierCallsPerSecond
        locksUseMembarrier = MutexLock.usesMembarrier
    }
}

/// How a child process ended.
public enum ChildOutcome: Sendable, Equatable {
    /// Exited 0 and printed a report.
    case finished(ChildRunReport)
    /// Killed by a signal (SIGSEGV, SIGABRT, SIGILL, SIGTRAP, ...).
    case crashed(signal: Int32)
    /// Exited with a non-zero status.
    case failed(status: Int32)
    /// Did not finish by the deadline and was killed.
    case hung(seconds: Double)

    /// The verdict as printed in tables: `crashed (signal 11)`, `corrupt (N bad reads)`, ... or nil when the run
    /// finished with no bad read.
    public var abnormalDescription: String? {
        switch self {
        case .finished(let report):
            return report.badOperations > 0 ? "corrupt (\(report.badOperations) bad reads)" : nil
        case .crashed(let signal):
            return "crashed (signal \(signal))"
        case .failed(let status):
            return "failed (exit status \(status))"
        case .hung(let seconds):
            return String(format: "hung (killed after %.0f s)", seconds)
        }
    }
}

/// A child process that did not finish with the expected report: how it ended instead.
public struct ChildFailure: Error, Sendable, Equatable {
    /// The abnormal outcome (never `.finished`).
    public var outcome: ChildOutcome

    /// Wraps an outcome.
    public init(_ outcome: ChildOutcome) { self.outcome = outcome }
}

/// Re-executes the bench binary with a hidden subcommand to run a strategy that may crash, and survives it.
public struct ChildProcessRunner: Sendable {
    /// The bench executable to re-execute.
    public var executable: URL
    /// Extra seconds a child may take beyond its run before it is killed as hung.
    public var grace: Double

    /// Creates a runner for `executable` (default: this process's own binary, `/proc/self/exe`).
    public init(executable: URL? = nil, grace: Double = 10) {
        self.executable = executable ?? ChildProcessRunner.currentExecutable()
        self.grace = grace
    }

    /// This process's binary, resolved through `/proc/self/exe`.
    public static func currentExecutable() -> URL {
        if let path = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") {
            return URL(fileURLWithPath: path)
        }
        return URL(fileURLWithPath: CommandLine.arguments[0])
    }

    /// The hidden subcommand's arguments for a cache run.
    public static func cacheArguments(
        strategy: String,
        parameters: CacheContention.Parameters,
        threads: Int,
        seconds: Double
    ) -> [String] {
        [
            ChildCacheCommand.configuration.commandName ?? "child-cache", "--strategy", strategy,
            "--threads", String(threads), "--keys", String(parameters.keyCount),
            "--read-ratio", String(parameters.readRatio), "--seconds", String(seconds),
            "--shape", parameters.shape.rawValue,
        ]
    }

    /// Runs `arguments` in a child process and classifies how it ended.
    public func run(arguments: [String], timeout: Double, environment: [String: String] = [:]) -> ChildOutcome {
        switch runDecoding(ChildRunReport.self, arguments: arguments, timeout: timeout, environment: environment) {
        case .success(let report): return .finished(report)
        case .failure(let failure): return failure.outcome
        }
    }

    /// Runs `arguments` in a child process (with `environment` added to this process's) and decodes the last line it
    /// printed as `T` (JSON); a child that crashed, failed, hung or printed no such line is the failure.
    public func runDecoding<T: Decodable & Sendable>(
        _ type: T.Type,
        arguments: [String],
        timeout: Double,
        environment extra: [String: String] = [:]
    ) -> Result<T, ChildFailure> {
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        // A crash must end the child at once: the Swift runtime's backtracer would otherwise symbolicate for seconds.
        var environment = ProcessInfo.processInfo.environment
        environment["SWIFT_BACKTRACE"] = "enable=no"
        environment.merge(extra) { _, new in new }
        process.environment = environment
        do {
            try process.run()
        } catch {
            return .failure(ChildFailure(.failed(status: -1)))
        }
        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning && Date() < deadline {
            usleep(10_000)
        }
        if process.isRunning {
            // Killed and left for Foundation to reap: waiting here could block on descendants holding the pipe.
            kill(process.processIdentifier, SIGKILL)
            return .failure(ChildFailure(.hung(seconds: timeout)))
        }
        process.waitUntilExit()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        switch process.terminationReason {
        case .uncaughtSignal:
            return .failure(ChildFailure(.crashed(signal: process.terminationStatus)))
        case .exit:
            guard process.terminationStatus == 0 else {
                return .failure(ChildFailure(.failed(status: process.terminationStatus)))
            }
            let line = String(decoding: data, as: UTF8.self).split(separator: "\n").last.map(String.init) ?? ""
            guard let decoded = try? JSONDecoder().decode(T.self, from: Data(line.utf8)) else {
                return .failure(ChildFailure(.failed(status: 0)))
            }
            return .success(decoded)
        @unknown default:
            return .failure(ChildFailure(.failed(status: process.terminationStatus)))
        }
    }

    /// Runs cache strategy `strategy` in a child process and converts the outcome to a sample.
    public func runCache(
        strategy: String,
        parameters: CacheContention.Parameters,
        threads: Int,
        seconds: Double,
        environment: [String: String] = [:]
    ) -> RunSample {
        let arguments = Self.cacheArguments(
            strategy: strategy,
            parameters: parameters,
            threads: threads,
            seconds: seconds
        )
        let outcome = run(arguments: arguments, timeout: seconds + grace, environment: environment)
        return Self.sample(from: outcome)
    }

    /// Runs lock strategy `lock` of the `locks` family in a child process and converts the outcome to a sample.
    public func runLocks(lock: String, threads: Int, seconds: Double, environment: [String: String]) -> RunSample {
        let arguments = [
            ChildLocksCommand.configuration.commandName ?? "child-locks", "--lock", lock, "--threads", String(threads),
            "--seconds", String(seconds),
        ]
        return Self.sample(from: run(arguments: arguments, timeout: seconds + grace, environment: environment))
    }

    /// The environment that starts a child process in `MutexLock`'s opt-in membarrier mode (read before `main`).
    public static let membarrierMode = ["THREADING_LOCK_MEMBARRIER": "1"]

    /// A sample carrying the child's numbers when it finished, and its verdict when it did not.
    public static func sample(from outcome: ChildOutcome) -> RunSample {
        var sample = RunSample(
            operationsPerSecond: 0,
            cpuNanosecondsPerOperation: 0,
            fairness: 0,
            badOperations: 0,
            operations: 0,
            latency: LatencySampler.makeHistogram()
        )
        if case .finished(let report) = outcome {
            sample.operationsPerSecond = report.opsPerSecond
            sample.cpuNanosecondsPerOperation = report.cpuNsPerOp
            sample.fairness = report.fairness
            sample.badOperations = report.badOperations
            sample.operations = report.operations
            if report.p50Ns > 0 { _ = sample.latency.record(report.p50Ns) }
            if report.p99Ns > 0 { _ = sample.latency.record(report.p99Ns) }
            sample.membarrierCallsPerSecond = report.membarrierCallsPerSecond ?? 0
        }
        sample.abnormalOutcome = outcome.abnormalDescription
        return sample
    }
}
