import Foundation

/// A Zipf distribution over keys `0..<count`: key `k` is requested with probability
/// proportional to `1 / (k + 1)^exponent`, so key 0 is the most popular.
struct ZipfDistribution: Sendable {
    /// The cumulative probabilities, one per key.
    private let cumulative: [Double]

    init(keys count: Int, exponent: Double) {
        precondition(count > 0, "a Zipf distribution needs at least one key")
        var total = 0.0
        var cumulative = [Double]()
        cumulative.reserveCapacity(count)
        for rank in 1...count {
            total += 1 / pow(Double(rank), exponent)
            cumulative.append(total)
        }
        self.cumulative = cumulative.map { $0 / total }
    }

    /// One key, by inverting the distribution with a binary search.
    func sample(using generator: inout SplitMix64) -> Int {
        let u = Double(generator.next() >> 11) * 0x1p-53
        var low = 0
        var high = cumulative.count - 1
        while low < high {
            let middle = (low + high) / 2
            if cumulative[middle] < u { low = middle + 1 } else { high = middle }
        }
        return low
    }

    /// `length` keys drawn independently.
    func stream(length: Int, seed: UInt64) -> [Int32] {
        var generator = SplitMix64(seed: seed)
        return (0..<length).map { _ in Int32(sample(using: &generator)) }
    }
}

/// One thread's share of a get/set mix: the keys it touches, and a number in `0..<100` per
/// operation that makes it a set when below the mix's set percentage.
struct OperationStream: Sendable {
    let keys: [Int32]
    let dice: [UInt8]

    init(_ distribution: ZipfDistribution, length: Int, seed: UInt64) {
        keys = distribution.stream(length: length, seed: seed)
        var generator = SplitMix64(seed: seed ^ 0xD1CE)
        dice = (0..<length).map { _ in UInt8(generator.next() % 100) }
    }
}

/// A Zipf stream polluted by sequential scans: after every `period` Zipf requests, a run of
/// `scanLength` keys read once each, taken in order from a cold range that no Zipf request
/// touches (a batch job walking the whole table).
func scanPollutedStream(
    _ distribution: ZipfDistribution, keys: Int, length: Int, period: Int, scanLength: Int, seed: UInt64
) -> [Int32] {
    var generator = SplitMix64(seed: seed)
    var stream = [Int32]()
    stream.reserveCapacity(length)
    var nextCold = keys
    while stream.count < length {
        for _ in 0..<period where stream.count < length {
            stream.append(Int32(distribution.sample(using: &generator)))
        }
        for _ in 0..<scanLength where stream.count < length {
            stream.append(Int32(nextCold))
            nextCold += 1
        }
    }
    return stream
}
