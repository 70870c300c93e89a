import CYaml

/// Turns YAML text into one `YAMLNode` tree with 1-based spans, using
/// libyaml's event API.
///
/// The bytes are checked before libyaml sees them (NUL bytes, UTF-16,
/// invalid UTF-8), because libyaml's own messages for those name a byte
/// offset in a decoded buffer rather than a line and column. libyaml's
/// 0-based, character-counted marks are converted to `SourceLocation`s here
/// and nowhere else.
public enum YAMLLoader {
    /// Bounds that keep hostile input (alias bombs, deep nesting, huge
    /// files) a quick error.
    public struct Limits: Sendable {
        /// Maximum nesting depth of collections.
        public var maxDepth: Int = 256
        /// Maximum number of nodes written in the document (every scalar
        /// and collection once): with the graph file's size cap it bounds
        /// loading's memory. A 200,000-node graph of one-line built-ins
        /// has about 2,000,000.
        public var maxNodes: Int = 4_000_000
        /// Maximum number of nodes that aliases repeat (an alias counts the
        /// size of the node it names): what stops an alias bomb (a "billion
        /// laughs" file) before anything walks it. A file without aliases
        /// never reaches it.
        public var maxAliasNodes: Int = 4_000_000
        public init() {}

        /// Limits with the given bounds (for tests and tools that need other
        /// values); `maxAliasNodes` is `maxNodes` unless given.
        public init(maxDepth: Int, maxNodes: Int, maxAliasNodes: Int? = nil) {
            self.maxDepth = maxDepth
            self.maxNodes = maxNodes
            self.maxAliasNodes = maxAliasNodes ?? maxNodes
        }
    }

    /// Loads exactly one document. Throws every problem found as `Diagnostics`
    /// (syntax errors, duplicate keys, several documents, empty or non-UTF-8 input, limits).
    public static func load(_ source: SourceFile, limits: Limits = Limits()) throws(Diagnostics) -> YAMLNode {
        if let problem = encodingProblem(source) {
            throw Diagnostics([problem])
        }
        var builder = DocumentBuilder(path: source.path, limits: limits)
        builder.expect(bytes: source.bytes.count)
        var diagnostics: [Diagnostic] = []
        var documents = 0

        source.bytes.withUnsafeBufferPointer { buffer in
            guard let base = buffer.baseAddress, !buffer.isEmpty else { return }
            var parser = yaml_parser_t()
            guard yaml_parser_initialize(&parser) == 1 else {
                diagnostics.append(.error("could not start the YAML parser (out of memory)", at: nil))
                return
            }
            defer { yaml_parser_delete(&parser) }
            yaml_parser_set_input_string(&parser, base, buffer.count)

            var event = yaml_event_t()
            var cursor = SourceIndex.Cursor(source.index)
            reading: while true {
                guard yaml_parser_parse(&parser, &event) == 1 else {
                    diagnostics.append(syntaxError(parser, source))
                    break
                }
                defer { yaml_event_delete(&event) }
                let proceed = handle(event, builder: &builder, documents: &documents, diagnostics: &diagnostics,
                                     cursor: &cursor, path: source.path)
                if !proceed { break reading }
            }
        }

        diagnostics = builder.diagnostics + diagnostics
        if documents == 0 && diagnostics.isEmpty {
            diagnostics.append(.error("the file is empty; a graph file starts with `version: 1`",
                                      at: .wholeFile(source.path)))
        }
        guard diagnostics.isEmpty, let root = builder.document() else {
            if diagnostics.isEmpty {
                // Not expected: libyaml reported a document but no node.
                diagnostics.append(.error("the YAML document could not be read", at: .wholeFile(source.path)))
            }
            throw Diagnostics(diagnostics.sorted(by: Self.sourceOrder))
        }
        return root
    }

