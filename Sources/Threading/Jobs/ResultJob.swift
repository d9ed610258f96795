// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

/// A ``Job`` that produces a value its dependents read in a typed way.
///
/// <!-- sample-context
/// func readFile() throws -> [UInt8] { [] }
/// struct Image: Sendable { init(decoding bytes: [UInt8]) throws {} }
/// let queue = JobQueue(name: "images")
/// -->
/// ```swift
/// let load = ResultJob<[UInt8]>(name: "load") { _ in try readFile() }
/// let decode = ResultJob<Image>(name: "decode") { job in try Image(decoding: job.input([UInt8].self)) }
/// try decode.addDependency(load)
/// queue.addJobs([load, decode], waitUntilFinished: false)
/// ```
///
/// A synchronous result job returns its output from its body; an
/// asynchronous one (``init(name:priority:qos:asynchronous:)``) calls ``finish(returning:)`` or
/// ``finish(throwing:)`` later, from any thread, like an `Operation` subclass that finishes when a download calls back.
///
/// ``result`` is nil until the job ended, then the output, the error, or `CancellationError` for a cancelled job
/// (its output, if any, is not trusted).
///
/// Reference semantics; `Sendable` because `Output` is and the stored output is guarded by the job lock.
public final class ResultJob<Output: Sendable>: Job, @unchecked Sendable {
    // Guarded by `JobGraph.lock`.
    private var produced: Output?
    /// The work: it returns the output, or it starts work that calls a `finish` method later.
    private enum Body {
        case produce(@Sendable (ResultJob<Output>) throws -> Output)
        case asynchronous(@Sendable (ResultJob<Output>) -> Void)
    }

    private let work: Body

    /// Creates a job whose output is what `body` returns.
    ///
    /// - Parameters:
    ///   - name: A name for diagnostics; nil gives `job-N`.
    ///   - priority: Its priority among the ready jobs of its queue.
    ///   - qos: The pool lane it runs in; nil uses its queue's.
    ///   - body: Produces the output; it receives the job (for ``Job/isCancelled`` and ``Job/input(_:)``).
    public init(
        name: String? = nil,
        priority: Priority = .normal,
        qos: QoS? = nil,
        _ body: @escaping @Sendable (ResultJob<Output>) throws -> Output
    ) {
        work = .produce(body)
        super.init(name: name, priority: priority, qos: qos, asynchronous: false)
    }

    /// Creates an asynchronous job: `body` starts the work and returns; the job keeps its queue slot and stays
    /// executing until ``finish(returning:)`` or ``finish(throwing:)`` is called.
    ///
    /// - Parameters:
    ///   - name: A name for diagnostics; nil gives `job-N`.
    ///   - priority: Its priority among the ready jobs of its queue.
    ///   - qos: The pool lane its body starts in; nil uses its queue's.
    ///   - body: Starts the work and arranges for a `finish` call.
    public init(
        name: String? = nil,
        priority: Priority = .normal,
        qos: QoS? = nil,
        asynchronous body: @escaping @Sendable (ResultJob<Output>) -> Void
    ) {
        work = .asynchronous(body)
        super.init(name: name, priority: priority, qos: qos, asynchronous: true)
    }

    /// Runs the closure and stores its output (or starts the asynchronous body).
    override func main() throws {
        switch work {
        case .produce(let body):
            let output = try body(self)
            JobGraph.lock.withLock { produced = output }
        case .asynchronous(let body):
            body(self)
        }
    }

    /// Ends an asynchronous job with `output`. Calls after the job ended (a second finish) are ignored.
    ///
    /// - Parameter output: The output dependents will read.
    public func finish(returning output: Output) {
        require(isAsynchronous, "ResultJob.finish(returning:): \(self) is not asynchronous")
        JobGraph.lock.withLock {
            if stateValue == .executing { produced = output }
        }
        end(error: nil)
    }

    /// Ends an asynchronous job ``Job/State/failed`` with `error`. Calls after the job ended are ignored.
    ///
    /// - Parameter error: The error dependents will see.
    public func finish(throwing error: any Error) {
        require(isAsynchronous, "ResultJob.finish(throwing:): \(self) is not asynchronous")
        end(error: error)
    }

    /// The outcome once the job ended: its output, its error, or `CancellationError` when it was cancelled; nil
    /// before.
    public var result: Result<Output, any Error>? {
        JobGraph.lock.withLock {
            switch stateValue {
            case .finished:
                return produced.map { .success($0) }
            case .failed:
                return .failure(failure!)
            case .cancelled:
                return .failure(CancellationError())
            case .waiting, .ready, .executing:
                return nil
            }
        }
    }

    /// The output when the job finished; nil otherwise.
    public var output: Output? { try? result?.get() }
}
