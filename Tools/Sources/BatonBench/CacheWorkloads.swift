import BatonTesting
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
    func sample(using generator: inout SeededGenerator) -> Int {
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
        var generator = SeededGenerator(seed: seed)
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
        var generator = SeededGenerator(seed: seed ^ 0xD1CE)
        dice = (0..<length).map { _ in UInt8(generator.next() % 100) }
    }
}

/// A Zipf stream polluted by sequential scans: after every `period` Zipf requests, a run of
/// `scanLength` keys read once each, taken in order from a cold range that no Zipf request
/// touches (a batch job walking the whole table).
func scanPollutedStream(
    _ distribution: ZipfDistribution, keys: Int, length: Int, period: Int, scanLength: Int, seed: UInt64
) -> [Int32] {
    var generator = SeededGenerator(seed: seed)
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

/// The hit ratio of Belady's offline optimum on `stream` with room for `capacity` keys: on a
/// miss with the cache full, the key whose next request is farthest away leaves — or the
/// requested key is not stored at all, if its own next request is the farthest (a cache may
/// decline a key, as TinyLFU's admission does, so the optimum may too). No policy that sees the
/// requests one at a time can do better: this is the ceiling.
///
/// Counted like the caches: hits among the first `warmUp` requests do not count. The optimum
/// uses those requests only to fill itself, so it enters the counted part holding the keys
/// they requested that are wanted again soonest after it — the best contents any cache could
/// have then (keeping the entries wanted soonest is what the exchange argument behind
/// Belady's rule favours at every step).
///
/// - Complexity: O(n log n) for n requests.
func beladyHitRatio(stream: [Int32], capacity: Int, warmUp: Int) -> Double {
    let warmUp = min(max(0, warmUp), stream.count)
    guard capacity > 0, warmUp < stream.count else { return 0 }
    // The position of each request's next request for the same key; `Int.max` for none.
    var nextUse = [Int](repeating: .max, count: stream.count)
    var seen: [Int32: Int] = [:]
    for position in stream.indices.reversed() {
        nextUse[position] = seen[stream[position]] ?? .max
        seen[stream[position]] = position
    }
    // The cached keys and their next requests; a max-heap of (next request, key) in which a
    // pair is stale once the key was requested again (a newer pair replaces it lazily).
    var cached: [Int32: Int] = [:]
    var heap = MaxHeap()
    // After the warm-up: each key it requested, wanted again at the next use of its last
    // request there; the soonest `capacity` of them.
    var wantedAfterWarmUp: [Int32: Int] = [:]
    for position in 0..<warmUp { wantedAfterWarmUp[stream[position]] = nextUse[position] }
    let start = wantedAfterWarmUp.filter { $0.value != .max }.sorted { $0.value < $1.value }.prefix(capacity)
    for (key, next) in start {
        cached[key] = next
        heap.push(next, key)
    }
    var hits = 0
    for position in warmUp..<stream.count {
        let key = stream[position]
        let next = nextUse[position]
        if cached[key] != nil {
            hits += 1
            cached[key] = next
            heap.push(next, key)
            continue
        }
        if cached.count == capacity {
            while let top = heap.top, cached[top.key] != top.next { heap.pop() }
            guard let farthest = heap.top, farthest.next > next else { continue }
            heap.pop()
            cached[farthest.key] = nil
        }
        cached[key] = next
        heap.push(next, key)
    }
    return Double(hits) / Double(stream.count - warmUp)
}

/// A binary max-heap of (next request, key) pairs, for ``beladyHitRatio(stream:capacity:warmUp:)``.
private struct MaxHeap {
    private var items: [(next: Int, key: Int32)] = []

    var top: (next: Int, key: Int32)? { items.first }

    mutating func push(_ next: Int, _ key: Int32) {
        items.append((next, key))
        var child = items.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard items[parent].next < items[child].next else { break }
            items.swapAt(parent, child)
            child = parent
        }
    }

    mutating func pop() {
        guard !items.isEmpty else { return }
        items.swapAt(0, items.count - 1)
        items.removeLast()
        var parent = 0
        while true {
            let left = 2 * parent + 1
            let right = left + 1
            var largest = parent
            if left < items.count && items[left].next > items[largest].next { largest = left }
            if right < items.count && items[right].next > items[largest].next { largest = right }
            guard largest != parent else { return }
            items.swapAt(parent, largest)
            parent = largest
        }
    }
}