    /// Hands one libyaml event to the builder; false when reading stops.
    private static func handle(_ event: yaml_event_t, builder: inout DocumentBuilder, documents: inout Int,
                               diagnostics: inout [Diagnostic], cursor: inout SourceIndex.Cursor, path: String) -> Bool {
        // Converted only where used: a large file has hundreds of thousands of marks.
        func at(_ mark: yaml_mark_t) -> SourceLocation {
            cursor.location(ofCharacter: Int(truncatingIfNeeded: mark.index))
        }
        let proceed: Bool
        switch event.type {
        case YAML_STREAM_START_EVENT, YAML_DOCUMENT_END_EVENT:
            proceed = true
        case YAML_DOCUMENT_START_EVENT:
            documents += 1
            if documents > 1 {
                diagnostics.append(.error(
                    "a graph file holds one YAML document; found a second one here",
                    at: SourceSpan(file: path, start: at(event.start_mark), end: at(event.end_mark))))
                proceed = false
            } else {
                proceed = true
            }
        case YAML_STREAM_END_EVENT:
            proceed = false
        case YAML_ALIAS_EVENT:
            proceed = builder.alias(cString(event.data.alias.anchor) ?? "", start: at(event.start_mark), end: at(event.end_mark))
        case YAML_SCALAR_EVENT:
            let data = event.data.scalar
            let text = data.value.map {
                String(decoding: UnsafeBufferPointer(start: $0, count: Int(truncatingIfNeeded: data.length)), as: UTF8.self)
            } ?? ""
            proceed = builder.scalar(text, style: scalarStyle(data.style), tag: cString(data.tag),
                                     anchor: cString(data.anchor), start: at(event.start_mark), end: at(event.end_mark))
        case YAML_SEQUENCE_START_EVENT:
            proceed = builder.startCollection(mapping: false, anchor: cString(event.data.sequence_start.anchor),
                                              start: at(event.start_mark), end: at(event.end_mark))
        case YAML_MAPPING_START_EVENT:
            proceed = builder.startCollection(mapping: true, anchor: cString(event.data.mapping_start.anchor),
                                              start: at(event.start_mark), end: at(event.end_mark))
        case YAML_SEQUENCE_END_EVENT, YAML_MAPPING_END_EVENT:
            proceed = builder.endCollection(end: at(event.end_mark))
        default:
            proceed = false
        }
        return proceed
    }

    /// Problems with the bytes themselves, reported alone: once the text is
    /// not UTF-8, every later message would be noise.
    static func encodingProblem(_ source: SourceFile) -> Diagnostic? {
        let bytes = source.bytes
        let index = source.index
        func at(_ offset: Int) -> SourceSpan {
            let location = index.location(ofByte: offset)
            return SourceSpan(file: source.path, start: location, end: location)
        }
        if bytes.count >= 2, (bytes[0] == 0xFF && bytes[1] == 0xFE) || (bytes[0] == 0xFE && bytes[1] == 0xFF) {
            return .error("the file is UTF-16 text; moon reads graph files as UTF-8", at: at(0),
                          notes: ["help: convert it, e.g. `iconv -f UTF-16 -t UTF-8`"])
        }
        if let nul = index.firstNUL {
            return .error("the file is binary, not YAML text (it has a NUL byte here)", at: at(nul))
        }
        if let bad = index.firstInvalidUTF8 {
            let hex = String(bytes[bad], radix: 16, uppercase: true)
            return .error("the file is not valid UTF-8 (byte 0x\(hex.count < 2 ? "0" + hex : hex) here)", at: at(bad))
        }
        return nil
    }

