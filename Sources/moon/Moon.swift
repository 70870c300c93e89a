import ArgumentParser

@main
struct Moon: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "moon",
        abstract: "Run task graphs described in YAML.",
        version: "0.1.0"
    )
}
