import ArgumentParser
import Foundation
import MoonCache
import MoonEvents
import MoonGraph
import MoonReport
import MoonSession

/// `moon cache stats|prune`: what the output cache holds, and shrinking it.
/// Every start builds this configuration (the argument parser walks every
/// subcommand), so its text is put together without formatting numbers.
struct CacheCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "cache",
        abstract: "Show or prune the output cache.",
        discussion: """
        The cache is --cache-dir, else MOON_CACHE_DIR, else the graph file's \
        'cache: { dir }' (FILE, or the moon.yaml here or above), else \
        $XDG_CACHE_HOME/moon or ~/.cache/moon. After a run that stored outputs, moon prunes it to \
        \(ByteSize.text(CacheUsage.defaultLimit)), least recently used entries first.
        """,
        subcommands: [CacheStatsCommand.self, CachePruneCommand.self])
}

/// The cache directory of `moon cache`: `--cache-dir`, else MOON_CACHE_DIR,
/// else the graph file's `cache: { dir }` (FILE, or the moon.yaml found as
/// `moon run` finds it), else the default: the directory `moon run` of that
/// file uses.
struct CacheDirectoryOption: ParsableArguments {
    @Option(name: .customLong("cache-dir"), help: ArgumentHelp("The cache directory.", valueName: "dir"))
    var cacheDirectory: String?

    @Argument(help: ArgumentHelp("The graph file whose 'cache: { dir }' to use (default: moon.yaml here or above, if any).",
                                 valueName: "file"))
    var file: String?

    /// The directory; a path that is no cache directory (a file) is an error.
    func directory() throws -> CacheDirectory {
        let directory = CacheDirectory(path: CacheSettings.resolve(option: cacheDirectory, graph: try graph()))
        if let problem = directory.problem {
            Console.error(problem)
            throw ExitCode.failure
        }
        return directory
    }

    /// The graph file, read only when neither the option nor the environment names a directory.
    private func graph() throws -> Graph? {
        guard cacheDirectory?.isEmpty != false, Terminal.variable("MOON_CACHE_DIR")?.isEmpty != false else { return nil }
        guard let path = try file ?? GraphFileLocator.discovered() else { return nil }
        return try GraphFile.load(path).graph
    }
}

struct CacheStatsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "stats", abstract: "Print the cache's entries, blobs and size.")

    @OptionGroup var location: CacheDirectoryOption

    func run() throws {
        let directory = try location.directory()
        let usage = CacheUsage.measure(directory)
        Console.line("cache: \(directory.path)")
        Console.line("entries: \(usage.entries)")
        Console.line("blobs: \(usage.blobs)")
        Console.line("size: \(ByteSize.text(usage.bytes)) (limit \(ByteSize.text(CacheUsage.defaultLimit)) after a run)")
        if let oldest = usage.oldestUse, let newest = usage.newestUse {
            Console.line("used: \(DateText.human(oldest)) .. \(DateText.human(newest))")
        }
    }
}

struct CachePruneCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "prune",
        abstract: "Remove the least recently used entries until the cache fits a size.")

    @OptionGroup var location: CacheDirectoryOption

    @Option(name: .customLong("max-size"), help: ArgumentHelp("The size to shrink to: 5G, 500M, 0 (everything).", valueName: "size"))
    var maxSize: String

    func validate() throws {
        guard ByteSize.parse(maxSize) != nil else {
            throw ValidationError("--max-size: '\(maxSize)' is not a size (use 5G, 500M, 64K or a number of bytes)")
        }
    }

    func run() throws {
        let directory = try location.directory()
        let pruned = CacheUsage.prune(directory, maxBytes: ByteSize.parse(maxSize)!, grace: maxSize == "0" ? 0 : 60)
        let usage = CacheUsage.measure(directory)
        Console.line("removed \(pruned.entries) entries and \(pruned.blobs) blobs (\(ByteSize.text(pruned.bytes))); "
            + "\(ByteSize.text(usage.bytes)) left in \(directory.path)")
    }
}
