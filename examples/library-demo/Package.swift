// swift-tools-version:6.0
import PackageDescription

// A stand-alone user of the MoonCommand library: no YAML, no CLI.
let package = Package(
    name: "library-demo",
    platforms: [.macOS(.v13)],
    dependencies: [
        .package(name: "moon", path: "../.."),
    ],
    targets: [
        .executableTarget(
            name: "LibraryDemo",
            dependencies: [.product(name: "MoonCommand", package: "moon")]
        ),
        .executableTarget(
            name: "LibraryBench",
            dependencies: [.product(name: "MoonCommand", package: "moon")]
        ),
    ],
    swiftLanguageModes: [.v5]
)
