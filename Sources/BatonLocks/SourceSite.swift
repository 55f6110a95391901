/// A place in the source code: the file (as `#fileID` names it) and the line.
///
/// Lock diagnostics use it to say where a lock was created and where it was taken.
public struct SourceSite: Sendable, Hashable, CustomStringConvertible {
    /// The file, as `#fileID` spells it: `Module/File.swift`.
    public let fileID: String
    /// The line in that file.
    public let line: Int

    /// Creates a site from a file ID and a line.
    public init(fileID: String, line: Int) {
        self.fileID = fileID
        self.line = line
    }

    init(_ file: StaticString, _ line: UInt) {
        self.init(fileID: "\(file)", line: Int(line))
    }

    /// `Module/File.swift:42`.
    public var description: String { "\(fileID):\(line)" }
}
