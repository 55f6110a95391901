import Atomics
import BatonInternals

/// A number for the calling thread, to pick the stripe of a striped structure that it writes.
///
/// Threads are numbered 0, 1, 2… in the order they first ask, so the first `n` threads to use
/// a structure of `n` stripes each get a stripe of their own (a hash of the thread's address
/// would put two threads on one stripe by chance, in some runs and not others). Numbers are
/// never reused; a stripe is `number & (stripes - 1)`, so threads beyond `n` share stripes,
/// which stays correct and only costs the sharing.
@usableFromInline
enum ThreadStripe {
    /// The calling thread's number, kept in a thread-specific slot (one lookup per call).
    @inlinable
    static var current: Int {
        if let stored = threadStripeSlot.word {
            // Stored plus one, so that no thread's slot is nil.
            return Int(bitPattern: stored) &- 1
        }
        return assign()
    }

    /// Gives the calling thread the next number.
    @usableFromInline
    static func assign() -> Int {
        let number = nextNumber.loadThenWrappingIncrement(ordering: .relaxed)
        threadStripeSlot.setWord(UnsafeRawPointer(bitPattern: number &+ 1))
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

/// The slot that holds each thread's number (plus one).
@usableFromInline
let threadStripeSlot = ThreadSlot.words()
