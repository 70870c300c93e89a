/// A `help:` line for libyaml's commonest syntax errors. libyaml says what
/// the parser expected (`did not find expected ',' or ']'`), not what the
/// writer of the file got wrong; these say how to fix it. Matched on the
/// problem and context texts (libyaml's wording is stable: these strings are in its
/// scanner and parser since 0.1) and the byte at the error.
enum SyntaxHint {
    /// `atLineStart`: the error is at the first character of its line
    /// that is not a space (where a key would begin).
    static func help(problem: String, context: String?, byte: UInt8?, atLineStart: Bool) -> String? {
        // A tab is the usual cause whatever libyaml says.
        if byte == UInt8(ascii: "\t") {
            return "help: YAML does not allow tabs for indentation; indent with spaces"
        }
        if problem.hasPrefix("did not find expected ',' or ']'") {
            return "help: a flow list `[a, b]` separates its items with ',' and ends with ']'"
        }
        if problem.hasPrefix("did not find expected ',' or '}'") {
            return "help: a flow mapping `{ key: value, ... }` separates its entries with ',' and ends with '}'; "
                + "quote a value that holds ': ' or ','"
        }
        if problem.hasPrefix("mapping values are not allowed in this context") {
            return "help: a plain value cannot hold ': ' — quote it (run: \"echo a: b\"), or check this line's indentation"
        }
        if problem.hasPrefix("found character that cannot start any token") {
            if let byte, byte == UInt8(ascii: "`") || byte == UInt8(ascii: "@") {
                return "help: '\(Character(Unicode.Scalar(byte)))' cannot start a plain value in YAML; quote the value"
            }
            return "help: quote the value"
        }
        if problem.hasPrefix("found unexpected end of stream"), context?.contains("quoted scalar") == true {
            return "help: a quoted value is not closed; add its closing quote"
        }
        if problem.hasPrefix("did not find expected key") {
            // At a line's start, a key out of line; in the middle, something
            // after a complete value (`[a, b]]`, `"x" y`, `'it's'`).
            return atLineStart
                ? "help: the keys of one mapping start in the same column: check this line's indentation"
                : "help: unexpected text after a value on this line: an extra ']' or '}', or text after a closing quote "
                    + "(quote the whole value; in single quotes, write ' as '')"
        }
        if problem.hasPrefix("did not find expected '-' indicator") {
            return "help: the items of a list each start with '- ' in the same column; a `key:` cannot follow them there"
        }
        return nil
    }

    /// A key at the start of a line that lines up with no mapping: it sits
    /// between the keys of the line above (deeper) and those of the
    /// mapping libyaml was reading. The line above is as likely the one out
    /// of place (a `description:` indented too far), so both are named.
    static func misindented(column: Int, mapping: (line: Int, column: Int), above: (line: Int, column: Int)) -> String? {
        guard above.column > column, column > mapping.column else { return nil }
        return "help: the keys of one mapping start in the same column: this key is at column \(column), line \(above.line) "
            + "above it at column \(above.column), and the mapping at line \(mapping.line) has its keys at column \(mapping.column); "
            + "move line \(above.line) to column \(column), or this line to column \(above.column)"
    }
}
