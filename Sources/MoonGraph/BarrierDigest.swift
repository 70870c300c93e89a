/// What a barrier's needs left, in one value: a dependent's fingerprint
/// reads it in place of each instance's outputs and values, so it costs
/// one entry, not one per instance, and still changes when any of them
/// does. The run (from what the instances left) and the forecast (from
/// what the store holds of them) make it alike.
public enum BarrierDigest {
    public typealias Need = (name: String, outputs: [(String, String)], values: [String])

    /// 32 hex digits: two 64-bit FNV-1a hashes of every need's name, sorted
    /// outputs and values, each field length-prefixed. Stable across runs
    /// and machines (not Swift's seeded `Hasher`).
    public static func of(_ needs: [Need]) -> String {
        var hash = Hash()
        hash.add(needs.count)
        for need in needs {
            hash.add(need.name)
            let outputs = need.outputs.sorted { $0.0 < $1.0 }
            hash.add(outputs.count)
            for (key, value) in outputs {
                hash.add(key)
                hash.add(value)
            }
            hash.add(need.values.count)
            for value in need.values { hash.add(value) }
        }
        return hash.hex
    }

    private struct Hash {
        var a: UInt64 = 0xcbf2_9ce4_8422_2325
        var b: UInt64 = 0x6c62_272e_07bb_0142
        static let prime: UInt64 = 0x0000_0100_0000_01b3

        mutating func add(_ byte: UInt8) {
            a = (a ^ UInt64(byte)) &* Self.prime
            b = (b ^ UInt64(byte ^ 0x5c)) &* Self.prime
        }

        mutating func add(_ number: Int) {
            var n = UInt64(bitPattern: Int64(number))
            for _ in 0..<8 { add(UInt8(truncatingIfNeeded: n)); n >>= 8 }
        }

        mutating func add(_ text: String) {
            add(text.utf8.count)
            for byte in text.utf8 { add(byte) }
        }

        var hex: String {
            [a, b].map { value in
                let hex = String(value, radix: 16)
                return String(repeating: "0", count: 16 - hex.utf8.count) + hex
            }.joined()
        }
    }
}
