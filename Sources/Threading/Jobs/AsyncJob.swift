// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

/// A ``Job`` that ends when its body says so: the usual `AsyncOperation` subclass of `Operation`, built in.
///
/// The body (the closure) starts the work — a callback API, another queue — and
/// returns; the job stays ``Job/State/executing``, holding its slot of the queue's ``JobQueue/maxConcurrentJobs``,
/// until ``finish()`` or ``finish(throwing:)`` is called from any thread. An error thrown by the body itself ends
/// the job at once.
///
/// <!-- sample-context
/// struct Network: Sendable { func get(_ url: String, _ reply: @escaping @Sendable (Int) -> Void) { reply(200) } }
/// let network = Network()
/// let url = "https://example.com"
/// -->
/// ```swift
/// let fetch = AsyncJob(name: "fetch") { job in
///     network.get(url) { reply in
///         job.finish()
///     }
/// }
/// ```
///
/// For a typed output use the asynchronous ``ResultJob`` instead.
///
/// Reference semantics; `Sendable` like ``Job``.
public final class AsyncJob: Job, @unchecked Sendable {
    private let startBody: @Sendable (AsyncJob) throws -> Void

    /// Creates an asynchronous job that starts `body` and ends when ``finish()`` is called.
    ///
    /// - Parameters:
    ///   - name: A name for diagnostics; nil gives `job-N`.
    ///   - priority: Its priority among the ready jobs of its queue.
    ///   - qos: The pool lane its body starts in; nil uses its queue's.
    ///   - body: Starts the work; an error it throws ends the job failed at once.
    public override init(
        name: String? = nil,
        priority: Priority = .normal,
        qos: QoS? = nil,
        _ body: @escaping @Sendable (AsyncJob) throws -> Void
    ) {
        startBody = body
        super.init(name: name, priority: priority, qos: qos, asynchronous: true)
    }

    /// Starts the work: runs the closure given at creation, which arranges for ``finish()`` to be called.
    override func main() throws {
        try startBody(self)
    }

    /// Ends the job: ``Job/State/finished``, or ``Job/State/cancelled`` when it was cancelled meanwhile. Calls
    /// after the job ended are ignored.
    public func finish() {
        end(error: nil)
    }

    /// Ends the job ``Job/State/failed`` with `error`. Calls after the job ended are ignored.
    ///
    /// - Parameter error: The error dependents will see.
    public func finish(throwing error: any Error) {
        end(error: error)
    }
}
