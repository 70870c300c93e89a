/// The text of one graph file, kept so diagnostics can quote its lines.
public struct SourceFile: Sendable {
    /// The path as the user gave it; diagnostics print it unchanged.
    public let path: String
    /// The raw bytes of the file (not yet checked for UTF-8).
    public let bytes: [UInt8]

    public init(path: String, bytes: [UInt8]) {
        self.path = path
        self.bytes = bytes
    }

    public init(path: String, text: String) {
        self.init(path: path, bytes: Array(text.utf8))
    }

    /// The 1-based line `number` without its line break, or nil past the end.
    /// Invalid UTF-8 is shown with replacement characters.
    public func line(_ number: Int) -> String? {
        guard number >= 1 else { return nil }
        var current = 1
        var start = 0
        var i = 0
        while i < bytes.count, current < number {
            if bytes[i] == UInt8(ascii: "\n") { current += 1; start = i + 1 }
            i += 1
        }
        guard current == number, start <= bytes.count else { return nil }
        var end = start
        while end < bytes.count, bytes[end] != UInt8(ascii: "\n") { end += 1 }
        var slice = bytes[start..<end]
        if slice.last == UInt8(ascii: "\r") { slice = slice.dropLast() }
        return String(decoding: slice, as: UTF8.self)
    }
}
