import Foundation

/// A new empty directory under the system's temporary directory, named
/// for the suite that asks (the suite removes it).
func scratchDirectory(_ name: String) throws -> String {
    let path = FileManager.default.temporaryDirectory.appendingPathComponent("moon-\(name)-\(UUID().uuidString)").path
    try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    return path
}
