import Atomics

/// A one-time claim: the first `claim()` returns `true`, every later one `false`.
///
/// Combinators use it to settle their outcome *before* they cancel the inputs they no longer
/// need and only then complete their own future, so whoever sees the combined outcome also sees
/// those inputs cancelled, and the cancellations' own callbacks (which arrive as failures) lose
/// the claim and are ignored.
@usableFromInline
final class Decision: Sendable {
    @usableFromInline let taken = ManagedAtomic(false)

    @inlinable init() {}

    /// `true` for the first caller only.
    @inlinable
    func claim() -> Bool {
        taken.compareExchange(expected: false, desired: true, ordering: .acquiringAndReleasing).exchanged
    }
}
