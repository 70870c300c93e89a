/// "Did you mean" suggestions: the closest candidate by Damerau–Levenshtein
/// distance (optimal string alignment: a swapped pair of letters costs 1),
/// if it is close enough to be a plausible typo.
public enum Suggestion {
    /// The candidate closest to `word`, or nil when none is within
    /// `max(1, word.count / 3)` edits (a case-only difference always counts as close).
    /// Ties go to the earlier candidate.
    public static func closest<S: Sequence>(to word: String, in candidates: S) -> String? where S.Element == String {
        let target = Array(word.lowercased().unicodeScalars)
        let limit = max(1, min(3, target.count / 3))
        var best: String?
        var bestDistance = Int.max
        for candidate in candidates where candidate != word {
            let other = Array(candidate.lowercased().unicodeScalars)
            if abs(other.count - target.count) > limit { continue }
            let d = distance(target, other, limit: min(limit, bestDistance - 1))
            if let d, d < bestDistance {
                best = candidate
                bestDistance = d
                if d == 0 { break }
            }
        }
        return best
    }

    /// ` (did you mean 'x'?)`, or an empty string: appended to messages.
    static func clause<S: Sequence>(for word: String, in candidates: S) -> String where S.Element == String {
        closest(to: word, in: candidates).map { " (did you mean '\($0)'?)" } ?? ""
    }

    /// The optimal-string-alignment distance, or nil when it exceeds `limit`.
    static func distance(_ a: [Unicode.Scalar], _ b: [Unicode.Scalar], limit: Int) -> Int? {
        guard limit >= 0 else { return nil }
        if a.isEmpty { return b.count <= limit ? b.count : nil }
        if b.isEmpty { return a.count <= limit ? a.count : nil }
        let width = b.count + 1
        var previous2 = [Int](repeating: 0, count: width)
        var previous = Array(0...b.count)
        var current = [Int](repeating: 0, count: width)
        for i in 1...a.count {
            current[0] = i
            var rowMin = i
            for j in 1...b.count {
                let cost = a[i - 1] == b[j - 1] ? 0 : 1
                var value = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
                if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] {
                    value = min(value, previous2[j - 2] + 1)
                }
                current[j] = value
                rowMin = min(rowMin, value)
            }
            if rowMin > limit { return nil }
            swap(&previous2, &previous)
            swap(&previous, &current)
        }
        let result = previous[b.count]
        return result <= limit ? result : nil
    }
}
