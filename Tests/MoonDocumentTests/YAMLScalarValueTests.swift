import Testing
import MoonDocument

@Suite struct YAMLScalarValueTests {
    @Test(arguments: [
        ("", YAMLScalarValue.null), ("~", .null), ("null", .null), ("NULL", .null),
        ("true", .bool(true)), ("False", .bool(false)), ("yes", .string("yes")), ("on", .string("on")),
        ("0", .int(0)), ("-17", .int(-17)), ("+5", .int(5)), ("010", .int(10)),
        ("0x1F", .int(31)), ("0o17", .int(15)), ("0x", .string("0x")), ("0o8", .string("0o8")),
        ("1.5", .float(1.5)), ("-.5", .float(-0.5)), ("1e3", .float(1000)), ("1.", .float(1)),
        (".inf", .float(.infinity)), ("-.Inf", .float(-.infinity)), ("1e", .string("1e")),
        ("99999999999999999999", .float(1e20)), ("1_000", .string("1_000")), ("build", .string("build")),
        ("12:30", .string("12:30")), ("nULL", .string("nULL")), (".", .string(".")),
    ])
    func plainScalars(text: String, expected: YAMLScalarValue) {
        #expect(YAMLScalarValue.resolvePlain(text) == expected)
    }

    @Test func nan() {
        guard case .float(let value) = YAMLScalarValue.resolvePlain(".nan") else {
            Issue.record("not a float")
            return
        }
        #expect(value.isNaN)
    }

    @Test func quotedAndTaggedScalars() throws {
        let root = try load("a: '1'\nb: !!int 7\nc: !!float 2\nd: ! 3\ne: |\n  true\nf: !!bool x\ng: [1, 2]\n")
        #expect(root["a"]?.resolvedScalar == .string("1"))
        #expect(root["b"]?.resolvedScalar == .int(7))
        #expect(root["c"]?.resolvedScalar == .float(2))
        #expect(root["d"]?.resolvedScalar == .string("3"))
        #expect(root["e"]?.resolvedScalar == .string("true\n"))
        #expect(root["f"]?.resolvedScalar == .string("x"))
        #expect(root["g"]?.resolvedScalar == nil)
    }
}
