import MoonEvents
import MoonGraph

/// The values of the graph's `secrets:`, read once when a run starts (each
/// run of watch mode reads them again, so a rotated token is picked up),
/// and the mask made from them. Only runs read them: `moon run -n`,
/// `moon graph`, `status` and the compiled-graph cache see declarations.
/// A secret that cannot be given (missing and required, unreadable, too
/// short to mask) is an error of the node that reads it, raised when that
/// node is about to start: a run that does not use it does not need it.
public struct SecretValues: Sendable {
    /// What reading a `file:` secret found: its bytes, or nil when there is
    /// no such file; a refusal (a device, a FIFO, too large) throws.
    public typealias FileReader = (_ path: String) throws -> [UInt8]?

    /// The largest secret file moon reads.
    public static let fileLimit = 64 << 10

    private var values: [String: String] = [:]
    /// Why a secret cannot be given to a node, by name.
    private var problems: [String: String] = [:]
    /// Masks every value read, for everything the run writes (nil: nothing to mask).
    public let mask: SecretMask?

    /// No secrets: what a graph without `secrets:` runs with.
    public init() {
        mask = nil
    }

    /// Reads each of `graph.secrets`: `env:` from `environment` (moon's
    /// own; not the `dotenv:` files, whose values every node receives and
    /// the compiled graph stores); `file:` through `readFile`, relative to
    /// the graph file's directory. An empty value is a missing one.
    public init(graph: Graph, environment: [String: String], readFile: FileReader) {
        var values: [String: String] = [:]
        var problems: [String: String] = [:]
        for secret in graph.secrets {
            let found: String?
            switch secret.source {
            case .environment(let variable):
                // moon's own secret (the remote cache's token) is no node's.
                found = NodeEnvironment.withheld.contains(variable) ? nil : environment[variable]
            case .file(let path):
                let full = path.hasPrefix("/") || graph.directory == "." ? path : graph.directory + "/" + path
                let bytes: [UInt8]?
                do {
                    bytes = try readFile(full)
                } catch {
                    problems[secret.name] = "secret '\(secret.name)'\(Self.place(secret)) cannot be read: \(error)"
                    continue
                }
                if let bytes {
                    guard let text = Self.text(of: bytes) else {
                        problems[secret.name] = Self.invalidText(secret, path: full)
                        continue
                    }
                    found = text
                } else {
                    found = nil
                }
            }
            guard let value = found, !value.isEmpty else {
                if secret.required {
                    problems[secret.name] = "secret '\(secret.name)'\(Self.place(secret)) is not set; \(secret.howToProvide), or declare it with 'required: false'"
                } else {
                    values[secret.name] = ""
                }
                continue
            }
            if value.utf8.count < SecretMask.minimumLength {
                problems[secret.name] = "secret '\(secret.name)'\(Self.place(secret)) is \(value.utf8.count) bytes long; moon masks secrets as *** in what it writes, and needs at least \(SecretMask.minimumLength) bytes to do so without hiding ordinary text"
                continue
            }
            values[secret.name] = value
        }
        self.values = values
        self.problems = problems
        mask = SecretMask(secrets: values.values)
    }

    /// Reads them with moon's own environment.
    public init(graph: Graph, readFile: FileReader) {
        self.init(graph: graph, environment: NodeEnvironment.processEnvironment(), readFile: readFile)
    }

    /// The value of secret `name`, or why the node reading it cannot start.
    func value(_ name: String) throws -> String {
        if let value = values[name] { return value }
        throw Interpolator.Failure(message: problems[name] ?? "no secret '\(name)' is declared under 'secrets:'")
    }

    /// A file's text: its trailing line breaks dropped, as `$(cat FILE)`
    /// drops them; nil when it is not UTF-8 or holds a NUL byte.
    private static func text(of bytes: [UInt8]) -> String? {
        var end = bytes.count
        while end > 0, bytes[end - 1] == UInt8(ascii: "\n") || bytes[end - 1] == UInt8(ascii: "\r") { end -= 1 }
        let content = bytes[..<end]
        guard !content.contains(0), let text = String(validating: content, as: UTF8.self) else { return nil }
        return text
    }

    private static func invalidText(_ secret: SecretDeclaration, path: String) -> String {
        "secret '\(secret.name)'\(place(secret)): \(path) is not UTF-8 text (or holds a NUL byte); a secret is passed as text, in an environment variable or an argument"
    }

    /// ` (graph.yaml:4:3)`: where the secret is declared.
    static func place(_ secret: SecretDeclaration) -> String {
        guard let span = secret.span else { return "" }
        return " (\(span.file):\(span.start.line):\(span.start.column))"
    }
}
