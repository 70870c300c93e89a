/// What `moon why` may store (in `.moon/` and in cache entries) or print of
/// a value: a node's command text and `env:` values are the graph file's
/// own text, expressions unresolved, so a `secrets:` value (read only by a
/// run, docs/secrets.md) never reaches them; a value whose name looks
/// secret (`looksSecret`) is never stored or shown, only that it changed.
public enum WhyRedaction {
    /// `text` as it may be stored or shown: the text as written.
    public static func redact(_ text: String) -> String {
        text
    }

    /// Words that make a variable's name look like it holds a secret: its
    /// value is never stored, and never printed (only that it changed).
    static let secretWords = ["TOKEN", "SECRET", "PASSWORD", "PASSWD", "PASSPHRASE", "KEY", "CREDENTIAL", "AUTH", "PRIVATE",
                              "COOKIE", "SESSION", "SIGNATURE", "CERT"]

    /// Whether `name` looks like a secret's (case-insensitive, anywhere in the name).
    public static func looksSecret(_ name: String) -> Bool {
        let upper = name.uppercased()
        return secretWords.contains { upper.contains($0) }
    }
}
