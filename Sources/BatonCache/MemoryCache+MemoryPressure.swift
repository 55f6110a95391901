#if canImport(Darwin)
import Dispatch

extension MemoryCache {
    /// Starts trimming the cache when the system reports memory pressure, and returns the
    /// event source doing it; call `cancel()` on it to stop.
    ///
    /// On a warning the cache is trimmed to `warningFraction` of its current count; on a
    /// critical event it is emptied. Apple platforms only: elsewhere, call
    /// ``trim(toCount:)``, ``trim(toCost:)`` or ``removeAll()`` from your own handler.
    ///
    /// - Parameters:
    ///   - warningFraction: The share of entries kept on a warning, in `0...1`.
    ///   - queue: Where the trimming runs; a global utility queue by default.
    /// - Returns: The running source. It holds the cache weakly, so it does not keep the cache
    ///   alive; it runs until cancelled.
    public func trimOnMemoryPressure(
        warningFraction: Double = 0.5, queue: DispatchQueue = .global(qos: .utility)
    ) -> any DispatchSourceMemoryPressure {
        precondition((0...1).contains(warningFraction), "MemoryCache: warningFraction must be in 0...1")
        let source = DispatchSource.makeMemoryPressureSource(eventMask: [.warning, .critical], queue: queue)
        source.setEventHandler { [weak self] in
            guard let self else { return }
            let event = source.data
            if event.contains(.critical) {
                self.removeAll()
            } else if event.contains(.warning) {
                self.trim(toCount: Int(Double(self.count) * warningFraction))
            }
        }
        source.activate()
        return source
    }
}
#endif
