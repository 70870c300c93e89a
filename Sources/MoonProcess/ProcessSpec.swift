import Foundation

/// What to run: everything a child process gets from moon.
///
/// The child inherits nothing implicitly: `environment` is the complete
/// environment, stdin is `/dev/null`, stdout and stderr are pipes read by the
/// launcher, and no other file descriptor is open.
public struct ProcessSpec: Sendable, Hashable {
    /// An absolute path; a path with a `/` (relative paths are taken from
    /// `workingDirectory`); or a bare name looked up in the `PATH` of
    /// `environment` — the child's environment, not moon's. Without a `PATH`
    /// entry the search path is `/usr/bin:/bin`.
    public var executable: String
    /// The arguments after `argv[0]`; `argv[0]` is `executable` as written.
    public var arguments: [String]
    /// The complete environment of the child, as the launcher hands it over:
    /// possibly a shared, pre-encoded base with overrides (see
    /// `ProcessEnvironment`).
    public var processEnvironment: ProcessEnvironment
    /// The child's working directory; `nil` keeps moon's. It must exist and
    /// be a directory, or `launch` throws `.invalidWorkingDirectory`.
    public var workingDirectory: String?
    /// An interactive node's share of moon's terminal (`TerminalUse`); nil
    /// for every other child, whose stdin is `/dev/null`.
    public var terminal: TerminalUse?
    /// Whether the child starts in a memory cgroup of its own, where moon
    /// can make one (`MemoryCgroups`): its usage then has the cgroup's
    /// peak and OOM kills. False: `rusage` alone, and no cgroup's cost.
    public var memoryCgroup = false

    /// The complete environment of the child, as a dictionary (built on
    /// each read when the spec has a shared base; setting it replaces
    /// `processEnvironment`).
    public var environment: [String: String] {
        get { processEnvironment.dictionary }
        set { processEnvironment = ProcessEnvironment(newValue) }
    }

    public init(
        executable: String,
        arguments: [String] = [],
        environment: [String: String] = ProcessSpec.currentEnvironment,
        workingDirectory: String? = nil
    ) {
        self.init(executable: executable, arguments: arguments,
                  processEnvironment: ProcessEnvironment(environment), workingDirectory: workingDirectory)
    }

    public init(
        executable: String,
        arguments: [String] = [],
        processEnvironment: ProcessEnvironment,
        workingDirectory: String? = nil
    ) {
        self.executable = executable
        self.arguments = arguments
        self.processEnvironment = processEnvironment
        self.workingDirectory = workingDirectory
    }

    /// moon's own environment, the usual base for a node's environment.
    public static var currentEnvironment: [String: String] {
        ProcessInfo.processInfo.environment
    }

    /// The search path used when `environment` has no `PATH`.
    public static let defaultSearchPath = "/usr/bin:/bin"
}

/// A child's complete environment: an optional `Base` shared by many
/// children, and overrides of this child's that win over it.
///
/// Why: moon's nodes share almost all of their environment (dotenv, moon's
/// own, the file's `env:`: dozens of entries) and differ in a few (the
/// node's `env:`, MOON_NODE, MOON_ATTEMPT…): the base is encoded to C
/// strings once, and a spawn encodes only its overrides.
public struct ProcessEnvironment: Sendable, Hashable, CustomStringConvertible {
    /// An immutable environment, encoded once as `KEY=VALUE` C strings.
    public final class Base: @unchecked Sendable {
        /// The entries as a dictionary.
        public let values: [String: String]
        /// The number of entries.
        let count: Int
        /// Where each name's entry is in `pointers`.
        let positions: [String: Int]
        /// `count` pointers into `bytes`, then NULL; immutable once built,
        /// hence the `@unchecked Sendable`.
        let pointers: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>
        private let bytes: UnsafeMutablePointer<CChar>

        public init(_ values: [String: String]) {
            self.values = values
            count = values.count
            var size = 0
            for (name, value) in values { size += name.utf8.count + value.utf8.count + 2 }
            bytes = .allocate(capacity: max(size, 1))
            pointers = .allocate(capacity: count + 1)
            var positions: [String: Int] = [:]
            positions.reserveCapacity(count)
            var cursor = bytes
            for (position, (name, value)) in values.enumerated() {
                pointers[position] = cursor
                positions[name] = position
                cursor = CStringWriter.put(entry: name, value, at: cursor)
            }
            pointers[count] = nil
            self.positions = positions
        }

        /// Where `name`'s entry is, if the base has one.
        func position(of name: String) -> Int? {
            positions[name]
        }

        deinit {
            pointers.deallocate()
            bytes.deallocate()
        }
    }

    /// One variable set over the base.
    public struct Override: Sendable {
        public var name: String
        public var value: String
    }

