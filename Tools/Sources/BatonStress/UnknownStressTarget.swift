/// A name that is not one of ``StressTarget/all``; its description lists the valid names.
///
/// Thread safety: a plain value; `Sendable`.
public struct UnknownStressTarget: Error, Sendable, Hashable, CustomStringConvertible {
    /// The name asked for.
    public let name: String

    /// Creates the error for `name`.
    public init(name: String) {
        self.name = name
    }

    public var description: String {
        "unknown structure '\(name)'; pass one of: \(StressTarget.all.map(\.name).joined(separator: ", "))"
    }
}
