import Foundation

/// One measured (case, contender) pair: the median and the worst of its repetitions.
public struct BenchResult: Codable, Sendable, Equatable {
    /// The workload, e.g. `"3w/10r"`.
    public var `case`: String
    /// What was measured, e.g. `"ReadWriteLock"` or `"NSLock"`.
    public var contender: String
    /// Whether the contender is Baton's (otherwise it is an anchor to compare with).
    public var baton: Bool
    /// `"ns/op"` (lower is better) or `"hit ratio"` (higher is better).
    public var unit: String
    /// The median over the repetitions.
    public var median: Double
    /// The worst repetition: the largest time, or the smallest ratio.
    public var worst: Double
    /// How many repetitions were run.
    public var reps: Int

    public init(case: String, contender: String, baton: Bool, unit: String, samples: [Double]) {
        precondition(!samples.isEmpty, "BenchResult needs at least one sample")
        self.case = `case`
        self.contender = contender
        self.baton = baton
        self.unit = unit
        self.median = Self.median(of: samples)
        self.worst = Self.higherIsBetter(unit) ? samples.min()! : samples.max()!
        self.reps = samples.count
    }

    /// Whether a larger number is the better one for this unit.
    public var higherIsBetter: Bool { Self.higherIsBetter(unit) }

    static func higherIsBetter(_ unit: String) -> Bool {
        unit == Unit.hitRatio || unit.hasSuffix("/s")
    }

    static func median(of samples: [Double]) -> Double {
        let sorted = samples.sorted()
        let middle = sorted.count / 2
        return sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
    }
}

/// The units the scenarios report in.
public enum Unit {
    public static let nanosecondsPerOperation = "ns/op"
    public static let hitRatio = "hit ratio"
    /// A rate measured ÷ the rate configured (1 is the goal).
    public static let ofConfiguredRate = "× configured rate"
    /// Requests answered per second (higher is better).
    public static let requestsPerSecond = "req/s"
    /// A latency in milliseconds (lower is better).
    public static let milliseconds = "ms"
}

/// Everything one scenario measured in one run; encodes to the `--json` format.
public struct ScenarioReport: Codable, Sendable, Equatable {
    /// The scenario's name, e.g. `"locks"`.
    public var scenario: String
    /// The number of active processor cores during the run.
    public var cores: Int
    /// Whether the run used the reduced `--quick` sizes.
    public var quick: Bool
    /// One row per (case, contender), in the order measured.
    public var results: [BenchResult]
    /// What the numbers mean and how they were taken, printed under the table.
    public var notes: [String]
    /// Contenders that bound what any contender can reach (an offline optimum): shown with the
    /// measurements, but neither Baton's nor an anchor to compare with. Their rows carry
    /// `"baton": false`; the JSON lists them under `"ceilings"` when there are any.
    public var ceilings: [String]

    public init(
        scenario: String, cores: Int, quick: Bool, results: [BenchResult], notes: [String] = [],
        ceilings: [String] = []
    ) {
        self.scenario = scenario
        self.cores = cores
        self.quick = quick
        self.results = results
        self.notes = notes
        self.ceilings = ceilings
    }

    enum CodingKeys: String, CodingKey {
        case scenario, cores, quick, results, notes, ceilings
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        scenario = try container.decode(String.self, forKey: .scenario)
        cores = try container.decode(Int.self, forKey: .cores)
        quick = try container.decode(Bool.self, forKey: .quick)
        results = try container.decode([BenchResult].self, forKey: .results)
        notes = try container.decode([String].self, forKey: .notes)
        ceilings = try container.decodeIfPresent([String].self, forKey: .ceilings) ?? []
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(scenario, forKey: .scenario)
        try container.encode(cores, forKey: .cores)
        try container.encode(quick, forKey: .quick)
        try container.encode(results, forKey: .results)
        try container.encode(notes, forKey: .notes)
        // Only where there are any, so that the other scenarios' JSON stays as it was.
        if !ceilings.isEmpty { try container.encode(ceilings, forKey: .ceilings) }
    }

    /// The cases in first-measured order.
    public var cases: [String] { results.map(\.case).uniqued() }
    /// The contenders in first-measured order.
    public var contenders: [String] { results.map(\.contender).uniqued() }

    /// The row for one (case, contender) pair, if it was measured.
    public func result(case name: String, contender: String) -> BenchResult? {
        results.first { $0.case == name && $0.contender == contender }
    }

    /// The report as one line of JSON.
    public func jsonLine() throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return String(decoding: try encoder.encode(self), as: UTF8.self)
    }
}

extension Array where Element: Hashable {
    func uniqued() -> [Element] {
        var seen = Set<Element>()
        return filter { seen.insert($0).inserted }
    }
}

/// Collects one sample per repetition for each (case, contender) pair and turns them into
/// results, in the order the pairs were first recorded.
struct SampleSheet {
    private var rows: [(case: String, contender: String, baton: Bool, unit: String, samples: [Double])] = []
    /// Row index by pair.
    private var index: [String: Int] = [:]

    /// Adds one repetition's value for the pair.
    mutating func record(
        _ value: Double, case name: String, contender: String, baton: Bool,
        unit: String = Unit.nanosecondsPerOperation
    ) {
        let key = name + "\u{0}" + contender
        if let row = index[key] {
            rows[row].samples.append(value)
        } else {
            index[key] = rows.count
            rows.append((name, contender, baton, unit, [value]))
        }
    }

    /// One result per pair, with the median and worst of its samples.
    var results: [BenchResult] {
        rows.map {
            BenchResult(case: $0.case, contender: $0.contender, baton: $0.baton, unit: $0.unit, samples: $0.samples)
        }
    }
}