    /// The shared part; nil when every entry is an override.
    public let base: Base?
    /// Overrides, unique by name, in the order they were first set.
    public private(set) var overrides: [Override] = []

    /// An environment built on `base`, with room for `capacity` overrides
    /// (growing the array one override at a time was most of their cost).
    public init(base: Base, capacity: Int = 0) {
        self.base = base
        overrides.reserveCapacity(capacity)
    }

    /// `dictionary` as it is (encoded at each spawn: for a one-off child).
    public init(_ dictionary: [String: String]) {
        base = nil
        overrides = dictionary.map { Override(name: $0.key, value: $0.value) }
    }

    /// Sets `name` to `value`, over the base and any earlier override (a
    /// later layer wins).
    public mutating func set(_ name: String, _ value: String) {
        if let index = overrides.firstIndex(where: { $0.name == name }) {
            overrides[index].value = value
        } else {
            overrides.append(Override(name: name, value: value))
        }
    }

    /// Sets each pair, as `set` one by one would, in time linear in their
    /// number (a shell `run` with a long list sets a variable per item).
    public mutating func set<S: Sequence>(contentsOf pairs: S) where S.Element == (String, String) {
        var index: [String: Int] = [:]
        index.reserveCapacity(overrides.count + pairs.underestimatedCount)
        for (position, override) in overrides.enumerated() { index[override.name] = position }
        for (name, value) in pairs {
            if let position = index[name] {
                overrides[position].value = value
            } else {
                index[name] = overrides.count
                overrides.append(Override(name: name, value: value))
            }
        }
    }

    /// The value of `name`: its override, else the base's.
    public subscript(name: String) -> String? {
        if let override = overrides.first(where: { $0.name == name }) { return override.value }
        return base?.values[name]
    }

    /// Every entry, overrides applied.
    public var dictionary: [String: String] {
        var result = base?.values ?? [:]
        for override in overrides { result[override.name] = override.value }
        return result
    }

    public static func == (lhs: ProcessEnvironment, rhs: ProcessEnvironment) -> Bool {
        lhs.dictionary == rhs.dictionary
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(dictionary)
    }

    public var description: String { dictionary.description }

    /// Calls `body` with a NULL-terminated `KEY=VALUE` array: the base's
    /// pointers as they are, an overridden entry replaced in place, the
    /// other overrides appended; only the overrides are encoded.
    func withEnvp<R>(_ body: (UnsafePointer<UnsafeMutablePointer<CChar>?>) throws -> R) rethrows -> R {
        let baseCount = base?.count ?? 0
        var size = 0
        for override in overrides { size += override.name.utf8.count + override.value.utf8.count + 2 }
        let pointers = UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>.allocate(capacity: baseCount + overrides.count + 1)
        defer { pointers.deallocate() }
        let bytes = UnsafeMutablePointer<CChar>.allocate(capacity: max(size, 1))
        defer { bytes.deallocate() }
        if let base { pointers.update(from: base.pointers, count: baseCount) }
        var end = baseCount
        var cursor = bytes
        for override in overrides {
            if let position = base?.position(of: override.name) {
                pointers[position] = cursor
            } else {
                pointers[end] = cursor
                end += 1
            }
            cursor = CStringWriter.put(entry: override.name, override.value, at: cursor)
        }
        pointers[end] = nil
        return try body(pointers)
    }
}

/// Writes Swift strings as C strings into memory the caller sized.
enum CStringWriter {
    /// Writes `text` and a NUL at `cursor`; returns the position after it.
    static func put(_ text: String, at cursor: UnsafeMutablePointer<CChar>) -> UnsafeMutablePointer<CChar> {
        let end = copy(text, to: cursor)
        end.pointee = 0
        return end + 1
    }

    /// Writes `NAME=VALUE` and a NUL at `cursor`; returns the position after it.
    static func put(entry name: String, _ value: String, at cursor: UnsafeMutablePointer<CChar>) -> UnsafeMutablePointer<CChar> {
        var end = copy(name, to: cursor)
        end.pointee = 61  // "="
        end = copy(value, to: end + 1)
        end.pointee = 0
        return end + 1
    }

    /// Copies `text`'s UTF-8 bytes (`text.utf8.count` of them) to `cursor`.
    private static func copy(_ text: String, to cursor: UnsafeMutablePointer<CChar>) -> UnsafeMutablePointer<CChar> {
        let copied = text.utf8.withContiguousStorageIfAvailable { bytes -> Int in
            if let source = bytes.baseAddress, bytes.count > 0 {
                UnsafeMutableRawPointer(cursor).copyMemory(from: source, byteCount: bytes.count)
            }
            return bytes.count
        }
        if let copied { return cursor + copied }
        var end = cursor
        for byte in text.utf8 {
            end.pointee = CChar(bitPattern: byte)
            end += 1
        }
        return end
    }
}
