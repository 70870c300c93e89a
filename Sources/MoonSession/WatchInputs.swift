import Foundation
import MoonGraph
import MoonState
import MoonWatch

/// What watch mode watches for a plan: every selected node's `sources`
/// (as globs, so files that start to match later count), the files its
/// last depfile listed, and the graph file with its dotenv files; and,
/// for a set of changed paths, which nodes they touch. The instances of a
/// run-time `for-each` count with their own `sources` and `generates` once
/// a run made them (`learn`): their template's patterns, with `${{ item }}`
/// unfilled, name no file.
package struct WatchInputs {
    /// The graph file's directory, absolute: relative patterns start here.
    package let directory: String
    /// The graph file and its dotenv files, absolute: a change reloads the graph.
    package let graphFiles: Set<String>
    /// The selected nodes' `sources` globs, each standing for its node (graph index).
    private var sources = WatchGlobs()
    /// Per depfile dependency (relative or absolute as recorded): its nodes.
    private let dependencies: [String: [Int]]
    /// What the selected nodes and their run-time instances generate: their
    /// writes are moon's own, and never trigger a rerun.
    private var generated = WatchGlobs()
    /// The `for-each` globs of the graph, each with its directory (absolute), include and exclude globs and files.
    private let fanOuts: [(glob: FanOutGlob, directory: String, include: Glob, exclude: [Glob], files: Set<String>)]
    package let roots: [WatchRoot]

    /// What a set of changed paths means.
    package struct Classified {
        /// A graph file changed: the graph is loaded again.
        package var reload = false
        /// The nodes (graph indices) whose inputs changed.
        package var nodes = Set<Int>()
        /// The changed paths that matter, relative to the graph's directory where they are in it.
        package var paths: [String] = []
        /// A file a `for-each` glob matches appeared or went away: its
        /// instances may be others now (`fanOutsChanged` has the last word).
        package var fanOuts = false

        package var matters: Bool { reload || !nodes.isEmpty || fanOuts }
    }

    /// `included`: the graph files the graph file includes; like it, a change reloads the graph.
    /// `instances`: per template (graph index) of a run-time fan-out, the instances its last expansion made.
    /// `fanOutGlobs`: the `for-each` globs the graph's load expanded (`GraphFile.fanOutGlobs`).
    package init(plan: Plan, state: IncrementalState?, included: [String] = [], instances: [Int: [Node]] = [:], fanOutGlobs: [FanOutGlob] = []) {
        let graph = plan.graph
        directory = Self.absolute(graph.directory, in: FileManager.default.currentDirectoryPath)
        var graphFiles: Set<String> = [Self.absolute(graph.path, in: FileManager.default.currentDirectoryPath)]
        for dotenv in graph.dotenv { graphFiles.insert(Self.absolute(dotenv.path, in: directory)) }
        for path in included { graphFiles.insert(Self.absolute(path, in: FileManager.default.currentDirectoryPath)) }
        self.graphFiles = graphFiles
        var dependencies: [String: [Int]] = [:]
        var bases: [String] = []
        for index in plan.selected {
            for node in graph.nodes[index].fanOut == nil ? [graph.nodes[index]] : instances[index] ?? [] {
                bases += Self.add(node, as: index, sources: &sources, generated: &generated)
                for dependency in state?.stored(node.name)?.deps ?? [] {
                    dependencies[dependency, default: []].append(index)
                }
            }
        }
        self.dependencies = dependencies
        let cwd = FileManager.default.currentDirectoryPath
        fanOuts = fanOutGlobs.map { glob in
            (glob, Self.absolute(glob.directory, in: cwd), Glob(glob.pattern), glob.exclude.map { Glob($0) }, Set(glob.files))
        }
        bases += fanOuts.map { Self.absolute($0.include.base, in: $0.directory) }
        roots = Self.roots(bases: bases, files: Array(dependencies.keys), graphFiles: graphFiles, directory: directory)
    }

    /// A run expanded run-time fan-out `template` (graph index) into
    /// `instances`: what they write is moon's own from now on, and a change
    /// of their sources reruns the template (which expands again, and runs
    /// only the instances not up to date). Their sources' directories are
    /// watched from the end of the run (`init`).
    package mutating func learn(_ instances: [Node], of template: Int) {
        for node in instances { _ = Self.add(node, as: template, sources: &sources, generated: &generated) }
    }

    /// Adds `node`'s sources (standing for graph node `index`) and
    /// generates; returns the bases of its sources, to watch.
    private static func add(_ node: Node, as index: Int, sources: inout WatchGlobs, generated: inout WatchGlobs) -> [String] {
        // (A depfile is the node's own output too.)
        for pattern in node.generates + (node.depfile.map { [$0] } ?? []) { generated.add(Glob(pattern), exclude: [], node: index) }
        let include = node.sources.filter { !$0.hasPrefix("!") }.map { Glob($0) }
        let exclude = node.sources.filter { $0.hasPrefix("!") }.map { Glob(String($0.dropFirst())) }
        for glob in include { sources.add(glob, exclude: exclude, node: index) }
        return include.map(\.base)
    }

    /// Where a base or file must be watched from: an existing directory
    /// (with its tree), the directory holding a file, or the nearest
    /// existing ancestor of what does not exist yet (with its tree, so it
    /// is seen when it appears).
    private static func roots(bases: [String], files: [String], graphFiles: Set<String>, directory: String) -> [WatchRoot] {
        var roots = Set<WatchRoot>()
        for base in bases {
            var path = absolute(base, in: directory)
            var isDirectory: ObjCBool = false
            if FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) {
                roots.insert(WatchRoot(path: isDirectory.boolValue ? path : parent(path), recursive: isDirectory.boolValue))
                continue
            }
            while path != "/", !FileManager.default.fileExists(atPath: path) { path = parent(path) }
            roots.insert(WatchRoot(path: path, recursive: true))
        }
        for file in files + Array(graphFiles) {
            roots.insert(WatchRoot(path: parent(absolute(file, in: directory)), recursive: false))
        }
        // A tree watched whole covers the directories inside it.
        let trees = roots.filter(\.recursive).map(\.path)
        return roots.filter { root in
            !trees.contains { tree in tree != root.path && root.path.hasPrefix(tree == "/" ? "/" : tree + "/") }
                && !(root.recursive == false && trees.contains(root.path))
        }.sorted { $0.path < $1.path }
    }

    /// What a set of changes means: whether the graph must be reloaded,
    /// which nodes' inputs changed (graph indices), and the changed paths
    /// that matter, relative to the graph's directory where they are in it.
    package func classify(_ changes: FileChanges) -> Classified {
        var result = Classified()
        if changes.overflowed {
            result.nodes = sources.nodes.union(dependencies.values.joined())
            result.fanOuts = !fanOuts.isEmpty
        }
        for path in changes.paths {
            if graphFiles.contains(path) {
                result.reload = true
                result.paths.append(relative(path))
                continue
            }
            let name = relative(path)
            if isGenerated(name) { continue }
            // (An edit of a file the glob listed changes no instance; its own sources say what reruns.)
            let fanOut = fanOuts.contains { fanOut in
                guard path.hasPrefix(fanOut.directory + "/") else { return false }
                let inside = String(path.dropFirst(fanOut.directory.count + 1))
                guard Self.glob(fanOut.include, matches: inside), !fanOut.exclude.contains(where: { Self.glob($0, matches: inside) })
                else { return false }
                return fanOut.files.contains(inside) != Self.isFile(path)
            }
            if fanOut { result.fanOuts = true }
            let touched = (dependencies[name] ?? dependencies[path] ?? []) + sources.nodes(matching: name)
            if !touched.isEmpty || fanOut {
                result.nodes.formUnion(touched)
                result.paths.append(name)
            }
        }
        result.paths.sort()
        return result
    }

    /// Whether a `for-each` glob matches other files than when the graph
    /// was loaded: then its instances are others, and the graph must be
    /// loaded again. Globs as the loader does (`GraphFile.files`).
    package func fanOutsChanged() -> Bool {
        fanOuts.contains { $0.glob.filesNow(GraphFile.files) != $0.glob.files }
    }

    /// Whether moon's own nodes write `path` (relative or absolute): a
    /// file their `generates` name, or a directory that holds one and
    /// exists (a node made it for its outputs; the files it then writes are
    /// seen one by one). A directory that went away counts as a change: its
    /// files are not reported one by one.
    private func isGenerated(_ path: String) -> Bool {
        if generated.matches(path) { return true }
        guard generated.isParent(path) else { return false }
        var isDirectory: ObjCBool = false
        return FileManager.default.fileExists(atPath: Self.absolute(path, in: directory), isDirectory: &isDirectory) && isDirectory.boolValue
    }

    /// How many files are watched: those the sources match now, the
    /// depfiles' and the graph's own.
    package func fileCount() -> Int {
        let scanner = SourceScanner(root: directory)
        var files = Set(scanner.files(matching: sources.patternsWritten).map(\.path))
        files.formUnion(dependencies.keys)
        return files.count + graphFiles.count
    }

    /// The files depfiles listed that lie directly in one of `directories`, absolute.
    package func dependencies(in directories: Set<String>) -> [String] {
        dependencies.keys.map { Self.absolute($0, in: directory) }
            .filter { directories.contains(Self.parent($0)) }
    }

    private func relative(_ path: String) -> String {
        path.hasPrefix(directory + "/") ? String(path.dropFirst(directory.count + 1)) : path
    }

    /// Whether `glob` matches `path` (relative to the graph's directory,
    /// or absolute), as the source scanner decides (`SourceScanner.glob`,
    /// the one rule); a change of a pattern's base directory itself counts too.
    package static func glob(_ glob: Glob, matches path: String) -> Bool {
        if !glob.base.isEmpty, path == glob.base { return true }
        return SourceScanner.glob(glob, matches: path)
    }

    private static func isFile(_ path: String) -> Bool {
        var isDirectory: ObjCBool = false
        return FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) && !isDirectory.boolValue
    }

    package static func absolute(_ path: String, in directory: String) -> String {
        let joined = path.hasPrefix("/") ? path : (path.isEmpty || path == "." ? directory : directory + "/" + path)
        return URL(fileURLWithPath: joined).standardizedFileURL.path
    }

    package static func parent(_ path: String) -> String {
        let parent = (path as NSString).deletingLastPathComponent
        return parent.isEmpty ? "/" : parent
    }
}
