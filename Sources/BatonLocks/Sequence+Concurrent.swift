// Bounded parallel work over a sequence: "at most 4 downloads at once" without a semaphore and a
// task group written by hand every time.
//
// One task group runs the bodies. It is seeded with `maxConcurrency` child tasks, and each time
// one finishes the next element is pulled from the iterator and started: exactly
// `maxConcurrency` bodies run while elements remain, elements are pulled only as slots free up,
// and no semaphore, no waiting task and no buffer of the whole sequence is needed.

extension Sequence where Element: Sendable {
    /// Returns the results of `transform` over the sequence's elements, in the sequence's order,
    /// running at most `maxConcurrency` of the calls at once.
    ///
    /// ```swift
    /// let pages = try await urls.concurrentMap(maxConcurrency: 4) { url in
    ///     try await download(url)
    /// }
    /// ```
    ///
    /// - **Results in order.** `result[i]` is `transform(element i)`, however the calls finish.
    /// - **The width is reached.** The first `maxConcurrency` elements start at once, and each
    ///   time a call finishes the next element starts: exactly `maxConcurrency` calls run while
    ///   elements remain, and never more.
    /// - **The first error wins.** When a call throws, the other calls are cancelled, no further
    ///   element starts, and the method throws that error once every running call has ended;
    ///   errors thrown after it are dropped.
    /// - **Cancellation.** Cancelling the calling task cancels every running call, and no further
    ///   element is pulled or started; the method then throws `CancellationError` (or the first
    ///   error a call threw) once the running calls have ended, unless the end of the sequence had
    ///   been reached before the cancellation.
    /// - **Structured.** Each call runs in a child task of the calling task (inheriting its
    ///   priority and task-local values), and none is still running when the method returns or
    ///   throws.
    /// - **Elements are pulled as slots free up,** from the calling task: at most
    ///   `maxConcurrency` elements are held at once besides the results.
    ///
    /// With `maxConcurrency` 1 the calls run one after the other in the calling task itself,
    /// without child tasks.
    ///
    /// Thread safety: `transform` runs concurrently with itself, on other threads than the
    /// caller's; the sequence is iterated on the caller's isolation only, so it need not be
    /// `Sendable`.
    ///
    /// - Parameters:
    ///   - maxConcurrency: The most calls of `transform` that run at once; at least 1.
    ///   - isolation: The caller's actor, inherited so that the sequence is iterated on it; leave
    ///     the default.
    ///   - transform: The work for one element.
    /// - Returns: The results, in the order of the elements.
    /// - Throws: The first error `transform` threw, or `CancellationError` if the calling task
    ///   was cancelled before the end of the sequence was reached.
    /// - Precondition: `maxConcurrency >= 1`.
    /// - Complexity: O(*n*) calls and memory for the results; at most `maxConcurrency` child
    ///   tasks at once.
    @inlinable
    public func concurrentMap<T: Sendable>(
        maxConcurrency: Int,
        isolation: isolated (any Actor)? = #isolation,
        _ transform: @escaping @Sendable (Element) async throws -> T
    ) async throws -> [T] {
        checkWidth(maxConcurrency, "concurrentMap")
        if maxConcurrency == 1 {
            var results: [T] = []
            results.reserveCapacity(underestimatedCount)
            try await runOneAtATime(isolation: isolation) { results.append(try await transform($0)) }
            return results
        }
        var slots: [T?] = []
        slots.reserveCapacity(underestimatedCount)
        try await runConcurrently(width: maxConcurrency, isolation: isolation, transform) { index, result in
            while slots.count <= index { slots.append(nil) }
            slots[index] = result
        }
        // Every element ran to completion, so every slot is filled.
        return slots.map { $0! }
    }

    /// Returns the non-`nil` results of `transform` over the sequence's elements, in the
    /// sequence's order, running at most `maxConcurrency` of the calls at once.
    ///
    /// It behaves as `concurrentMap(maxConcurrency:_:)` does — results
    /// in order, exactly `maxConcurrency` calls running while elements remain, the first error
    /// cancelling the others and thrown once they have ended, the calling task's cancellation
    /// cancelling every call, elements pulled only as slots free up — and then leaves out the
    /// `nil` results.
    ///
    /// ```swift
    /// let thumbnails = try await photos.concurrentCompactMap(maxConcurrency: 4) { photo in
    ///     try await photo.hasThumbnail ? makeThumbnail(photo) : nil
    /// }
    /// ```
    ///
    /// Thread safety: `transform` runs concurrently with itself, on other threads than the
    /// caller's; the sequence is iterated on the caller's isolation only.
    ///
    /// - Parameters:
    ///   - maxConcurrency: The most calls of `transform` that run at once; at least 1.
    ///   - isolation: The caller's actor, inherited so that the sequence is iterated on it; leave
    ///     the default.
    ///   - transform: The work for one element: a value to keep, or `nil` to leave it out.
    /// - Returns: The non-`nil` results, in the order of the elements.
    /// - Throws: The first error `transform` threw, or `CancellationError` if the calling task
    ///   was cancelled before the end of the sequence was reached.
    /// - Precondition: `maxConcurrency >= 1`.
    /// - Complexity: O(*n*) calls and memory for the results; at most `maxConcurrency` child
    ///   tasks at once.
    @inlinable
    public func concurrentCompactMap<T: Sendable>(
        maxConcurrency: Int,
        isolation: isolated (any Actor)? = #isolation,
        _ transform: @escaping @Sendable (Element) async throws -> T?
    ) async throws -> [T] {
        checkWidth(maxConcurrency, "concurrentCompactMap")
        if maxConcurrency == 1 {
            var results: [T] = []
            try await runOneAtATime(isolation: isolation) {
                if let result = try await transform($0) { results.append(result) }
            }
            return results
        }
        var slots: [T?] = []
        slots.reserveCapacity(underestimatedCount)
        try await runConcurrently(width: maxConcurrency, isolation: isolation, transform) { index, result in
            while slots.count <= index { slots.append(nil) }
            slots[index] = result
        }
        return slots.compactMap { $0 }
    }

