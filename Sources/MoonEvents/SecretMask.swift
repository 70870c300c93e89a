/// Hides the values of a run's secrets in text moon writes: every byte of
/// every occurrence of a secret becomes part of one `***`, wherever it
/// stands (inside a word, next to another secret, overlapping one). Made
/// once per run from the secrets it read (`SecretValues`); the runner masks
/// node output, values, outputs, errors and commands with it before any
/// reporter, the state or the cache sees them (docs/secrets.md).
///
/// A secret of several lines is also masked line by line, since node output
/// arrives a line at a time. Matching is on UTF-8 bytes; a masked text is
/// still valid UTF-8 (an occurrence starts and ends on character bounds).
public struct SecretMask: Sendable {
    /// What stands for a masked run of bytes, as GitHub Actions writes it.
    public static let replacement = "***"
    /// The shortest value moon accepts as a secret: a shorter one would
    /// mask every `a` or `1` of every line (docs/secrets.md).
    public static let minimumLength = 4

    /// The texts to hide, longest first (so a match at a position is the longest there).
    private let needles: [[UInt8]]
    /// Which bytes start a needle: most bytes of a line are passed over with one lookup.
    private let starts: [Bool]
    /// The longest needle's length in bytes.
    public let longest: Int

    /// The mask of `secrets`; nil when there is nothing to mask (no secret
    /// of `minimumLength` bytes or more).
    public init?(secrets: some Sequence<String>) {
        var set = Set<[UInt8]>()
        for secret in secrets {
            let bytes = Array(secret.utf8)
            if bytes.count >= Self.minimumLength { set.insert(bytes) }
            guard bytes.contains(UInt8(ascii: "\n")) else { continue }
            for line in bytes.split(separator: UInt8(ascii: "\n")) {
                var line = Array(line)
                if line.last == UInt8(ascii: "\r") { line.removeLast() }
                if line.count >= Self.minimumLength { set.insert(line) }
            }
        }
        guard !set.isEmpty else { return nil }
        self.init(needles: set)
    }

    private init(needles set: Set<[UInt8]>) {
        needles = set.sorted { $0.count != $1.count ? $0.count > $1.count : $0.lexicographicallyPrecedes($1) }
        var starts = [Bool](repeating: false, count: 256)
        for needle in needles { starts[Int(needle[0])] = true }
        self.starts = starts
        longest = needles[0].count
    }

    /// A mask of this one's secrets and `other`'s.
    public func adding(_ other: SecretMask?) -> SecretMask {
        guard let other else { return self }
        return SecretMask(needles: Set(needles).union(other.needles))
    }

    /// `text` with every occurrence of a secret masked; `text` itself when it holds none.
    public func mask(_ text: String) -> String {
        var text = text
        return text.withUTF8 { bytes in
            guard firstMatch(in: bytes) != nil else { return nil }
            return OutputBytes.decode(masked(bytes, upTo: bytes.count))
        } ?? text
    }

    /// Whether `text` holds a secret.
    public func contains(_ text: String) -> Bool {
        var text = text
        return text.withUTF8 { firstMatch(in: $0) != nil }
    }

    /// An error with its message masked.
    public func mask(_ error: NodeError) -> NodeError {
        var error = error
        error.message = mask(error.message)
        return error
    }

    /// Outputs with their values masked (a key is a name, never a secret).
    public func mask(_ outputs: [KeyValue]) -> [KeyValue] {
        outputs.map { KeyValue($0.key, mask($0.value)) }
    }

    // MARK: - Lines in parts

    /// One part of a line that arrives in parts (`continued`: more follow).
    /// A secret may straddle two parts: the end of a part that may start
    /// one is kept in `carry` and put before the next part, so what
    /// returns is masked as the whole line would be. Nil: nothing to show
    /// yet (all of it is carried).
    public func mask(part: String, continued: Bool, carry: inout [UInt8]) -> String? {
        var buffer = carry
        buffer.append(contentsOf: part.utf8)
        guard continued else {
            carry = []
            return OutputBytes.decode(buffer.withUnsafeBufferPointer { masked($0, upTo: $0.count) })
        }
        return buffer.withUnsafeBufferPointer { bytes -> String? in
            // No secret that starts before `cut` can go on into the next part.
            var cut = max(0, bytes.count - (longest - 1))
            while cut > 0, cut < bytes.count, bytes[cut] & 0xC0 == 0x80 { cut -= 1 }
            // Not inside a masked run: that run goes whole into the next part;
            // one that starts the buffer (a flood of secrets) ends this part,
            // so the carry stays bounded.
            if let run = coveredRun(in: bytes, at: cut) { cut = run.lowerBound > 0 ? run.lowerBound : run.upperBound }
            carry = Array(bytes[cut...])
            return cut == 0 ? nil : OutputBytes.decode(masked(bytes, upTo: cut))
        }
    }

