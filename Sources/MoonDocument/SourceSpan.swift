/// A position in a source file. `line` and `column` are 1-based (libyaml's
/// 0-based marks are converted once, in the loader); `column` counts
/// characters (Unicode scalars), as editors do; `offset` is the 0-based byte offset.
public struct SourceLocation: Hashable, Sendable, Comparable, Codable {
    // Stored in 32 bits, since every YAML node and every `needs` entry has
    // a span of two locations (a graph file of 4 GiB is far beyond what moon
    // reads; larger values are clamped, never trapped on).
    private var storedLine: UInt32
    private var storedColumn: UInt32
    private var storedOffset: UInt32

    public var line: Int {
        get { Int(storedLine) }
        set { storedLine = UInt32(clamping: newValue) }
    }

    public var column: Int {
        get { Int(storedColumn) }
        set { storedColumn = UInt32(clamping: newValue) }
    }

    public var offset: Int {
        get { Int(storedOffset) }
        set { storedOffset = UInt32(clamping: newValue) }
    }

    public init(line: Int, column: Int, offset: Int) {
        storedLine = UInt32(clamping: line)
        storedColumn = UInt32(clamping: column)
        storedOffset = UInt32(clamping: offset)
    }

    public static func < (a: SourceLocation, b: SourceLocation) -> Bool {
        (a.line, a.column) < (b.line, b.column)
    }
}

/// The range of text a YAML node or a diagnostic refers to: `start` is
/// inclusive, `end` exclusive.
public struct SourceSpan: Hashable, Sendable, Codable {
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
