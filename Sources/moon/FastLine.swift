import ArgumentParser
import MoonReport

/// The command lines of the edit loop, `moon run …`, `moon NODE…` and plain
/// `moon`, read without swift-argument-parser: its parse finds `run`'s
/// options by reflection, tens of millions of instructions of runtime type
/// lookups, more than the rest of a one-node run. `RunCommand` stays the
/// one definition of the command line; this reads the same `RunRequest`
/// from the lines it is sure of and gives up (nil) on anything else: help,
/// `--version`, completion, another subcommand, an unknown option, a value
/// that is missing, empty or starts with `-`, an option given twice (but
/// `--set` and `--exclude`), a group of short options other than flags, a
/// value the option's type refuses or a rule the options break. Then
/// argument-parser reads the line, with its own messages and help.
/// `FastLineTests` hold the two to each other, spelling by spelling.
enum FastLine: Equatable {
    /// `moon [run] …`.
    case run(RunRequest)
    /// Plain `moon`: the graph's `default:` nodes, else the list (`Moon.run`).
    case defaultNodes

    static func read(_ arguments: [String]) -> FastLine? {
        guard let first = arguments.first else { return .defaultNodes }
        var words = arguments[...]
        if first == "run" {
            words = words.dropFirst()
        } else if first == "help" || Moon.commandNames.contains(first) {
            return nil
        }
        var request = RunRequest()
        var positional: [String] = []
        var given: UInt64 = 0
        /// Applies `options[index]` with `value` (nil for a flag); false: give up.
        func apply(_ index: Int, _ value: String?) -> Bool {
            let option = options[index]
            if !option.repeats {
                if given & (1 << index) != 0 { return false }
                given |= 1 << index
            }
            return option.set(&request, value)
        }
        /// The next word as an option's value, as argument-parser takes it (a word that is no option).
        func nextValue() -> String? {
            guard let word = words.first, !word.isEmpty, !word.hasPrefix("-") else { return nil }
            words.removeFirst()
            return word
        }
        while let word = words.popFirst() {
            if word == "--" {
                // Words for the last node named; with none named, `--` only ends the options (`Moon.parse`).
                if positional.isEmpty { positional = Array(words) } else { request.passthrough = Array(words) }
                break
            }
            if !word.hasPrefix("-") {
                if word.isEmpty { return nil }
                positional.append(word)
            } else if word.hasPrefix("--") {
                let equals = word.firstIndex(of: "=")
                let name = equals.map { String(word[..<$0]) } ?? word
                guard let index = options.firstIndex(where: { $0.names.contains(name) }) else { return nil }
                var value: String?
                if let equals {
                    value = String(word[word.index(after: equals)...])
                    if value!.isEmpty || !options[index].takesValue { return nil }
                } else if options[index].takesValue {
                    guard let next = nextValue() else { return nil }
                    value = next
                }
                guard apply(index, value) else { return nil }
            } else {
                // `-j8`, `-j 8`, `-k`, `-kq`.
                let letters = word.dropFirst()
                guard let letter = letters.first,
                      let index = options.firstIndex(where: { $0.names.contains("-" + String(letter)) }) else { return nil }
                if options[index].takesValue {
                    let joined = String(letters.dropFirst())
                    if !joined.isEmpty && !options[index].joins { return nil }
                    guard let value = joined.isEmpty ? nextValue() : joined, apply(index, value) else { return nil }
                } else {
                    for letter in letters {
                        guard let index = options.firstIndex(where: { $0.names.contains("-" + String(letter)) }),
                              !options[index].takesValue, apply(index, nil) else { return nil }
                    }
                }
            }
        }
        request.arguments = positional
        guard let checked = try? request.checked() else { return nil }
        return .run(checked)
    }

    func run() throws {
        switch self {
        case .run(let request): try request.run()
        case .defaultNodes: try Moon.runDefaultNodes()
        }
    }

    /// One option of `run` as `RunCommand` spells it.
    struct Option {
        let names: [String]
        let takesValue: Bool
        /// The value may be joined to the short name (`-j8`).
        var joins = false
        /// Each use adds a value (`--set`, `--exclude`).
        var repeats = false
        /// Sets the option (`value` nil for a flag); false when its type refuses the value.
        let set: (inout RunRequest, String?) -> Bool

        static func flag(_ names: String..., set: @escaping (inout RunRequest) -> Void) -> Option {
            Option(names: names, takesValue: false) { request, _ in set(&request); return true }
        }

        /// An option with a value, read as argument-parser reads its type (`ExpressibleByArgument`).
        static func value<T: ExpressibleByArgument>(_ names: String..., joins: Bool = false, repeats: Bool = false,
                                                    set: @escaping (inout RunRequest, T) -> Void) -> Option {
            Option(names: names, takesValue: true, joins: joins, repeats: repeats) { request, text in
                guard let text, let value = T(argument: text) else { return false }
                set(&request, value)
                return true
            }
        }
    }

    /// `run`'s options, each with every name `RunCommand` gives it.
    static let options: [Option] = [
        .value("-j", "--jobs", joins: true) { (request, jobs: Int) in request.jobs = jobs },
        .flag("-k", "--keep-going") { $0.keepGoing = true },
        .flag("-y", "--yes") { $0.yes = true },
        .flag("-n", "--dry-run") { $0.dryRun = true },
        .value("--output") { (request, output: ReportSettings.Output) in request.report.output = output },
        .flag("--json") { $0.report.json = true },
        .value("--color") { (request, color: ColorPolicy.Choice) in request.report.color = color },
        .value("--output-mode") { (request, mode: NodeOutputMode) in request.report.outputMode = mode },
        .flag("-q", "--quiet") { $0.report.quiet = true },
        .flag("-v", "--verbose") { $0.report.verbose = true },
        .value("--timeout") { (request, timeout: String) in request.timeout = timeout },
        .value("--grace") { (request, grace: String) in request.grace = grace },
        .value("--set", repeats: true) { (request, assignment: String) in request.assignments.append(assignment) },
        .value("--cache-dir") { (request, directory: String) in request.cache.cacheDirectory = directory },
        .flag("--no-cache") { $0.cache.noCache = true },
        .value("--remote-cache") { (request, url: String) in request.cache.remoteCache = url },
        .flag("--remote-cache-read-only") { $0.cache.remoteReadOnly = true },
        .flag("--resume") { $0.resume = true },
        .value("--exclude", repeats: true) { (request, pattern: String) in request.exclude.append(pattern) },
        .flag("--watch") { $0.watch.watch = true },
        .value("--watch-debounce") { (request, debounce: String) in request.watch.debounce = debounce },
        .value("--watch-poll") { (request, poll: String) in request.watch.poll = poll },
        .flag("-B", "--force") { $0.force = true },
        .flag("--force-only") { $0.forceOnly = true },
        .value("--stall-after") { (request, duration: String) in request.stallAfter = duration },
        .value("--memory") { (request, size: String) in request.memory = size },
        .value("--trace") { (request, path: String) in request.trace = path },
    ]
}
