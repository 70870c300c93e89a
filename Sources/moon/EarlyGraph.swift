import Dispatch
import Foundation
import MoonProcess
import MoonRun

/// `moon run`'s graph file, read and checked while a helper thread opens the
/// state store and swift-argument-parser reads the command line (the main
/// thread takes the parsing over when the helper has not begun it by the
/// time the file is loaded: `SharedJob`). The parser takes ~1.2 ms at
/// every start (its reflection makes the Swift runtime scan thousands of
/// protocol conformances), loading 1000 nodes 2–10 ms; one after the other
/// they were most of the time before the first node started. The file loads
/// on the main thread, so the graph and the freed YAML tree stay in the
/// main thread's malloc arena (loaded on another thread, they cost the
/// 1000-node graphs ~0.6 MB of peak RSS).
///
/// The file is found from a quick reading of the arguments (`guess`). It is
/// only a guess: `RunCommand` compares it with what the parser found and
/// loads the file itself when they differ, so a wrong guess costs time, never
/// correctness. Nothing is printed here; diagnostics are printed by
/// `RunCommand`, as for a file it loaded itself.
final class EarlyGraph {
    /// Set by `parse(_:runParser:with:)` for `RunCommand`.
    nonisolated(unsafe) private static var current: EarlyGraph?

    struct Guess: Equatable {
        var path: String
        var overrides: [String: String]
        var dryRun = false
    }

    let guess: Guess
    /// The graph's state store, opened meanwhile by the helper thread (it
    /// took as long as the file; started after the parser, it was the wait).
    let store: EarlyStore
    /// The file, read and checked (diagnostics not printed yet).
    let result: Result<GraphFile.Parsed, Error>

    private init(_ guess: Guess, store: EarlyStore, result: Result<GraphFile.Parsed, Error>) {
        self.guess = guess
        self.store = store
        self.result = result
    }

    /// Runs `parser` (swift-argument-parser on moon's `arguments`, without
    /// the program name); when they are a `moon run` whose file can be told
    /// without it, on another thread while the file loads here. Then
    /// `runParser` (`run`'s own command, without the root's subcommand
    /// machinery: ~0.35 ms less) parses them, and `parser` only if it
    /// fails, so that errors read as they always do.
    static func parse<Command>(_ arguments: [String], runParser: @escaping () throws -> Command,
                               with parser: @escaping () throws -> Command) throws -> Command {
        guard let guess = guess(arguments) else { return try parser() }
        // The store, the parser and the run's `$MOON_OUTPUT` directory, on
        // one helper thread (see `SharedJob`); the main thread takes the
        // parser itself when the helper has not reached it by the time the
        // file is loaded.
        let store = EarlyStore(graphPath: guess.path, create: !guess.dryRun, startThread: false)
        let parsed = SharedJob { Result { try (try? runParser()) ?? parser() } }
        let outputs = guess.dryRun ? nil : OutputDirectory.prepare()
        BackgroundThread.run(name: "moon.early") {
            store.runIfFree()
            parsed.runIfFree()
            outputs?.runIfFree()
        }
        current = EarlyGraph(guess, store: store, result: GraphFile.parse(guess.path, overrides: guess.overrides))
        return try parsed.value.get()
    }

    /// The file loaded early when the parser found the same file, `--set`s
    /// and `--dry-run`; nil when the guess was wrong (or nothing was loaded).
    static func matching(_ guess: Guess) -> EarlyGraph? {
        guard let early = current else { return nil }
        current = nil
        let used = early.guess == guess
        if Terminal.variable("MOON_DEBUG_EARLY") == "1" {
            FileHandle.standardError.write(Data("moon: early load \(used ? "used" : "not used")\n".utf8))
        }
        return used ? early : nil
    }

    /// `moon run`'s options that take a value (`--name VALUE` or
    /// `--name=VALUE`); every other option is a flag. A test compares this
    /// with `moon run --help`.
    static let valueOptions: Set<String> = ["--jobs", "-j", "--output", "--color", "--timeout", "--grace", "--set",
                                            "--output-mode", "--stall-after"]
    /// `moon run`'s long flags. Any other option (`--help`, the parser's own
    /// `--generate-completion-script`, a typo) leaves the reading to the
    /// parser alone. A test compares these with `moon run --help` too.
    static let flags: Set<String> = ["--keep-going", "--dry-run", "--json", "--force", "--quiet", "--verbose"]
    /// The letters of `moon run`'s short flags (they may be combined: `-kq`).
    static let shortFlags: Set<Character> = ["k", "n", "B", "q", "v"]

    /// The graph file and `--set`s of a `moon run` command line; nil for any
    /// other command, for help, and for anything this reading is unsure of.
    static func guess(_ arguments: [String]) -> Guess? {
        guard arguments.first == "run" else { return nil }
        var positionals: [String] = []
        var overrides: [String: String] = [:]
        var dryRun = false
        var index = 1
        func set(_ assignment: String) -> Bool {
            guard let eq = assignment.firstIndex(of: "="), eq != assignment.startIndex else { return false }
            overrides[String(assignment[..<eq])] = String(assignment[assignment.index(after: eq)...])
            return true
        }
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            if argument == "--" {
                positionals += arguments[index...]
                break
            }
            if argument.hasPrefix("--") {
                let name = argument.split(separator: "=", maxSplits: 1).first.map(String.init) ?? argument
                if name == "--dry-run" { dryRun = true }
                guard valueOptions.contains(name) else {
                    if flags.contains(name) && name == argument { continue }
                    return nil
                }
                let value: String
                if name.count < argument.count {
                    value = String(argument.dropFirst(name.count + 1))
                } else {
                    guard index < arguments.count else { return nil }
                    value = arguments[index]
                    index += 1
                }
                if name == "--set" && !set(value) { return nil }
            } else if argument.hasPrefix("-") && argument.count > 1 {
                if argument == "-j" {
                    guard index < arguments.count else { return nil }
                    index += 1
                } else if !argument.dropFirst().allSatisfy(shortFlags.contains) {
                    return nil  // -h, or something this reading does not know
                } else if argument.contains("n") {
                    dryRun = true
                }
            } else {
                positionals.append(argument)
            }
        }
        guard let (path, _) = try? GraphFileLocator.split(positionals) else { return nil }
        return Guess(path: path, overrides: overrides, dryRun: dryRun)
    }
}
