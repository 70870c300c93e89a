import Foundation
import Testing
@testable import MoonState

/// `WhyReport.make`: the cases that need a run moon did not finish, or a
/// store an older moon wrote, to reach end to end.
@Suite struct WhyReportTests {
    static let parts = FingerprintParts(command: "run (sh):\n  make", environment: [], vars: [], needs: [],
                                        files: [.init(path: "a.c", size: 1, hash: "1111111111111111")], patterns: ["sources: a.c"])

    func stored(unfinished: Bool, fingerprint: ContentHash = ContentHash.zero) -> StoredNode {
        let hash = unfinished ? ContentHash.zero : fingerprint
        return StoredNode(fingerprint: NodeFingerprint(command: .zero, environment: .zero, needs: .zero, sources: .zero,
                                                       manifest: Manifest(), combined: hash),
                          outputs: [], values: [], updatedAt: Date(timeIntervalSince1970: 1_700_000_000))
    }

    @Test func aRunThatStartedAndDidNotFinish() {
        var now = Self.parts
        now.files[0] = .init(path: "a.c", size: 2, hash: "2222222222222222")
        let report = WhyReport.make(node: "cc", hasSources: true, verdict: .runs(reason: "x"), staleness: [.unfinished],
                                    stored: stored(unfinished: true), recorded: (Self.parts, nil), current: now, lastAttempt: nil)
        #expect(report.state == "unfinished")
        #expect(report.headline.contains("but did not finish (moon was stopped or killed)"), "\(report.headline)")
        #expect(report.changes.count == 1)
    }

    @Test func partsAnOlderMoonOutdatedAreNotUsed() {
        var last = Self.parts
        last.fingerprint = String(repeating: "ab", count: 32)
        let record = stored(unfinished: false, fingerprint: ContentHash(hex: String(repeating: "cd", count: 32))!)
        let report = WhyReport.make(node: "cc", hasSources: true, verdict: .runs(reason: "x"), staleness: [.commandChanged],
                                    stored: record, recorded: (last, nil), current: Self.parts, lastAttempt: nil)
        #expect(report.state == "changed")
        #expect(report.changes.isEmpty)
        #expect(report.notes.first?.contains("command changed (its last success recorded no parts") == true, "\(report.notes)")
    }

    @Test func noStoreAndAMissingOutput() {
        let none = WhyReport.make(node: "cc", hasSources: true, verdict: .runs(reason: "x"), staleness: [.noStore], stored: nil,
                                  recorded: nil, current: nil, lastAttempt: nil)
        #expect(none.state == "no-store")
        var last = Self.parts
        last.fingerprint = String(repeating: "cd", count: 32)
        let record = stored(unfinished: false, fingerprint: ContentHash(hex: last.fingerprint)!)
        let missing = WhyReport.make(node: "cc", hasSources: true, verdict: .runs(reason: "x"), staleness: [.outputMissing("out/*.o")],
                                     stored: record, recorded: (last, nil), current: Self.parts, lastAttempt: nil)
        #expect(missing.state == "output-missing")
        #expect(missing.notes == ["its output is missing: 'out/*.o' (in 'generates') matches no file"])
    }
}
