import BatonInternals

/// The source of time a ``MemoryCache`` measures `timeToLive` and `timeToIdle` against.
///
/// The default, ``continuous``, reads `ContinuousClock`. Tests pass a clock they move by hand,
/// so expiry is tested without sleeping:
///
/// ```swift
/// let now = Protected(Duration.zero)
/// let cache = MemoryCache<String, Int>(timeToLive: .seconds(60), clock: CacheClock { now.value })
/// cache["a"] = 1
/// now.write { $0 += .seconds(60) }
/// cache["a"]   // nil: expired
/// ```
///
/// The cache reads the clock only when it has a time limit; without one, no operation reads it.
///
/// Thread safety: `now` is called from any thread that uses the cache, so it must be safe to
/// call concurrently; it should also never go backwards.
public struct CacheClock: Sendable {
    let now: @Sendable () -> Duration

    /// A clock that reports `now()`: the time elapsed since any fixed origin.
    public init(now: @escaping @Sendable () -> Duration) {
        self.now = now
    }

    /// `ContinuousClock`: monotonic, and it keeps counting while the system sleeps.
    public static var continuous: CacheClock {
        CacheClock { ContinuousClock.now - continuousOrigin }
    }

    /// The current time in whole nanoseconds since the clock's origin.
    @usableFromInline
    func nanoseconds() -> Int64 {
        now().wholeNanoseconds
    }
}

/// A fixed point on `ContinuousClock` that ``CacheClock/continuous`` counts from.
private let continuousOrigin = ContinuousClock.now
