/// One line (or one part of a very long line) written by a child.
///
/// `bytes` are exactly what the child wrote, without the terminating `\n`
/// (a `\r` before it is kept). A line longer than `OutputLine.maxLength`
/// arrives in parts of at most that many bytes; every part but the last has
/// `continued == true`. A last line without a newline is delivered at EOF.
/// Bytes are raw: repairing invalid UTF-8 is the caller's choice, see `text`.
public struct OutputLine: Sendable, Hashable {
    public enum Stream: String, Sendable, Hashable {
        case stdout
        case stderr
    }

    /// The longest part delivered at once: 1 MiB.
    public static let maxLength = 1 << 20

    public var stream: Stream
    public var bytes: [UInt8]
    /// `true` when this part is not the end of its line.
    public var continued: Bool
    /// `true` for a line still being written (no newline yet): the last
    /// bytes of what came so far (`partialLimit` at most), for a live view.
    /// These bytes come again, in the line or part that ends them.
    public var partial = false

    /// The most bytes of a line still being written that `partial` lines carry.
    public static let partialLimit = 512

    public init(stream: Stream, bytes: [UInt8], continued: Bool = false, partial: Bool = false) {
        self.stream = stream
        self.bytes = bytes
        self.continued = continued
        self.partial = partial
    }

    /// The bytes as UTF-8, each invalid sequence replaced by U+FFFD.
    /// A multi-byte character split across `continued` parts decodes as
    /// replacement characters; join the parts' bytes first to avoid that.
    public var text: String { OutputLine.decode(bytes) }

    /// Decodes UTF-8, replacing each invalid sequence with U+FFFD; never fails.
    public static func decode<Bytes: Collection>(_ bytes: Bytes) -> String where Bytes.Element == UInt8 {
        String(decoding: bytes, as: UTF8.self)
    }
}