    /// The end of a line still being written, for the live view: masked,
    /// less an end that may be the start of a secret (the rest of it has
    /// not come) and, when `truncated` (it does not start at the line's
    /// start), less a start that may be the end of one.
    public func mask(partial text: String, truncated: Bool) -> String {
        var bytes = Array(mask(text).utf8)
        // The longest end of `bytes` that is a proper start of a needle.
        var drop = 0
        for needle in needles {
            for length in stride(from: min(needle.count - 1, bytes.count), to: drop, by: -1)
            where bytes[(bytes.count - length)...].elementsEqual(needle[..<length]) {
                drop = length
                break
            }
        }
        bytes.removeLast(drop)
        if truncated {
            var skip = 0
            for needle in needles {
                for length in stride(from: min(needle.count - 1, bytes.count), to: skip, by: -1)
                where bytes[..<length].elementsEqual(needle[(needle.count - length)...]) {
                    skip = length
                    break
                }
            }
            bytes.removeFirst(skip)
        }
        return OutputBytes.decode(bytes)
    }

    // MARK: - Matching

    /// The length in bytes of the longest needle at `i`, 0 when none starts
    /// there. Escape sequences and control characters between its bytes are
    /// passed over and covered too: a terminal, a log viewer or any reader
    /// that strips them (`grep --color` splits a match with them) would
    /// otherwise join the secret back up.
    private func match(_ bytes: UnsafeBufferPointer<UInt8>, at i: Int) -> Int {
        guard starts[Int(bytes[i])] else { return 0 }
        for needle in needles where bytes[i] == needle[0] {
            var j = i + 1, k = 1
            while k < needle.count && j < bytes.count {
                if bytes[j] == needle[k] {
                    j += 1
                    k += 1
                } else if let skip = Self.invisibleLength(bytes, at: j) {
                    j += skip
                } else {
                    break
                }
            }
            if k == needle.count { return j - i }
        }
        return 0
    }

    /// The most bytes one escape sequence is taken to span.
    static let longestSequence = 256

    /// The length of the escape sequence or control character at `i` (a
    /// C0 control but tab and newline, DEL, a C1 control, an ESC sequence:
    /// CSI, OSC/DCS/APC/PM/SOS up to its terminator, or ESC and one byte);
    /// nil when byte `i` is shown as it is.
    static func invisibleLength(_ bytes: UnsafeBufferPointer<UInt8>, at i: Int) -> Int? {
        let byte = bytes[i]
        switch byte {
        case 0x1B:
            guard i + 1 < bytes.count else { return 1 }
            switch bytes[i + 1] {
            case UInt8(ascii: "["):
                // Bounded, so that a flood of unfinished sequences costs a line linear time.
                let end = min(bytes.count, i + Self.longestSequence)
                var j = i + 2
                while j < end, !(0x40...0x7E).contains(bytes[j]) { j += 1 }
                return min(j + 1, end) - i
            case UInt8(ascii: "]"), UInt8(ascii: "P"), UInt8(ascii: "_"), UInt8(ascii: "^"), UInt8(ascii: "X"):
                let end = min(bytes.count, i + Self.longestSequence)
                var j = i + 2
                while j < end, bytes[j] != 0x07, !(bytes[j] == 0x1B && j + 1 < end && bytes[j + 1] == UInt8(ascii: "\\")) {
                    j += 1
                }
                return min(j + (j < end && bytes[j] == 0x1B ? 2 : 1), end) - i
            default:
                return 2
            }
        case 0x09, 0x0A: return nil
        case 0x00..<0x20, 0x7F: return 1
        case 0xC2 where i + 1 < bytes.count && (0x80...0x9F).contains(bytes[i + 1]): return 2
        default: return nil
        }
    }

    private func firstMatch(in bytes: UnsafeBufferPointer<UInt8>) -> Int? {
        var i = 0
        while i < bytes.count {
            if match(bytes, at: i) > 0 { return i }
            i += 1
        }
        return nil
    }

    /// `bytes[..<end]` with each run of bytes that some occurrence covers
    /// replaced by one `***` (occurrences are looked for in all of `bytes`).
    private func masked(_ bytes: UnsafeBufferPointer<UInt8>, upTo end: Int) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(end)
        var coverEnd = 0
        var inRun = false
        for i in 0..<end {
            coverEnd = max(coverEnd, i + match(bytes, at: i))
            if i < coverEnd {
                if !inRun { out.append(contentsOf: Self.replacement.utf8) }
                inRun = true
            } else {
                inRun = false
                out.append(bytes[i])
            }
        }
        return out
    }

    /// The masked run (bytes that occurrences cover, end to end) that holds byte `position`, if one does.
    private func coveredRun(in bytes: UnsafeBufferPointer<UInt8>, at position: Int) -> Range<Int>? {
        guard position < bytes.count else { return nil }
        var coverEnd = 0
        var runStart = 0
        var i = 0
        while i < bytes.count, i <= position || i < coverEnd {
            let length = match(bytes, at: i)
            if length > 0, i >= coverEnd { runStart = i }
            coverEnd = max(coverEnd, i + length)
            i += 1
        }
        return position < coverEnd && runStart <= position ? runStart..<coverEnd : nil
    }
}

/// Masked bytes back to text (they are valid UTF-8: each cut is on a character bound).
private enum OutputBytes {
    static func decode(_ bytes: [UInt8]) -> String { String(decoding: bytes, as: UTF8.self) }
}
