import MoonDocument

/// `interactive:` and `confirm:`, the two node keys about the person at the
/// terminal (docs/terminal.md): decoded apart from the node's other
/// settings, since few nodes have them.
enum NodeInteraction {
    /// The longest `confirm:` question: one line a person reads, not a document.
    static let maxQuestionLength = 500

    static func decode(_ node: inout Node, keys: ValueDecoding.CheckedKeys, _ values: inout ValueDecoding) {
        let name = node.name
        if let i = keys["interactive"], let b = values.bool(i.value, key: "interactive"), b {
            if case .group = node.action {
                values.error("node '\(name)' is a group (it has no 'run' or 'uses'), so it has nothing to be interactive; give it a command, or remove 'interactive'",
                             at: i.key.span)
            } else if node.isService {
                values.error("node '\(name)' cannot be both a service and interactive: an interactive node holds the terminal until it ends; remove one of them",
                             at: i.key.span)
            } else {
                node.isInteractive = true
            }
        }
        guard let c = keys["confirm"], !c.value.isNull else { return }
        // `confirm: true` (go-task's `prompt` is text too): the question is missing, not "true".
        if case .scalar(let text, let style, let tag) = c.value.kind, ValueDecoding.isResolvable(style, tag, "bool"),
           ["true", "false", "True", "False", "TRUE", "FALSE"].contains(text) {
            values.error("'confirm' is the question to ask, not \(text); write confirm: \"Deploy to production?\"", at: c.value.span)
            return
        }
        guard let question = values.string(c.value, expecting: "a question (a string), such as \"Deploy to production?\"", allowNull: false)
        else { return }
        let trimmed = String(question.drop(while: \.isWhitespace).reversed().drop(while: \.isWhitespace).reversed())
        if trimmed.isEmpty {
            values.error("'confirm' is empty; write the question to ask, such as \"Deploy to production?\"", at: c.value.span)
        } else if Template.containsExpression(trimmed) {
            // Shown as written, it would ask about "${{ vars.env }}"; filled in, a secret could reach the terminal.
            values.error("'confirm' is asked as written: it cannot hold ${{ }}; write the question in words, such as \"Deploy to production?\"",
                         at: c.value.span)
        } else if trimmed.count > maxQuestionLength {
            values.error("'confirm' is \(trimmed.count) characters long; write a question of at most \(maxQuestionLength) (the node's description can say more)",
                         at: c.value.span)
        } else {
            node.confirm = trimmed
        }
    }
}
