// swift-tools-version:6.0
import PackageDescription

// The targets follow the pipeline of DESIGN.md §1; a later stage imports an
// earlier one, never the reverse, and the reactive core imports none of them.
let package = Package(
    name: "moon",
    // Linux only: the spawner, the event loop and the system glue use
    // pidfds, prctl and /proc (docs/decisions.md says what a port needs).
    products: [
        .executable(name: "moon", targets: ["moon"]),
        // The reactive core is usable on its own, without YAML or the CLI.
        .library(name: "MoonCommand", targets: ["MoonCommand"]),
        // The stages the CLI is made of, for a program that reads, runs,
        // reports, remembers, caches and watches graphs itself. The session
        // layer (MoonSession) is not in it: its API is the package's own.
        .library(name: "MoonKit", targets: ["MoonDocument", "MoonJSON", "MoonGraph", "MoonSystem", "MoonEventLoop", "MoonProcess", "MoonEvents", "MoonRun", "MoonReport",
                                            "MoonState", "MoonCache", "MoonWatch"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
        .package(url: "https://github.com/apple/swift-crypto", from: "3.12.3"),
        .package(url: "https://github.com/apple/swift-collections", from: "1.6.0"),
    ],
    targets: [
        .systemLibrary(name: "CYaml", pkgConfig: "yaml-0.1", providers: [.apt(["libyaml-dev"])]),
        // The system's OpenSSL 3, for https:// remote caches (static in the release binary).
        .systemLibrary(name: "COpenSSL", pkgConfig: "openssl", providers: [.apt(["libssl-dev"])]),
        .target(name: "MoonCommand", swiftSettings: [.swiftLanguageMode(.v6)]),
        .target(name: "MoonDocument", dependencies: ["CYaml"]),
        // JSON text: string literals for every JSON moon writes, and
        // ordered values with their one parser (JSON moon reads but does not
        // own as Codable: a replayed stream, `for-each` items, outputs).
        .target(name: "MoonJSON"),
        .target(name: "MoonGraph", dependencies: ["MoonDocument", "MoonCommand", "MoonJSON", "MoonSystem"]),
        // Linux calls Swift's Glibc module does not import, and what moon
        // needs of the system (CPU count, threads, signal names).
        .target(name: "CMoonSystem"),
        .target(name: "MoonSystem", dependencies: ["CMoonSystem"]),
        // moon's event loop: poll, posted work, timers, forwarded signals.
        .target(name: "MoonEventLoop", dependencies: [
            "MoonSystem", "CMoonSystem",
            .product(name: "HeapModule", package: "swift-collections"),
        ]),
        // The spawner (posix_spawn + pidfd_open), in C.
        .target(name: "CMoonSpawn"),
        // Starting, watching and reaping child processes.
        .target(name: "MoonProcess", dependencies: ["CMoonSpawn", "MoonEventLoop", "MoonSystem", "MoonCommand"]),
        // What a run reports (RunEvent and its parts) and the `--json`
        // stream's one writer and reader: reporters depend on this, not on
        // the runner, its processes or Slurm.
        .target(name: "MoonEvents", dependencies: ["MoonSystem", "MoonJSON"]),
        .target(name: "MoonRun", dependencies: [
            "MoonEvents", "MoonGraph", "MoonJSON", "MoonCommand", "MoonProcess", "MoonSystem",
            .product(name: "HeapModule", package: "swift-collections"),
        ]),
        .target(name: "MoonReport", dependencies: ["MoonEvents", "MoonCommand", "MoonGraph", "MoonJSON"]),
        // Incremental runs and history: fingerprints, the stat cache and the
        // SQLite store in `.moon/` beside the graph file.
        .target(name: "MoonState", dependencies: [
            "MoonGraph", "MoonJSON", "MoonSystem",
            .product(name: "GRDB", package: "GRDB.swift"),
            // SQLite's own column accessors on GRDB's statements, for the no-op's one read of every node state.
            .product(name: "GRDBSQLite", package: "GRDB.swift"),
            .product(name: "Crypto", package: "swift-crypto"),
        ]),
        // Watch mode: the file system as a signal (inotify, or polling).
        .target(name: "MoonWatch", dependencies: ["MoonCommand", "MoonEventLoop", "MoonSystem"]),
        // The output cache: entries and content-addressed blobs on disk
        // (and over HTTP or HTTPS), restored instead of running a node.
        .target(name: "MoonCache", dependencies: [
            "MoonState", "MoonGraph", "MoonJSON", "MoonSystem", "COpenSSL",
            .product(name: "Crypto", package: "swift-crypto"),
        ]),
        // The application layer: a plain run and watch mode, the graph file
        // found and loaded, the up-to-date and cache checks. It takes its
        // loop, launcher, sinks and stores from the command line's side.
        .target(name: "MoonSession", dependencies: [
            "MoonWatch", "MoonReport", "MoonEvents", "MoonRun", "MoonGraph", "MoonDocument", "MoonState", "MoonCache", "MoonProcess",
            "MoonEventLoop", "MoonSystem", "MoonCommand",
        ]),
        .executableTarget(name: "moon", dependencies: [
            "MoonSession", "MoonReport", "MoonEvents", "MoonRun", "MoonGraph", "MoonState", "MoonCache", "MoonProcess", "MoonCommand", "MoonSystem",
            .product(name: "ArgumentParser", package: "swift-argument-parser"),
        ]),
        .testTarget(name: "MoonCommandTests", dependencies: ["MoonCommand"]),
        .testTarget(name: "MoonDocumentTests", dependencies: ["MoonDocument"]),
        .testTarget(name: "MoonJSONTests", dependencies: ["MoonJSON"]),
        .testTarget(name: "MoonGraphTests", dependencies: ["MoonGraph", "MoonDocument", "MoonCommand"]),
        .testTarget(name: "MoonProcessTests", dependencies: ["MoonProcess", "MoonEventLoop", "MoonSystem", "MoonCommand", "CMoonSpawn"]),
        // What the runner's and the sessions' tests share: nodes that take virtual time.
        .target(name: "MoonTestSupport", dependencies: ["MoonRun", "MoonCommand", "MoonEvents", "MoonGraph"], path: "Tests/MoonTestSupport"),
        .testTarget(name: "MoonRunTests", dependencies: ["MoonRun", "MoonEvents", "MoonGraph", "MoonDocument", "MoonProcess", "MoonCommand", "MoonTestSupport"]),
        .testTarget(name: "MoonSessionTests", dependencies: [
            "MoonSession", "MoonTestSupport", "MoonRun", "MoonCommand", "MoonEvents", "MoonGraph", "MoonReport", "MoonWatch", "MoonProcess",
        ]),
        .testTarget(name: "MoonReportTests", dependencies: ["MoonReport", "MoonEvents", "MoonCommand", "MoonGraph", "MoonDocument", "MoonJSON"],
                    exclude: ["Golden"]),
        .testTarget(name: "MoonCacheTests", dependencies: ["MoonCache", "COpenSSL"]),
        .testTarget(name: "MoonStateTests", dependencies: ["MoonState", "MoonGraph", "MoonDocument", "MoonCache", "MoonSystem",
                                                      .product(name: "GRDB", package: "GRDB.swift")]),
        .testTarget(name: "MoonWatchTests", dependencies: ["MoonWatch", "MoonEventLoop", "MoonCommand"]),
        // `moon`'s fast reading of `run`'s command line, held to argument-parser's definition of it.
        .testTarget(name: "moonTests", dependencies: ["moon", .product(name: "ArgumentParser", package: "swift-argument-parser")]),
        // The end-to-end tests run the built binary; GRDB's SQLite for a damaged store.
        .testTarget(name: "MoonCLITests", dependencies: ["MoonEvents", "MoonReport", .product(name: "GRDB", package: "GRDB.swift")]),
    ],
    swiftLanguageModes: [.v5]
)

// The libFuzzer target of the YAML loader and graph decoder, only with
// MOON_FUZZ=1, so ordinary builds never link libFuzzer (fuzz/run.sh):
//   MOON_FUZZ=1 swift build --product moonfuzz --sanitize=fuzzer --sanitize=address
if Context.environment["MOON_FUZZ"] == "1" {
    package.targets += [
        .target(name: "CFuzzDriver"),
        .executableTarget(name: "MoonFuzz", dependencies: ["CFuzzDriver", "MoonDocument", "MoonGraph", "MoonReport"]),
    ]
    package.products += [.executable(name: "moonfuzz", targets: ["MoonFuzz"])]
}