    /// Runs `body` over the sequence's elements, at most `maxConcurrency` calls at once, and
    /// returns when every call has finished.
    ///
    /// ```swift
    /// try await uploads.concurrentForEach(maxConcurrency: 4) { file in
    ///     try await upload(file)
    /// }
    /// ```
    ///
    /// - **The width is reached.** The first `maxConcurrency` elements start at once, and each
    ///   time a call finishes the next element starts: exactly `maxConcurrency` calls run while
    ///   elements remain, and never more. Calls start in the order of the elements.
    /// - **Memory stays bounded.** An element is pulled from the sequence's iterator only when a
    ///   slot is free, and nothing of a finished call is kept: a long, lazy or endless sequence
    ///   holds at most `maxConcurrency` elements at once, never O(*n*).
    /// - **The first error wins.** When a call throws, the other calls are cancelled, no further
    ///   element is pulled, and the method throws that error once every running call has ended;
    ///   errors thrown after it are dropped. An endless sequence therefore runs until a call
    ///   throws or the calling task is cancelled.
    /// - **Cancellation.** Cancelling the calling task cancels every running call, and no further
    ///   element is pulled or started; the method then throws `CancellationError` (or the first
    ///   error a call threw) once the running calls have ended, unless the end of the sequence had
    ///   been reached before the cancellation.
    /// - **Structured.** Each call runs in a child task of the calling task, and none is still
    ///   running when the method returns or throws.
    ///
    /// With `maxConcurrency` 1 the calls run one after the other in the calling task itself.
    ///
    /// Thread safety: `body` runs concurrently with itself, on other threads than the caller's;
    /// the sequence is iterated on the caller's isolation only, so it need not be `Sendable`.
    ///
    /// - Parameters:
    ///   - maxConcurrency: The most calls of `body` that run at once; at least 1.
    ///   - isolation: The caller's actor, inherited so that the sequence is iterated on it; leave
    ///     the default.
    ///   - body: The work for one element.
    /// - Throws: The first error `body` threw, or `CancellationError` if the calling task was
    ///   cancelled before the end of the sequence was reached.
    /// - Precondition: `maxConcurrency >= 1`.
    /// - Complexity: O(*n*) calls; O(`maxConcurrency`) memory.
    @inlinable
    public func concurrentForEach(
        maxConcurrency: Int,
        isolation: isolated (any Actor)? = #isolation,
        _ body: @escaping @Sendable (Element) async throws -> Void
    ) async throws {
        checkWidth(maxConcurrency, "concurrentForEach")
        if maxConcurrency == 1 {
            try await runOneAtATime(isolation: isolation) { try await body($0) }
            return
        }
        try await runConcurrently(width: maxConcurrency, isolation: isolation, body) { _, _ in }
    }

    /// Stops with a message naming the method and the value when `width` is less than 1.
    @usableFromInline
    func checkWidth(_ width: Int, _ method: StaticString) {
        precondition(width >= 1, "\(method): maxConcurrency must be at least 1 (got \(width))")
    }

    /// Runs `body` over the elements one after the other in the calling task: width 1 needs no
    /// child task. Cancellation is checked before each pull, as in `runConcurrently`.
    @inlinable
    func runOneAtATime(
        isolation: isolated (any Actor)?, _ body: (Element) async throws -> Void
    ) async throws {
        var iterator = makeIterator()
        while true {
            try Task.checkCancellation()
            guard let element = iterator.next() else { return }
            try await body(element)
        }
    }

    /// Runs `body` over the elements in child tasks of one task group, `width` at once, handing
    /// each result to `collect` with its element's position, in the order the calls finish.
    ///
    /// The group is seeded with `width` elements; each finished call makes room for the next
    /// element, pulled only then. The first error cancels the other children, and is thrown once
    /// they have all ended.
    @inlinable
    func runConcurrently<Result: Sendable>(
        width: Int,
        isolation: isolated (any Actor)?,
        _ body: @escaping @Sendable (Element) async throws -> Result,
        collect: (Int, Result) -> Void
    ) async throws {
        var iterator = makeIterator()
        try await withThrowingTaskGroup(of: (Int, Result).self, isolation: isolation) { group in
            var started = 0
            // Whether the iterator has reported its end. Cancellation is checked before each
            // pull, so that a cancelled caller pulls nothing more.
            var ended = false
            while started < width, !Task.isCancelled {
                guard let element = iterator.next() else {
                    ended = true
                    break
                }
                let index = started
                group.addTask { (index, try await body(element)) }
                started += 1
            }
            // The first error thrown: it cancels the other calls, which are drained.
            var failure: (any Error)?
            while let outcome = await group.nextResult() {
                switch outcome {
                case .success(let (index, result)):
                    collect(index, result)
                case .failure(let error):
                    if failure == nil {
                        failure = error
                        group.cancelAll()
                    }
                }
                if failure != nil || ended || Task.isCancelled { continue }
                if let element = iterator.next() {
                    let next = started
                    group.addTask { (next, try await body(element)) }
                    started += 1
                } else {
                    ended = true
                }
            }
            if let failure { throw failure }
            if !ended { throw CancellationError() }
        }
    }
}