    /// libyaml's error, located at its problem mark, with the context it was parsing.
    private static func syntaxError(_ parser: yaml_parser_t, _ source: SourceFile) -> Diagnostic {
        let problem = cString(parser.problem) ?? "invalid YAML"
        switch parser.error {
        case YAML_MEMORY_ERROR:
            return .error("the YAML parser ran out of memory", at: .wholeFile(source.path))
        case YAML_READER_ERROR:
            // Reader errors carry a byte offset into the input, not a mark.
            let location = source.index.location(ofByte: Int(truncatingIfNeeded: parser.problem_offset))
            var message = problem
            if parser.problem_value >= 0 {
                message += " (0x\(String(parser.problem_value, radix: 16, uppercase: true)))"
            }
            return .error(message, at: SourceSpan(file: source.path, start: location, end: location))
        default:
            let location = source.index.location(ofCharacter: Int(truncatingIfNeeded: parser.problem_mark.index))
            var message = problem
            if let context = cString(parser.context) {
                let contextLocation = source.index.location(ofCharacter: Int(truncatingIfNeeded: parser.context_mark.index))
                message += contextLocation == location
                    ? " (\(context))"
                    : " (\(context) at line \(contextLocation.line), column \(contextLocation.column))"
            }
            let byte = location.offset < source.bytes.count ? source.bytes[location.offset] : nil
            var lineStart = min(location.offset, source.bytes.count)
            while lineStart > 0, source.bytes[lineStart - 1] == UInt8(ascii: " ") { lineStart -= 1 }
            let atLineStart = lineStart == 0 || source.bytes[lineStart - 1] == UInt8(ascii: "\n") || source.bytes[lineStart - 1] == UInt8(ascii: "\r")
            var notes = SyntaxHint.help(problem: problem, context: cString(parser.context), byte: byte, atLineStart: atLineStart)
                .map { [$0] } ?? []
            if problem.hasPrefix("did not find expected key"), atLineStart, parser.context != nil,
               let above = indentationAbove(lineStart, source.bytes) {
                let context = source.index.location(ofCharacter: Int(truncatingIfNeeded: parser.context_mark.index))
                if let hint = SyntaxHint.misindented(column: location.column, mapping: (context.line, context.column), above: above) {
                    notes = [hint]
                }
            }
            return .error(message, at: SourceSpan(file: source.path, start: location, end: location), notes: notes)
        }
    }

    /// The line and column (1-based) of the first character of the nearest
    /// line above `lineStart` that holds more than spaces or a comment.
    private static func indentationAbove(_ lineStart: Int, _ bytes: [UInt8]) -> (line: Int, column: Int)? {
        let newline = UInt8(ascii: "\n")
        var end = lineStart - 1    // the newline ending the line above
        while end > 0 {
            var start = end
            while start > 0, bytes[start - 1] != newline { start -= 1 }
            var first = start
            while first < end, bytes[first] == UInt8(ascii: " ") { first += 1 }
            if first < end, bytes[first] != UInt8(ascii: "#"), bytes[first] != UInt8(ascii: "\r") {
                let line = 1 + bytes[..<start].lazy.filter { $0 == newline }.count
                return (line, first - start + 1)
            }
            end = start - 1
        }
        return nil
    }

    /// Diagnostics without a position first, then by line and column; stable otherwise.
    static func sourceOrder(_ a: Diagnostic, _ b: Diagnostic) -> Bool {
        switch (a.span, b.span) {
        case (nil, .some): return true
        case (.some(let x), .some(let y)): return x.start < y.start
        default: return false
        }
    }

    private static func scalarStyle(_ style: yaml_scalar_style_t) -> YAMLNode.ScalarStyle {
        switch style {
        case YAML_SINGLE_QUOTED_SCALAR_STYLE: return .singleQuoted
        case YAML_DOUBLE_QUOTED_SCALAR_STYLE: return .doubleQuoted
        case YAML_LITERAL_SCALAR_STYLE: return .literal
        case YAML_FOLDED_SCALAR_STYLE: return .folded
        default: return .plain
        }
    }

    private static func cString(_ pointer: UnsafePointer<CChar>?) -> String? {
        pointer.map { String(cString: $0) }
    }

    private static func cString(_ pointer: UnsafeMutablePointer<yaml_char_t>?) -> String? {
        pointer.map { String(cString: UnsafePointer($0)) }
    }
}
