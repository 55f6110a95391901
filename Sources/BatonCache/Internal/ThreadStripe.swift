import Atomics
import CBatonPlatform

/// A number for the calling thread, to pick the stripe of a striped structure that it writes.
///
/// Threads are numbered 0, 1, 2… in the order they first ask, so the first `n` threads to use
/// a structure of `n` stripes each get a stripe of their own (a hash of the thread's address
/// would put two threads on one stripe by chance, in some runs and not others). Numbers are
/// never reused; a stripe is `number & (stripes - 1)`, so threads beyond `n` share stripes,
/// which stays correct and only costs the sharing.
@usableFromInline
enum ThreadStripe {
    /// The calling thread's number, kept in a C thread-local (one load per call).
    @inlinable
    static var current: Int {
        let stored = baton_thread_stripe()
        // Stored plus one, so that 0 means "none yet".
        guard stored != 0 else { return assign() }
        return Int(bitPattern: stored) &- 1
    }

    /// Gives the calling thread the next number. Once per thread: kept out of line, so that
    /// the callers of ``current`` do not save registers for it on every call.
    @usableFromInline @inline(never)
    static func assign() -> Int {
        let number = nextNumber.loadThenWrappingIncrement(ordering: .relaxed)
        baton_set_thread_stripe(UInt(bitPattern: number &+ 1))
        return number
    }

    /// The next number to hand out.
    static let nextNumber = ManagedAtomic<Int>(0)

    /// The smallest power of two of stripes that gives each core's thread a stripe of its own,
    /// twice over (threads outnumber cores), at most 64.
    static func stripeCount(cores: Int) -> Int {
        var count = 1
        while count < min(64, 2 * max(1, cores)) { count <<= 1 }
        return count
    }
}
