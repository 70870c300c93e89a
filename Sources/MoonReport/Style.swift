/// A text attribute as an SGR parameter list (`1;31`); empty means none.
/// Reporters compose lines from styled spans, measure and cut them as plain
/// text, and only add escape sequences when colour is on.
public struct Style: Sendable, Equatable {
    public var sgr: String

    public init(_ sgr: String) {
        self.sgr = sgr
    }

    public static let none = Style("")
    public static let bold = Style("1")
    public static let dim = Style("2")
    public static let red = Style("31")
    public static let green = Style("32")
    public static let yellow = Style("33")
    public static let cyan = Style("36")
    public static let boldRed = Style("1;31")
    public static let boldGreen = Style("1;32")
    public static let boldYellow = Style("1;33")

    /// Node colours: distinguishable on dark and light backgrounds; red is
    /// kept for failures.
    static let palette: [Style] = ["36", "35", "34", "33", "32", "96", "95", "94", "93", "92"].map(Style.init)

    /// A node's colour: a hash of its name into the palette, so a node keeps
    /// its colour from run to run (Swift's `Hasher` is seeded per process,
    /// hence FNV-1a).
    public static func node(_ name: String) -> Style {
        var hash: UInt32 = 2_166_136_261
        for byte in name.utf8 {
            hash ^= UInt32(byte)
            hash = hash &* 16_777_619
        }
        return palette[Int(hash % UInt32(palette.count))]
    }
}

/// One line of output made of styled spans. Every span's text is
/// sanitized as it is added (`TextWidth.sanitize`, colour off): whatever a
/// reporter puts in a line — a node's name, a graph's name, a command, an
/// error message from a built-in or a recording — reaches the terminal with
/// no escape sequence or control character but moon's own styling. Only
/// `append(sanitized:)` takes text that went through the sanitizer already
/// (node output, which may keep its colours).
public struct StyledLine: Sendable, Equatable {
    public var spans: [(text: String, style: Style)]

    public init(_ spans: [(text: String, style: Style)] = []) {
        self.spans = spans.map { (TextWidth.sanitize($0.text, keepColor: false), $0.style) }
    }

    public init(_ text: String, _ style: Style = .none) {
        // Room for the spans of a line (a mark, a name, the rest): appended
        // without growing, as a run writes one such line per node.
        var spans: [(text: String, style: Style)] = []
        spans.reserveCapacity(4)
        spans.append((TextWidth.sanitize(text, keepColor: false), style))
        self.spans = spans
    }

    public static func == (a: StyledLine, b: StyledLine) -> Bool {
        a.spans.count == b.spans.count && zip(a.spans, b.spans).allSatisfy { $0.text == $1.text && $0.style == $1.style }
    }

    public mutating func append(_ text: String, _ style: Style = .none) {
        guard !text.isEmpty else { return }
        spans.append((TextWidth.sanitize(text, keepColor: false), style))
    }

    /// Appends text that `TextWidth.sanitize` returned (node output, with
    /// the colours it may keep).
    public mutating func append(sanitized text: String, _ style: Style = .none) {
        guard !text.isEmpty else { return }
        spans.append((text, style))
    }

    /// The text without any styling.
    public var plain: String {
        // Appended in place (with room for the line's end): every skip and
        // success line of a run is made here.
        if spans.count == 1 { return spans[0].text }
        var out = ""
        out.reserveCapacity(spans.reduce(1) { $0 + $1.text.utf8.count })
        for span in spans { out += span.text }
        return out
    }

    /// Columns the line takes on a terminal.
    public var columns: Int { spans.reduce(0) { $0 + TextWidth.columns($1.text) } }

    /// The line with escape sequences when `color` is on, none at all otherwise.
    public func rendered(color: Bool) -> String {
        guard color else { return plain }
        var out = ""
        for span in spans {
            if span.style.sgr.isEmpty || span.text.isEmpty {
                out += span.text
            } else {
                out += "\u{1B}[\(span.style.sgr)m\(span.text)\u{1B}[0m"
            }
        }
        return out
    }

    /// The line cut to at most `width` columns, ending in `…` when cut.
    public func fitted(to width: Int) -> StyledLine {
        guard columns > width else { return self }
        guard width > 0 else { return StyledLine() }
        var out = StyledLine()
        var left = width - 1
        for span in spans {
            let w = TextWidth.columns(span.text)
            if w <= left {
                out.append(sanitized: span.text, span.style)
                left -= w
            } else {
                out.append(sanitized: TextWidth.prefix(span.text, columns: left), span.style)
                left = 0
                break
            }
        }
        out.append("…", spans.last?.style ?? .none)
        return out
    }
}
