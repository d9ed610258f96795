// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

extension Job {
    /// Makes this job wait until `dependency` ended (finished, failed or cancelled).
    ///
    /// The two jobs may belong to different queues, or to none yet. Adding the same dependency twice changes
    /// nothing. An edge that would close a cycle — the job itself, or a job that already depends on this one
    /// directly or through others — is refused and the graph stays exactly as it was: Foundation accepts such an
    /// edge and both operations then wait for each other forever.
    ///
    /// - Parameter dependency: The job to wait for. The job keeps a strong reference to it (so it can read its
    ///   result); the dependency keeps only a weak one back.
    /// - Throws: ``ThreadingError/deadlock`` (`EDEADLK`) for a cycle, its detail naming the jobs of the cycle in
    ///   order; ``ThreadingError/invalidArgument`` (`EINVAL`) when this job already started or ended.
    /// - Complexity: O(jobs reachable from `dependency`), for the cycle check.
    public func addDependency(_ dependency: Job) throws(ThreadingError) {
        JobGraph.lock.lock()
        if dependency === self {
            JobGraph.lock.unlock()
            throw ThreadingError(
                code: EDEADLK,
                operation: "Job.addDependency",
                detail: "\(self) cannot depend on itself (cycle \"\(name)\" -> \"\(name)\")"
            )
        }
        if stateValue == .executing || stateValue.isEnded {
            let state = stateValue
            JobGraph.lock.unlock()
            throw ThreadingError(
                code: EINVAL,
                operation: "Job.addDependency",
                detail: "\(self) is already \(state); dependencies must be added before it starts"
            )
        }
        if dependencyList.contains(where: { $0 === dependency }) {
            JobGraph.lock.unlock()
            return
        }
        if let path = dependency.dependencyPath(to: self) {
            JobGraph.lock.unlock()
            let cycle = ([self] + path).map { "\"\($0.name)\"" }.joined(separator: " -> ")
            throw ThreadingError(
                code: EDEADLK,
                operation: "Job.addDependency",
                detail: "\(self) -> \(dependency) would close the dependency cycle \(cycle)"
            )
        }
        dependencyList.append(dependency)
        var changed: [@Sendable (Job, State) -> Void] = []
        if !dependency.stateValue.isEnded {
            dependency.dependentList.removeAll { $0.job == nil }
            dependency.dependentList.append(WeakJob(job: self))
            unfinishedDependencies += 1
            if stateValue == .ready {
                stateValue = .waiting
                changed = stateObservers
            }
        }
        JobGraph.lock.unlock()
        for observer in changed { observer(self, .waiting) }
    }

    /// Removes `dependency` from this job's dependencies; the job may become ready.
    ///
    /// Removing a job that is not a dependency changes nothing.
    ///
    /// - Parameter dependency: The dependency to drop.
    public func removeDependency(_ dependency: Job) {
        JobGraph.lock.lock()
        guard let index = dependencyList.firstIndex(where: { $0 === dependency }) else {
            JobGraph.lock.unlock()
            return
        }
        dependencyList.remove(at: index)
        guard !dependency.stateValue.isEnded else {
            JobGraph.lock.unlock()
            return
        }
        if let back = dependency.dependentList.firstIndex(where: { $0.job === self }) {
            dependency.dependentList.remove(at: back)
        }
        JobGraph.lock.unlock()
        // Counts as that dependency having ended, for this job.
        dependencyEnded()
    }

    /// The job's dependencies, in the order they were added.
    public var dependencies: [Job] { JobGraph.lock.withLock { dependencyList } }

    /// The outcome of the first dependency that produces an `Output` (a ``ResultJob`` of that type or a subclass),
    /// or nil when there is none or it has not ended.
    ///
    /// This is the typed replacement of the provider protocols `Operation` pipelines use to pass data along
    /// (`dependencies.filter { $0 is ImageDecodeOperationDataProvider }.first`): the decode job asks for `Data`,
    /// the filter job for an `Image`.
    ///
    /// - Parameter type: The output type to look for.
    /// - Returns: The dependency's result: its output, its error, or `CancellationError` when it was cancelled.
    public func dependencyResult<Output: Sendable>(_ type: Output.Type = Output.self) -> Result<Output, any Error>? {
        for dependency in dependencies {
            if let producer = dependency as? ResultJob<Output> {
                return producer.result
            }
        }
        return nil
    }

    /// The output of the first dependency that produces an `Output`, for use in a dependent's body.
    ///
    /// <!-- sample-context
    /// struct Image: Sendable { init(decoding bytes: [UInt8]) throws {} }
    /// let load = ResultJob<[UInt8]>(name: "load") { _ in [] }
    /// -->
    /// ```swift
    /// let decode = ResultJob<Image>(name: "decode") { job in
    ///     try Image(decoding: job.input([UInt8].self))
    /// }
    /// try decode.addDependency(load)  // load: ResultJob<[UInt8]>
    /// ```
    ///
    /// - Parameter type: The output type to look for.
    /// - Returns: The dependency's output.
    /// - Throws: The dependency's error when it failed; `CancellationError` when it was cancelled;
    ///   ``ThreadingError/invalidArgument`` when no dependency produces an `Output` (or it has not ended, which
    ///   cannot happen in a body that runs after its dependencies).
    public func input<Output: Sendable>(_ type: Output.Type = Output.self) throws -> Output {
        guard let result = dependencyResult(type) else {
            throw ThreadingError(
                code: EINVAL,
                operation: "Job.input",
                detail: "no ended dependency of \(self) produces \(Output.self)"
            )
        }
        return try result.get()
    }

    /// A path `self -> ... -> target` along dependency edges, or nil. `JobGraph.lock` held.
    func dependencyPath(to target: Job) -> [Job]? {
        var visited = Set<ObjectIdentifier>()
        var path: [Job] = []
        func visit(_ job: Job) -> Bool {
            path.append(job)
            if job === target { return true }
            if visited.insert(ObjectIdentifier(job)).inserted {
                for next in job.dependencyList where visit(next) { return true }
            }
            path.removeLast()
            return false
        }
        return visit(self) ? path : nil
    }
}
