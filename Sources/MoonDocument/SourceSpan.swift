/// A position in a source file. `line` and `column` are 1-based (libyaml's
/// 0-based marks are converted once, in the loader); `column` counts
/// characters (Unicode scalars), as editors do; `offset` is the 0-based byte offset.
public struct SourceLocation: Hashable, Sendable, Comparable {
    public var line: Int
    public var column: Int
    public var offset: Int

    public init(line: Int, column: Int, offset: Int) {
        self.line = line
        self.column = column
        self.offset = offset
    }

    public static func < (a: SourceLocation, b: SourceLocation) -> Bool {
        (a.line, a.column) < (b.line, b.column)
    }
}

/// The range of text a YAML node or a diagnostic refers to: `start` is
/// inclusive, `end` exclusive.
public struct SourceSpan: Hashable, Sendable {
    public var file: String
    public var start: SourceLocation
    public var end: SourceLocation

    public init(file: String, start: SourceLocation, end: SourceLocation) {
        self.file = file
        self.start = start
        self.end = end
    }

    /// A span for a whole file when nothing more precise is known (line 1, column 1).
    public static func wholeFile(_ file: String) -> SourceSpan {
        let origin = SourceLocation(line: 1, column: 1, offset: 0)
        return SourceSpan(file: file, start: origin, end: origin)
    }
}
