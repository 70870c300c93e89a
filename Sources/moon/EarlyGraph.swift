import ArgumentParser
import Dispatch
import Foundation
import MoonProcess
import MoonReport
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

    /// The guess, and the whole command line as plain values when the quick
    /// reading understood all of it (else nil: the parser reads it).
    struct Reading {
        var guess: Guess
        var quick: RunInvocation?
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

    /// Reads moon's `arguments` (without the program name) and returns
    /// what runs the command. A usual `moon run` command line is read here
    /// (`reading`) and its file loaded at once, while a helper thread opens
    /// the state store. Otherwise `runParser` (`run`'s own command, without
    /// the root's subcommand machinery: ~0.35 ms less) parses them, on the
    /// helper thread while the file loads, when the file can be told without
    /// it; and `parser` (the root command) only if that fails, so that
    /// errors read as they always do.
    static func parse(_ arguments: [String], runParser: @escaping () throws -> ParsableCommand,
                      with parser: @escaping () throws -> ParsableCommand) throws -> () throws -> Void {
        guard let reading = reading(arguments) else { return command(try parser()) }
        let guess = reading.guess
        // The quick reading stands only for a command line the parser would
        // accept: one that fails `validate` is the parser's to report.
        let quick = reading.quick.flatMap { (try? $0.validate()) == nil ? nil : $0 }
        // The store, the parser and the run's `$MOON_OUTPUT` directory, on
        // one helper thread (see `SharedJob`); the main thread takes over
        // what the helper has not begun when it needs it.
        let store = EarlyStore(graphPath: guess.path, create: !guess.dryRun, startThread: false)
        let parsed = quick == nil ? SharedJob { Result { try (try? runParser()) ?? parser() } } : nil
        BackgroundThread.run(name: "moon.early") {
            store.runIfFree()
            parsed?.runIfFree()
        }
        current = EarlyGraph(guess, store: store, result: GraphFile.parse(guess.path, overrides: guess.overrides))
        guard let quick else { return command(try parsed!.value.get()) }
        if Terminal.variable("MOON_DEBUG_EARLY") == "1" { compare(quick, with: runParser) }
        return { try quick.run() }
    }

    private static func command(_ parsed: ParsableCommand) -> () throws -> Void {
        { var command = parsed; try command.run() }
    }

    /// For the tests: whether the parser reads the command line as the
    /// quick reading did.
    private static func compare(_ quick: RunInvocation, with runParser: () throws -> ParsableCommand) {
        let parsed = (try? runParser()) as? RunCommand
        let verdict = parsed?.invocation == quick ? "matches the parser" : "differs from the parser: \(String(describing: parsed?.invocation)) vs \(quick)"
        Console.errorLine("moon: quick reading \(verdict)")
    }

    /// The file loaded early when the parser found the same file, `--set`s
    /// and `--dry-run`; nil when the guess was wrong (or nothing was loaded).
    static func matching(_ guess: Guess) -> EarlyGraph? {
        guard let early = current else { return nil }
        current = nil
        let used = early.guess == guess
        if Terminal.variable("MOON_DEBUG_EARLY") == "1" {
            Console.errorLine("moon: early load \(used ? "used" : "not used")")
        }
        return used ? early : nil
    }

    // Plain arrays and switches, not sets: each new generic type (a
    // `Set<Character>`, a `[Character: String]`) cost the runtime look-ups
    // of its conformances at every start.

    /// `moon run`'s options that take a value (`--name VALUE` or
    /// `--name=VALUE`); every other option is a flag. A test compares this
    /// with `moon run --help`.
    static let valueOptions = ["--jobs", "-j", "--output", "--color", "--timeout", "--grace", "--set", "--output-mode",
                               "--stall-after"]
    /// `moon run`'s long flags. Any other option (`--help`, the parser's own
    /// `--generate-completion-script`, a typo) leaves the reading to the
    /// parser alone. A test compares these with `moon run --help` too.
    static let flags = ["--keep-going", "--dry-run", "--json", "--force", "--quiet", "--verbose"]

    /// The long flag of a short one (they may be combined: `-kq`).
    static func longFlag(_ letter: Character) -> String? {
        switch letter {
        case "k": "--keep-going"
        case "n": "--dry-run"
        case "B": "--force"
        case "q": "--quiet"
        case "v": "--verbose"
        default: nil
        }
    }

    /// The graph file and `--set`s of a `moon run` command line, and all
    /// of it when every argument is understood; nil for any other command,
    /// for help, and for anything this reading is unsure of.
    static func reading(_ arguments: [String]) -> Reading? {
        guard arguments.first == "run" else { return nil }
        var positionals: [String] = []
        var overrides: [String: String] = [:]
        var dryRun = false
        // Set to nil by anything the parser might read otherwise: a value
        // it does not take, a value that looks like an option, a repeat.
        var quick: RunInvocation? = RunInvocation()
        var given: [String] = []
        var index = 1
        func set(_ assignment: String) -> Bool {
            guard let eq = assignment.firstIndex(of: "="), eq != assignment.startIndex else { return false }
            overrides[String(assignment[..<eq])] = String(assignment[assignment.index(after: eq)...])
            return true
        }
        func flag(_ name: String) {
            if given.contains(name) { quick = nil }
            given.append(name)
            switch name {
            case "--keep-going": quick?.keepGoing = true
            case "--dry-run":
                dryRun = true
                quick?.dryRun = true
            case "--json": quick?.json = true
            case "--force": quick?.force = true
            case "--quiet": quick?.quiet = true
            case "--verbose": quick?.verbose = true
            default: quick = nil
            }
        }
        func option(_ name: String, _ value: String) {
            if value.hasPrefix("-") { quick = nil }
            if name != "--set" && given.contains(name) { quick = nil }
            given.append(name)
            guard var read = quick else { return }
            // A value the parser would not take is the parser's to report.
            var understood = true
            switch name {
            case "--jobs":
                read.jobs = Int(value)
                understood = read.jobs != nil
            case "--output":
                if let mode = RunCommand.OutputMode(rawValue: value) { read.output = mode } else { understood = false }
            case "--color":
                if let mode = RunCommand.ColorMode(rawValue: value) { read.color = mode } else { understood = false }
            case "--timeout": read.timeout = value
            case "--grace": read.grace = value
            case "--set": read.assignments.append(value)
            case "--output-mode":
                if let mode = NodeOutputMode(rawValue: value) { read.outputMode = mode } else { understood = false }
            case "--stall-after": read.stallAfter = value
            default: understood = false
            }
            quick = understood ? read : nil
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
                guard valueOptions.contains(name) else {
                    if flags.contains(name) && name == argument {
                        flag(name)
                        continue
                    }
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
                option(name, value)
            } else if argument.hasPrefix("-") && argument.count > 1 {
                if argument == "-j" {
                    guard index < arguments.count else { return nil }
                    option("--jobs", arguments[index])
                    index += 1
                } else if !argument.dropFirst().allSatisfy({ longFlag($0) != nil }) {
                    return nil  // -h, or something this reading does not know
                } else {
                    for letter in argument.dropFirst() { flag(longFlag(letter) ?? "") }
                }
            } else {
                if argument == "-" { quick = nil }
                positionals.append(argument)
            }
        }
        guard let (path, _) = try? GraphFileLocator.split(positionals) else { return nil }
        quick?.arguments = positionals
        return Reading(guess: Guess(path: path, overrides: overrides, dryRun: dryRun), quick: quick)
    }
}
