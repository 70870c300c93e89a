/// The one gate every text `moon why` stores (in `.moon/` and in cache
/// entries) or prints passes through: a node's command text, a var's
/// value, an environment value. Secret masking (values a graph declares
/// secret) is wired here, in one place; until then `redact` returns its text.
public enum WhyRedaction {
    /// `text` as it may be stored or shown.
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
