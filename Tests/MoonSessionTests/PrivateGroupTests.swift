import Glibc
@testable import MoonSession
import MoonSystem
import Testing

/// A group-writable file stays its owner's when the group is the owner's
/// private one: its primary group, with no other member and no other
/// user's primary group. Users the local files do not list have none.
@Suite struct PrivateGroupTests {
    let users = UserDatabase(
        users: [.init(name: "ada", uid: 1000, gid: 1000), .init(name: "bob", uid: 1001, gid: 1001),
                .init(name: "carol", uid: 1002, gid: 1001), .init(name: "dan", uid: 1003, gid: 1003)],
        groups: [.init(name: "ada", gid: 1000, members: []), .init(name: "bob", gid: 1001, members: []),
                 .init(name: "dan", gid: 1003, members: ["dan", "ada"]), .init(name: "staff", gid: 50, members: ["ada"])])

    @Test func theOwnersPrimaryGroupAloneIsPrivate() {
        #expect(DiscoveryTrust.isPrivateGroup(1000, of: 1000, in: users))
    }

    @Test func anotherMemberAnotherUsersPrimaryGroupOrAnUnknownUserIsNot() {
        #expect(!DiscoveryTrust.isPrivateGroup(1003, of: 1003, in: users))  // ada is a member
        #expect(!DiscoveryTrust.isPrivateGroup(1001, of: 1001, in: users))  // carol's primary group too
        #expect(!DiscoveryTrust.isPrivateGroup(50, of: 1000, in: users))    // not ada's primary group
        #expect(!DiscoveryTrust.isPrivateGroup(2000, of: 2000, in: users))  // not in the files
    }
}
