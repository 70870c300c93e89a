import Foundation
import MoonGraph
import MoonState
import MoonWatch

/// What watch mode watches for a plan: every selected node's `sources`
/// (as globs, so files that start to match later count), the files its
/// last depfile listed, and the graph file with its dotenv files; and,
/// for a set of changed paths, which nodes they touch.
struct WatchInputs {
    /// The graph file's directory, absolute: relative patterns start here.
    let directory: String
    /// The graph file and its dotenv files, absolute: a change reloads the graph.
    let graphFiles: Set<String>
    /// Per selected node (graph index): its include and exclude globs.
    private let sources: [(node: Int, include: [Glob], exclude: [Glob])]
    /// Per depfile dependency (relative or absolute as recorded): its nodes.
    private let dependencies: [String: [Int]]
    /// What the selected nodes generate: their writes never trigger a rerun.
    private let generated: [Glob]
    let roots: [WatchRoot]

    /// `included`: the graph files the graph file includes; like it, a change reloads the graph.
    init(plan: Plan, state: IncrementalState?, included: [String] = []) {
        let graph = plan.graph
        directory = Self.absolute(graph.directory, in: FileManager.default.currentDirectoryPath)
        var graphFiles: Set<String> = [Self.absolute(graph.path, in: FileManager.default.currentDirectoryPath)]
        for dotenv in graph.dotenv { graphFiles.insert(Self.absolute(dotenv.path, in: directory)) }
        for path in included { graphFiles.insert(Self.absolute(path, in: FileManager.default.currentDirectoryPath)) }
        self.graphFiles = graphFiles
        var sources: [(Int, [Glob], [Glob])] = []
        var dependencies: [String: [Int]] = [:]
        var generated: [Glob] = []
        var bases: [String] = []
        for index in plan.selected {
            let node = graph.nodes[index]
            generated += node.generates.map { Glob($0) }
            guard !node.sources.isEmpty || node.depfile != nil else { continue }
            let include = node.sources.filter { !$0.hasPrefix("!") }.map { Glob($0) }
            let exclude = node.sources.filter { $0.hasPrefix("!") }.map { Glob(String($0.dropFirst())) }
            sources.append((index, include, exclude))
            bases += include.map(\.base)
            for dependency in state?.stored(node.name)?.deps ?? [] {
                dependencies[dependency, default: []].append(index)
            }
        }
        self.sources = sources
        self.dependencies = dependencies
        self.generated = generated
        roots = Self.roots(bases: bases, files: Array(dependencies.keys), graphFiles: graphFiles, directory: directory)
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
    func classify(_ changes: FileChanges) -> (reload: Bool, nodes: Set<Int>, paths: [String]) {
        var reload = false
        var nodes = Set<Int>()
        var paths: [String] = []
        if changes.overflowed { nodes = Set(sources.map(\.node)) }
        for path in changes.paths {
            if graphFiles.contains(path) {
                reload = true
                paths.append(relative(path))
                continue
            }
            let name = relative(path)
            if generated.contains(where: { Self.glob($0, matches: name) }) { continue }
            var touched = dependencies[name] ?? dependencies[path] ?? []
            for source in sources
            where source.include.contains(where: { Self.glob($0, matches: name) })
                && !source.exclude.contains(where: { Self.glob($0, matches: name) }) {
                touched.append(source.node)
            }
            if !touched.isEmpty {
                nodes.formUnion(touched)
                paths.append(name)
            }
        }
        return (reload, nodes, paths.sorted())
    }

    /// How many files are watched: those the sources match now, the
    /// depfiles' and the graph's own.
    func fileCount() -> Int {
        let scanner = SourceScanner(root: directory)
        var files = Set(scanner.files(matching: sources.flatMap { $0.include.map(\.pattern) }).map(\.path))
        files.formUnion(dependencies.keys)
        return files.count + graphFiles.count
    }

    /// The files depfiles listed that lie directly in one of `directories`, absolute.
    func dependencies(in directories: Set<String>) -> [String] {
        dependencies.keys.map { Self.absolute($0, in: directory) }
            .filter { directories.contains(Self.parent($0)) }
    }

    private func relative(_ path: String) -> String {
        path.hasPrefix(directory + "/") ? String(path.dropFirst(directory.count + 1)) : path
    }

    /// Whether `glob` matches `path` (relative to the graph's directory,
    /// or absolute), as the source scanner decides (`SourceScanner.glob`,
    /// the one rule); a change of a pattern's base directory itself counts too.
    static func glob(_ glob: Glob, matches path: String) -> Bool {
        if !glob.base.isEmpty, path == glob.base { return true }
        return SourceScanner.glob(glob, matches: path)
    }

    static func absolute(_ path: String, in directory: String) -> String {
        let joined = path.hasPrefix("/") ? path : (path.isEmpty || path == "." ? directory : directory + "/" + path)
        return URL(fileURLWithPath: joined).standardizedFileURL.path
    }

    static func parent(_ path: String) -> String {
        let parent = (path as NSString).deletingLastPathComponent
        return parent.isEmpty ? "/" : parent
    }
}
