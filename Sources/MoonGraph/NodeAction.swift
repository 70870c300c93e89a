import Foundation

/// What a node does: `run` (shell or exec form), `uses`, or nothing (a group).
public enum NodeAction: Sendable, Hashable, Codable {
    /// `run: SCRIPT` — run by the node's `shell` (`sh -e -c SCRIPT`).
    case shell(String)
    /// `run: [PROGRAM, ARG...]` — spawned directly, no shell (never empty).
    case exec([String])
    /// `uses: NAME` with its validated `with:` arguments.
    case builtin(String, with: [String: BuiltinArgument])
    /// A node with neither `run` nor `uses` (only `needs`): a group, which
    /// succeeds as soon as its needs allow it to start.
    case group

    /// `shell`, `exec` or `builtin`, as listings and JSON call it.
    public var kind: String {
        switch self {
        case .shell: return "shell"
        case .exec: return "exec"
        case .builtin: return "builtin"
        case .group: return "group"
        }
    }

    /// One line a person can read: the script (first line, `…` if more),
    /// the argv quoted as a shell would need, or `uses NAME (k: v, …)`.
    public var summary: String {
        switch self {
        case .shell(let script):
            // A one-line script is its own summary, without splitting it
            // into lines: every node of a plan is summarised before the first starts.
            var bytes = script
            let multiline = bytes.withUTF8 { utf8 in
                utf8.baseAddress.map { memchr($0, Int32(UInt8(ascii: "\n")), utf8.count) != nil } ?? false
            }
            guard multiline else { return script }
            let lines = script.split(separator: "\n", omittingEmptySubsequences: true)
            guard let first = lines.first else { return "" }
            return lines.count > 1 ? "\(first) …" : String(first)
        case .exec(let argv):
            // A loop, not `joined`: its first use costs a start more than every summary.
            var line = ""
            for (i, word) in argv.enumerated() {
                if i > 0 { line += " " }
                line += ShellQuoting.quote(word)
            }
            return line
        case .builtin(let name, let with):
            guard !with.isEmpty else { return "uses \(name)" }
            var line = "uses " + name + " ("
            for (i, key) in with.keys.sorted().enumerated() {
                if i > 0 { line += ", " }
                line += key + ": " + with[key]!.text
            }
            return line + ")"
        case .group:
            return "(group)"
        }
    }
}

/// Quoting for display only (never for execution: exec-form argv is passed as is).
enum ShellQuoting {
    static func quote(_ word: String) -> String {
        if !word.isEmpty, word.utf8.allSatisfy(isSafe) { return word }
        guard isPrintable(word) else { return ansiC(word) }
        return "'" + word.replacing("'", with: "'\\''") + "'"
    }

    /// Whether `text` has no control character (a listing shows it on one line as it is).
    static func isPrintable(_ text: String) -> Bool {
        !text.unicodeScalars.contains(where: isControl)
    }

    /// C0, DEL and C1: what a terminal may act on.
    private static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value)
    }

    /// bash's `$'…'`, for a value with control characters: one line, every byte visible.
    private static func ansiC(_ word: String) -> String {
        var out = "$'"
        for scalar in word.unicodeScalars {
            switch scalar {
            case "\n": out += "\\n"
            case "\t": out += "\\t"
            case "\r": out += "\\r"
            case "'": out += "\\'"
            case "\\": out += "\\\\"
            default:
                if isControl(scalar) {
                    let hex = String(scalar.value, radix: 16)
                    out += scalar.value < 0x80 ? "\\x" + (hex.count == 1 ? "0" + hex : hex) : "\\u00" + hex
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        return out + "'"
    }

    /// Letters, digits and `_-.,/:=+@%`: bytes a shell reads as themselves.
    private static func isSafe(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            return true
        case UInt8(ascii: "_"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: ","), UInt8(ascii: "/"), UInt8(ascii: ":"),
             UInt8(ascii: "="), UInt8(ascii: "+"), UInt8(ascii: "@"), UInt8(ascii: "%"):
            return true
        default:
            return false
        }
    }
}
