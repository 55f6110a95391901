/// The operations a linearizability check draws for each thread: one of a list, each equally
/// likely, or whatever a closure makes from a seeded generator.
///
/// ```swift
/// let operations: CheckOperations<CounterOperation> = [.increment, .read]
/// let withKeys = CheckOperations<CacheOperation>.generated { random in
///     let key = Int.random(in: 0..<3, using: &random)
///     return random.chance(50) ? .get(key) : .set(key, Int.random(in: 0..<100, using: &random))
/// }
/// ```
///
/// Keep the values few (two or three keys, small numbers): operations that touch the same
/// state are the ones that race.
///
/// Thread safety: a plain value; `Sendable` when `Input` is.
public struct CheckOperations<Input> {
    /// The list to choose from; empty when the operations are generated.
    let choices: [Input]
    let generator: (@Sendable (inout SeededGenerator) -> Input)?

    /// Each operation of `inputs`, equally likely.
    ///
    /// An empty list is an error at the check's run
    /// (``LinearizabilityCheckError/noOperations``).
    public static func oneOf(_ inputs: [Input]) -> CheckOperations {
        CheckOperations(choices: inputs, generator: nil)
    }

    /// Operations made by `generate` from the round's seeded generator: the same seed draws the
    /// same operations.
    public static func generated(_ generate: @escaping @Sendable (inout SeededGenerator) -> Input) -> CheckOperations {
        CheckOperations(choices: [], generator: generate)
    }

    /// Whether there is nothing to draw.
    var isEmpty: Bool { choices.isEmpty && generator == nil }

    /// The next operation.
    func draw(using random: inout SeededGenerator) -> Input {
        if let generator { return generator(&random) }
        return choices[Int.random(in: 0..<choices.count, using: &random)]
    }
}

extension CheckOperations: ExpressibleByArrayLiteral {
    /// Each operation of the literal, equally likely: `[.increment, .read]`.
    public init(arrayLiteral elements: Input...) {
        self.init(choices: elements, generator: nil)
    }
}

extension CheckOperations: Sendable where Input: Sendable {}
