/// The text of one graph file, kept so diagnostics can quote its lines.
public struct SourceFile: Sendable {
    /// The path as the user gave it; diagnostics print it unchanged.
    public let path: String
    /// The raw bytes of the file (not yet checked for UTF-8).
    public let bytes: [UInt8]
    /// Built once here so that every position lookup and every quoted line is
    /// a binary search, not a walk from the start of the file.
    let index: SourceIndex

    public init(path: String, bytes: [UInt8]) {
        self.path = path
        self.bytes = bytes
        self.index = SourceIndex(bytes)
    }

    public init(path: String, text: String) {
        self.init(path: path, bytes: Array(text.utf8))
    }

    /// The 1-based line `number` without its line break, or nil past the end.
    /// Lines end at `\n`, `\r\n` or a lone `\r`. Invalid UTF-8 is shown with
    /// replacement characters.
    public func line(_ number: Int) -> String? {
        guard let range = index.lineRange(number) else { return nil }
        var slice = bytes[range]
        if slice.last == UInt8(ascii: "\r") { slice = slice.dropLast() }
        return String(decoding: slice, as: UTF8.self)
    }

    /// The number of lines (a file without a final line break still has its last line).
    public var lineCount: Int { index.lineStarts.count }

    /// The 1-based line and character column of a 0-based byte offset
    /// (clamped to the file), for stages that know only offsets.
    public func location(ofByte offset: Int) -> SourceLocation {
        index.location(ofByte: offset)
    }
}
