import MoonSystem

/// A Makefile-style dependency file, as compilers write them (`gcc -MD -MF
/// x.d`, clang, `swiftc -emit-dependencies`): rules of `targets: files`,
/// whose files are what the target was built from. moon keeps the files
/// (of every rule, in order, once each) and ignores the targets.
///
/// The syntax follows what GCC and Clang write, as ninja reads it: a
/// backslash before a newline continues the line (CRLF too); `\ ` is a
/// space in a name (2N+1 backslashes and a space are N backslashes and a
/// space; 2N backslashes before a space stay and end the name); `\#` is
/// `#`; `$$` is `$`; other backslashes stay as they are. An unescaped `#`
/// starts a comment. A rule ends at a newline; a rule with no files (`-MP`'s
/// `header.h:`) adds nothing.
public enum Depfile {
    public struct Malformed: Error, Equatable, CustomStringConvertible {
        public var line: Int
        public var message: String
        public var description: String { "line \(line): \(message)" }
    }

    /// The files of every rule in `text`. Throws `Malformed` for text that
    /// is not a dependency file (names with no rule, a NUL byte). One pass
    /// over the bytes with one switch, as ninja's depfile lexer: its cases
    /// share the word and rule state, so it stays one function.
    public static func parse(_ text: [UInt8]) throws -> [String] {
        var files: [String] = []
        var seen = Set<String>()
        var word: [UInt8] = []
        var inFiles = false   // after the rule's ':'
        var pendingTargets = false  // names seen on this rule before its ':'
        var line = 1
        var i = 0
        let n = text.count

        func endWord() throws {
            guard !word.isEmpty else { return }
            defer { word.removeAll(keepingCapacity: true) }
            if !inFiles {
                if word.last == UInt8(ascii: ":") {
                    word.removeLast()
                    inFiles = true
                    pendingTargets = false
                } else {
                    pendingTargets = true
                }
                return
            }
            // A name that is not UTF-8 would name another (missing) file: refused, never dropped.
            guard let name = FileName.decode(word) else {
                throw Malformed(line: line, message: "the name '\(FileName.shown(word))' is not UTF-8")
            }
            if seen.insert(name).inserted { files.append(name) }
        }
        func endRule() throws {
            try endWord()
            if pendingTargets { throw Malformed(line: line, message: "expected ':' after the target names") }
            inFiles = false
        }

        while i < n {
            let c = text[i]
            switch c {
            case UInt8(ascii: "\\"):
                var j = i
                while j < n, text[j] == UInt8(ascii: "\\") { j += 1 }
                let count = j - i
                let next: UInt8? = j < n ? text[j] : nil
                if count == 1, next == UInt8(ascii: "\n") {
                    try endWord()
                    line += 1
                    i = j + 1
                } else if count == 1, next == UInt8(ascii: "\r"), j + 1 < n, text[j + 1] == UInt8(ascii: "\n") {
                    try endWord()
                    line += 1
                    i = j + 2
                } else if next == UInt8(ascii: " ") {
                    if count % 2 == 1 {
                        word.append(contentsOf: repeatElement(UInt8(ascii: "\\"), count: count / 2))
                        word.append(UInt8(ascii: " "))
                    } else {
                        word.append(contentsOf: repeatElement(UInt8(ascii: "\\"), count: count))
                        try endWord()
                    }
                    i = j + 1
                } else if next == UInt8(ascii: "#") {
                    word.append(contentsOf: repeatElement(UInt8(ascii: "\\"), count: count - 1))
                    word.append(UInt8(ascii: "#"))
                    i = j + 1
                } else {
                    // Backslashes before anything else (a Windows path, a trailing one) stay.
                    word.append(contentsOf: repeatElement(UInt8(ascii: "\\"), count: count))
                    i = j
                }
            case UInt8(ascii: "$"):
                word.append(UInt8(ascii: "$"))
                i += (i + 1 < n && text[i + 1] == UInt8(ascii: "$")) ? 2 : 1
            case UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "\r"):
                if c == UInt8(ascii: "\r"), i + 1 < n, text[i + 1] == UInt8(ascii: "\n") {
                    i += 1
                    continue
                }
                try endWord()
                i += 1
            case UInt8(ascii: "\n"):
                try endRule()
                line += 1
                i += 1
            case UInt8(ascii: "#") where word.isEmpty:
                while i < n, text[i] != UInt8(ascii: "\n") { i += 1 }
            case 0:
                throw Malformed(line: line, message: "a NUL byte; this is not a dependency file")
            default:
                word.append(c)
                i += 1
            }
        }
        try endRule()
        return files
    }
}
