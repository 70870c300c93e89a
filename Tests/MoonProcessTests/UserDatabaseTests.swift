import Glibc
import MoonSystem
import Testing

/// The local users and groups, read from the files (NSS crashes the static
/// build): what discovery asks of them is whether a group is its owner's alone.
@Suite struct UserDatabaseTests {
    static let passwd = """
        # a comment
        root:x:0:0:root:/root:/bin/bash
        ada:x:1000:1000:Ada,,,:/home/ada:/bin/bash
        bob:x:1001:1001::/home/bob:/bin/sh
        carol:x:1002:1001::/home/carol:/bin/sh
        +nisuser::::::
        broken line
        dave:x:notanumber:1003::/:/bin/sh

        """
    static let group = """
        root:x:0:
        ada:x:1000:
        bob:x:1001:
        staff:x:50:ada,bob
        shared:x:1004:ada
        """

    @Test func linesAreReadAndTheRestSkipped() {
        let users = UserDatabase.parseUsers(Self.passwd)
        #expect(users.map(\.name) == ["root", "ada", "bob", "carol"])
        #expect(users[1] == UserDatabase.User(name: "ada", uid: 1000, gid: 1000))
        let groups = UserDatabase.parseGroups(Self.group)
        #expect(groups.map(\.name) == ["root", "ada", "bob", "staff", "shared"])
        #expect(groups[3].members == ["ada", "bob"])
        #expect(groups[0].members.isEmpty)
    }

    @Test func theMachinesOwnFilesNameRoot() {
        #expect(UserDatabase.local().user(uid: 0)?.name == "root")
        #expect(UserDatabase.local(passwd: "/nonexistent", group: "/dev/null").users.isEmpty)
    }
}
