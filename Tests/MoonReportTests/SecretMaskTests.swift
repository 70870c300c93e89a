import Testing
import MoonEvents

/// `SecretMask`: every byte of every occurrence hidden, in one `***` per run.
struct SecretMaskTests {
    func mask(_ secrets: [String]) throws -> SecretMask { try #require(SecretMask(secrets: secrets)) }

    @Test func everyOccurrenceAnywhereInTheText() throws {
        let mask = try mask(["hunter22"])
        #expect(mask.mask("pw=hunter22, again hunter22.") == "pw=***, again ***.")
        #expect(mask.mask("xhunter22hunter22y") == "x***y")
        #expect(mask.mask("hunter2") == "hunter2")
        #expect(mask.contains("a hunter22") && !mask.contains("hunter2"))
    }

    /// A secret split by escape sequences or control characters (what
    /// `grep --color` writes) is hidden with them: a reader that strips
    /// them would join it back up. A tab or a space between its parts is shown.
    @Test func aSecretSplitByEscapesOrControlsIsHidden() throws {
        let mask = try mask(["hunter2secretXYZ"])
        #expect(mask.mask("token=hunter2\u{1B}[01;31m\u{1B}[Ksecret\u{1B}[m\u{1B}[KXYZ!") == "token=***!")
        #expect(mask.mask("a hunter2\u{8}secretXYZ b") == "a *** b")
        #expect(mask.mask("hunter2\u{0}secret\u{7F}XYZ") == "***")
        #expect(mask.mask("hunter2\u{1B}]0;title\u{7}secretXYZ") == "***")
        #expect(mask.mask("hunter2\u{1B}P1$r\u{1B}\\secretXYZ") == "***")
        #expect(mask.mask("hunter2\u{9B}secretXYZ") == "***")
        #expect(mask.mask("hunter2\tsecretXYZ") == "hunter2\tsecretXYZ")
        #expect(mask.mask("hunter2 secretXYZ") == "hunter2 secretXYZ")
        // An unfinished sequence is bounded: a flood of them costs linear time.
        let flood = String(repeating: "h\u{1B}[", count: 50_000)
        #expect(mask.mask(flood) == flood)
    }

    @Test func nothingToMaskIsNoMask() {
        #expect(SecretMask(secrets: []) == nil)
        #expect(SecretMask(secrets: ["", "abc"]) == nil, "shorter than 4 bytes: refused before it gets here")
    }

    @Test func overlappingSecretsAreHiddenWhole() throws {
        let mask = try mask(["abcdef", "defghi"])
        #expect(mask.mask("xxabcdefghixx") == "xx***xx")
        #expect(mask.mask("abcdef defghi") == "*** ***")
    }

    @Test func aSecretInsideAnotherIsHiddenWithIt() throws {
        let mask = try mask(["token", "token-and-more"])
        #expect(mask.mask("a token-and-more b token c") == "a *** b *** c")
        #expect(mask.mask("token-and-mor") == "***-and-mor")
    }

    @Test func aSecretOfSeveralLinesIsHiddenLineByLine() throws {
        let mask = try mask(["-----BEGIN KEY-----\r\nAAAAsecretline\nabc\n"])
        #expect(mask.mask("AAAAsecretline") == "***")
        #expect(mask.mask("-----BEGIN KEY-----") == "***")
        #expect(mask.mask("x abc y") == "x abc y", "a line shorter than 4 bytes is not masked on its own")
        #expect(mask.mask("key: -----BEGIN KEY-----\r\nAAAAsecretline\nabc\n.") == "key: ***.")
    }

    @Test func nonASCIITextStaysValid() throws {
        let mask = try mask(["clé-🔑-secrète"])
        #expect(mask.mask("é clé-🔑-secrète é") == "é *** é")
    }

    @Test func aSecretAcrossTheCutBetweenPartsOfALine() throws {
        let mask = try mask(["SECRET-VALUE"])
        for cut in 1..<40 {
            let line = String(repeating: "a", count: 20) + "SECRET-VALUE" + String(repeating: "b", count: 20)
            let parts = [String(line.prefix(cut)), String(line.dropFirst(cut))]
            var carry: [UInt8] = []
            let first = mask.mask(part: parts[0], continued: true, carry: &carry)
            let second = mask.mask(part: parts[1], continued: false, carry: &carry)
            let joined = (first ?? "") + (second ?? "")
            #expect(joined == String(repeating: "a", count: 20) + "***" + String(repeating: "b", count: 20), "cut at \(cut): \(joined)")
            #expect(carry.isEmpty)
        }
    }

    @Test func overlappingSecretsAcrossACut() throws {
        let mask = try mask(["abcdef", "efghij"])
        var carry: [UInt8] = []
        let parts = ["xxxxxxxxxxabcdefg", "hijyy"]
        let first = mask.mask(part: parts[0], continued: true, carry: &carry)
        let second = mask.mask(part: parts[1], continued: false, carry: &carry)
        #expect((first ?? "") + (second ?? "") == "xxxxxxxxxx***yy")
    }

    @Test func aFloodOfSecretsInPartsKeepsTheCarrySmall() throws {
        let mask = try mask(["abcdefgh"])
        let line = String(repeating: "abcdefgh", count: 1000)
        var carry: [UInt8] = []
        var shown = ""
        for k in 0..<8 {
            let part = String(line.dropFirst(k * 1000).prefix(1000))
            shown += mask.mask(part: part, continued: k < 7, carry: &carry) ?? ""
            #expect(carry.count < 16, "part \(k): \(carry.count) bytes carried")
        }
        #expect(!shown.contains("abcd") && !shown.contains("efgh") && shown.allSatisfy { $0 == "*" }, "\(shown)")
    }

    @Test func aLineBeingWrittenShowsNoStartOfASecret() throws {
        let mask = try mask(["SECRET-VALUE"])
        #expect(mask.mask(partial: "progress SECR", truncated: false) == "progress ")
        #expect(mask.mask(partial: "done SECRET-VALUE ok", truncated: false) == "done *** ok")
        #expect(mask.mask(partial: "ET-VALUE and on", truncated: true) == " and on")
        #expect(mask.mask(partial: "ET-VALUE and on", truncated: false) == "ET-VALUE and on")
    }

    @Test func aRotatedValueStaysMaskedWithTheNewOne() throws {
        let both = try mask(["old-token"]).adding(SecretMask(secrets: ["new-token"]))
        #expect(both.mask("old-token new-token") == "*** ***")
    }

    @Test func errorsAndOutputs() throws {
        let mask = try mask(["hunter22"])
        #expect(mask.mask(NodeError(.exit, "bad hunter22")).message == "bad ***")
        #expect(mask.mask([KeyValue("k", "v=hunter22")]) == [KeyValue("k", "v=***")])
    }
}
