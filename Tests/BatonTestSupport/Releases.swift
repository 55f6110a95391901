import Foundation
import Testing

/// Whether the thread or the address sanitizer's runtime is linked into this process.
public let runsUnderSanitizer = ["__tsan_init", "__asan_init"].contains { (name: String) in
    dlsym(dlopen(nil, RTLD_NOW), name) != nil
}

/// `full`, or a `divisor`-th of it when a sanitizer is linked in (``runsUnderSanitizer``).
///
/// For the long races and the leak tests' loops. A sanitizer instruments every allocation and
/// memory access: it slows each operation of a race 10–20 times (the 8-thread lock races on two
/// cores), and reports an unguarded pair of accesses the first time it sees one, not after many.
/// The plain run keeps the full size.
public func reducedUnderSanitizer(_ full: Int, by divisor: Int) -> Int {
    runsUnderSanitizer ? full / divisor : full
}

/// Counts the ``Tracked`` values (or any other instances) made and released.
///
/// Its lock is Foundation's, not Baton's: the counts that judge Baton's code do not lean on it.
public final class Census: @unchecked Sendable {
    private let lock = NSLock()
    private var madeCount = 0
    private var releasedCount = 0

    public init() {}

    public func noteMade() { lock.withLock { madeCount += 1 } }
    public func noteReleased() { lock.withLock { releasedCount += 1 } }
    public var made: Int { lock.withLock { madeCount } }
    public var released: Int { lock.withLock { releasedCount } }
}

/// A value whose deinit is counted by its ``Census``.
public final class Tracked: Sendable {
    public let census: Census
    public let id: Int

    public init(_ census: Census, id: Int = 0) {
        self.census = census
        self.id = id
        census.noteMade()
    }

    deinit { census.noteReleased() }
}

/// An error that holds a counted value: whatever fails with it must release it too.
public struct TrackedError: Error {
    public let tracked: Tracked
    public init(_ tracked: Tracked) { self.tracked = tracked }
}

/// Weak references to objects, to count those still alive.
public final class WeakRefs: @unchecked Sendable {
    private struct Ref {
        weak var object: (any AnyObject & Sendable)?
    }

    private let lock = NSLock()
    private var refs: [Ref] = []

    public init() {}

    public func add(_ object: any AnyObject & Sendable) { lock.withLock { refs.append(Ref(object: object)) } }
    public var count: Int { lock.withLock { refs.count } }
    public var alive: Int { lock.withLock { refs.reduce(0) { $0 + ($1.object == nil ? 0 : 1) } } }
}

/// Polls `condition` on a thread of its own (never blocking the cooperative pool) until it
/// holds or `seconds` pass; returns whether it held. The caller then checks exact counts.
public func eventuallyHolds(
    within seconds: Double = 30, _ condition: @escaping @Sendable () -> Bool
) async -> Bool {
    await withCheckedContinuation { continuation in
        Thread {
            let deadline = Date().addingTimeInterval(seconds)
            var held = condition()
            while !held && Date() < deadline {
                usleep(2_000)
                held = condition()
            }
            continuation.resume(returning: held)
        }.start()
    }
}

/// Waits for every object in `refs` and every value of `census` to be released, then checks
/// the exact counts.
public func expectAllReleased(
    _ refs: WeakRefs, _ census: Census, sourceLocation: SourceLocation = #_sourceLocation
) async {
    let released = await eventuallyHolds { refs.alive == 0 && census.released == census.made }
    #expect(released, "not released in time", sourceLocation: sourceLocation)
    #expect(refs.alive == 0, "\(refs.alive) of \(refs.count) objects alive", sourceLocation: sourceLocation)
    #expect(
        census.released == census.made, "released \(census.released) of \(census.made)", sourceLocation: sourceLocation)
}
